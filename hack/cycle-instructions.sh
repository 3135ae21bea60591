#!/usr/bin/env bash
# Instructions per scheduling cycle with the WaitTimeEstimation gate off and
# on, counted by valgrind's callgrind: a ratio that does not depend on the
# machine's load, where wall time on 2 shared cores is noisy to about 10 %.
#
# For each scenario of Kueue's cycle benchmark (patch 0053) and each side it
# runs the patched tree's scheduler test binary under callgrind twice, with
# FEW and with MANY measured cycles (-test.benchtime Nx; both also build the
# state and run two warm-up cycles), and takes the difference of the two
# totals over MANY − FEW: the instructions of one cycle, everything the
# process executes for it included — the cycle, the admission goroutines,
# the garbage collector's marking and sweeping, and the untimed restore of
# the state between cycles (the same code on both sides: the estimator hears
# no events in this benchmark). Off is BenchmarkSchedulingCycle, on is
# BenchmarkSchedulingCycleWaitTimeEstimation (the estimator wired in, its
# results published; its background refresh is not running, as in the
# wall-time benchmarks: what a refresh costs is BenchmarkWaitTimeEstimatorRefresh).
# GOMAXPROCS=1 and GODEBUG=asyncpreemptoff=1 keep the run deterministic
# enough to repeat; cpu.rdtscp=off keeps the runtime from reading the clock
# with RDTSCP when a thread sleeps on a contended runtime lock, an
# instruction valgrind 3.19 does not know (the run dies of SIGILL).
#
# Usage: hack/cycle-instructions.sh [SCENARIO ...]
#   default scenarios: 10k-pending-1000-CQs-100-cohorts 100k-pending-1-CQ
# Environment: CYCLE_FEW (default 2), CYCLE_MANY (default 10), CYCLE_OUT
#   (default _output/cycle-instructions), KUEUE_DIR (default _output/kueue).
# Output: one line per scenario, name=value, and the callgrind files in
#   CYCLE_OUT. Slow: each run executes under callgrind, about 50× slower.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FEW=${CYCLE_FEW:-2}
MANY=${CYCLE_MANY:-10}
OUT=${CYCLE_OUT:-${ROOT}/_output/cycle-instructions}
[[ "${FEW}" =~ ^[1-9][0-9]*$ && "${MANY}" =~ ^[1-9][0-9]*$ && "${MANY}" -gt "${FEW}" ]] ||
  die "cycle-instructions: want 0 < CYCLE_FEW < CYCLE_MANY"
command -v valgrind >/dev/null || die "cycle-instructions: needs valgrind (apt-get install valgrind)"
[[ -f "${KUEUE_DIR}/pkg/scheduler/scheduler_waittime_bench_test.go" ]] ||
  die "cycle-instructions: ${KUEUE_DIR} has no cycle benchmarks: make patch"
scenarios=("$@")
[[ ${#scenarios[@]} -gt 0 ]] || scenarios=(10k-pending-1000-CQs-100-cohorts 100k-pending-1-CQ)

mkdir -p "${OUT}"
(cd "${KUEUE_DIR}" && GOWORK=off go test -c -o "${OUT}/scheduler.test" ./pkg/scheduler)

# groups FILE: the instructions of a callgrind file by group of functions,
# one "group count" line each. Callgrind's exclusive (self) counts are exact
# per function; its call graph is not, under Go's goroutine switches, so
# the groups are of functions, not of callers: the garbage collector's
# marking (scanning, greying, write barriers, assists), its sweeping and
# heap management, allocation, the estimator's own code
# (pkg/scheduler/waittime) and everything else.
groups() {
  callgrind_annotate --inclusive=no --threshold=100 "$1" | awk '
    match($0, /^ *[0-9,]+ +\([^)]*\) +[^ ]+:/) {
      n = $1; gsub(",", "", n)
      fn = substr($0, RLENGTH + 1); sub(/ \[.*\]$/, "", fn)
      g = "other"
      if (fn ~ /waittime/) g = "estimator"
      else if (fn ~ /runtime\.(scan[oO]bject|scanObjectsSmall|greyobject|findObject|gcDrain|markBits|scanblock|scanstack|scanframe|spanOf|typePointers|tryDeferToSpanScan|scanSpan|gcmarknewobject|wbBuf|bulkBarrier|gcAssist|markroot|gcFlushBgCredit|pageIndexOf|\(\*gcWork\))|gcWriteBarrier/) g = "gc-mark"
      else if (fn ~ /runtime\.(sweep|\(\*sweepLocked\)|\(\*mspan\)\.sweep|bgsweep|\(\*mheap\)|\(\*mcentral\)|freeSpan|\(\*gcBits|newMarkBits|newAllocBits)/) g = "gc-sweep-heap"
      else if (fn ~ /runtime\.(mallocgc|nextFreeFast|\(\*mcache\)|memclr|newobject|makeslice|growslice|newarray|heapSetType)/) g = "allocation"
      sum[g] += n
    }
    END { for (g in sum) printf "%s %.0f\n", g, sum[g] }'
}

# instructions SIDE SCENARIO CYCLES: the total instructions of one run.
instructions() {
  local side=$1 scenario=$2 cycles=$3 bench=BenchmarkSchedulingCycle file
  [[ "${side}" == on ]] && bench=BenchmarkSchedulingCycleWaitTimeEstimation
  file="${OUT}/${scenario}.${side}.${cycles}.callgrind"
  (cd "${KUEUE_DIR}/pkg/scheduler" &&
    GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off valgrind --tool=callgrind --callgrind-out-file="${file}" \
      "${OUT}/scheduler.test" -test.run '^$' -test.bench "^${bench}\$/^${scenario}\$" \
      -test.benchtime "${cycles}x" -test.cpu 1 > "${file}.log" 2>&1) ||
    die "cycle-instructions: ${side} ${scenario} ${cycles}x failed: see ${file}.log"
  grep -q '^PASS' "${file}.log" || die "cycle-instructions: ${side} ${scenario} ${cycles}x did not pass: see ${file}.log"
  awk '$1 == "totals:" { print $2 }' "${file}"
}

for scenario in "${scenarios[@]}"; do
  declare -A per_cycle=() no_gc=()
  for side in off on; do
    few=$(instructions "${side}" "${scenario}" "${FEW}")
    many=$(instructions "${side}" "${scenario}" "${MANY}")
    per_cycle[${side}]=$(( (many - few) / (MANY - FEW) ))
    echo "cycle-instructions/${scenario}/${side}=${per_cycle[${side}]} instructions/cycle (${FEW}x ${few}, ${MANY}x ${many})"
    # The same difference by group of functions, and without the garbage
    # collector's groups: a collection marks the whole heap at once, every
    # few cycles, so over MANY − FEW cycles its count depends on where the
    # collections fell; the rest is the cycle's own work.
    join -a1 -a2 -e 0 -o 0,1.2,2.2 \
      <(groups "${OUT}/${scenario}.${side}.${FEW}.callgrind" | sort) \
      <(groups "${OUT}/${scenario}.${side}.${MANY}.callgrind" | sort) > "${OUT}/${scenario}.${side}.groups"
    awk -v s="${scenario}" -v side="${side}" -v d=$((MANY - FEW)) \
      '{ printf "cycle-instructions/%s/%s/%s=%.0f instructions/cycle\n", s, side, $1, ($3 - $2) / d }' \
      "${OUT}/${scenario}.${side}.groups"
    no_gc[${side}]=$(awk -v d=$((MANY - FEW)) '$1 !~ /^gc-/ { n += ($3 - $2) / d } END { printf "%.0f", n }' \
      "${OUT}/${scenario}.${side}.groups")
  done
  awk -v s="${scenario}" -v off="${per_cycle[off]}" -v on="${per_cycle[on]}" \
    -v off_no_gc="${no_gc[off]}" -v on_no_gc="${no_gc[on]}" 'BEGIN {
      printf "cycle-instructions/%s/on-off=%.4f ratio\n", s, on / off
      printf "cycle-instructions/%s/on-off-without-gc=%.4f ratio\n", s, on_no_gc / off_no_gc
    }'
done
