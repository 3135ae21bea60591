#!/usr/bin/env bash
# Measures what the wait time estimator costs Kueue, side by side with the
# unpatched v0.19.2 in one run, and prints one table of ratios.
#
# Three builds are compared:
#   pristine     Kueue v0.19.2 as released (hack/kueue-src.sh into
#                _output/bench/pristine) plus the benchmark files that use
#                only upstream API, copied from the patched tree;
#   patched-off  the patched tree, WaitTimeEstimation gate off (the default);
#   patched-on   the patched tree, gate on and the real estimator wired in.
# The patched tree must hold the benchmark files the patch series adds:
#   pkg/scheduler/scheduler_cycle_bench_test.go           (upstream API)
#   pkg/scheduler/scheduler_waittime_bench_test.go        (estimator on)
#   pkg/visibility/storage/pending_workloads_bench_test.go (upstream API)
#   pkg/visibility/storage/pending_workloads_waittime_bench_test.go
#   pkg/cache/queue/cluster_queue_bench_test.go            (upstream API)
# and the minimalkueue that wires the estimator when its --feature-gates
# enables WaitTimeEstimation.
#
# Every benchmark binary is built once; then each round runs every side
# once, in an order that rotates between rounds, so that the machine's
# drift (2 shared cores here) falls on all sides alike. Benchmarks run with
# GOMAXPROCS=1 (-cpu 1): the time is then the cycle's whole CPU work, GC
# included, rather than what a second core (busy with other work on this
# machine) happens to absorb; the scheduler's cycle is sequential apart from
# the admission goroutines, which the benchmark waits for inside the timer.
# benchstat (pinned below) gives the medians, 95% intervals and p-values.
#
# Rows and goals (issue 7):
#   cycle       schedule() of one cycle; ratio patched-on / patched-off ≤ 1.02
#   visibility  GET of 1 000 of 10 000 pending workloads; patched-on /
#               pristine ≤ 1.20; bytes and allocations reported
#   snapshot    ClusterQueue.Snapshot of 100 000 pending workloads (the
#               ordered list behind visibility and the estimator's refresh)
#               and its copy under the ClusterQueue's read lock; patched-off
#               / pristine reported (issue 14)
#   forecast    pkg/forecast for 10 000 pending workloads ≤ 5 ms
#   memory      heap the estimator keeps per pending workload ≤ 200 B
#   refresh     the estimator's background refresh (off the cycle), reported
#   harness     Kueue's test/performance/scheduler (runner + minimalkueue on
#               envtest), pristine vs patched with the gate on: wall time and
#               average time to admission per class ≤ 1.02; CPU reported.
#               With BENCH_HARNESS_OFF=1 the patched minimalkueue also runs
#               with the gate off, between the other two, so the Kueue-side
#               patches and the gate's own cost show apart (column
#               patched-off; on/off in the note).
#               Its baseline configuration (15 000 workloads, ~6 min a run)
#               does not fit this budget: the run uses it with every
#               workload set's count divided by BENCH_HARNESS_SCALE (5:
#               3 000 workloads, ~80 s a run).
# A ratio over its goal is MISS, or "MISS (n.s.)" when benchstat finds the
# difference not significant (p ≥ 0.05): within this machine's noise.
#
# Usage: hack/bench.sh [-n COUNT] [-r HARNESS_RUNS] [--no-harness|--harness-only] [--quick] [--report-only] [TREE]
#   TREE            patched Kueue tree (default _output/kueue; it builds with
#                   its own go.mod, GOWORK=off, as the pristine side does)
#   -n COUNT        rounds of the interleaved Go benchmarks (default 8)
#   -r RUNS         harness runs per side (default 2)
#   --no-harness    skip Kueue's performance harness
#   --quick         a smoke run: 2 rounds, 1 harness run per side
#   --harness-only  only Kueue's performance harness (no Go benchmarks)
#   --report-only   no runs: the table again from $BENCH_OUT's last results
# Environment: BENCH_COUNT, BENCH_HARNESS_RUNS, BENCH_HARNESS_SCALE, BENCH_HARNESS_OFF,
#   BENCH_OUT (default _output/bench), KUBEBUILDER_ASSETS (default
#   bin/k8s/1.36.0, built by make envtest).
# Output: the table on stdout and in $BENCH_OUT/results.{txt,md}; raw
#   benchmark output in $BENCH_OUT/raw, benchstat's reports in
#   $BENCH_OUT/benchstat.txt, harness artifacts in $BENCH_OUT/harness.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

BENCHSTAT_VERSION=v0.0.0-20260908200009-22c9c6c9d4da
COUNT=${BENCH_COUNT:-8}
HARNESS_RUNS=${BENCH_HARNESS_RUNS:-2}
HARNESS_SCALE=${BENCH_HARNESS_SCALE:-5}
HARNESS_OFF=${BENCH_HARNESS_OFF:-0}
HARNESS=1
REPORT_ONLY=0
GO_BENCH=1
OUT=${BENCH_OUT:-${ROOT}/_output/bench}
TREE=${KUEUE_DIR}
export KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS:-${ROOT}/bin/k8s/1.36.0}

while [[ $# -gt 0 ]]; do
  case "$1" in
    -n) COUNT=$2; shift 2 ;;
    -r) HARNESS_RUNS=$2; shift 2 ;;
    --no-harness) HARNESS=0; shift ;;
    --quick) COUNT=2; HARNESS_RUNS=1; shift ;;
    --report-only) REPORT_ONLY=1; shift ;;
    --harness-only) GO_BENCH=0; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "bench: unknown flag $1" ;;
    *) TREE=$1; shift ;;
  esac
done
[[ "${COUNT}" =~ ^[1-9][0-9]*$ ]] || die "bench: COUNT must be a positive integer"
[[ "${HARNESS_RUNS}" =~ ^[1-9][0-9]*$ ]] || die "bench: HARNESS_RUNS must be a positive integer"

[[ -f "${TREE}/go.mod" ]] && grep -q '^module sigs.k8s.io/kueue$' "${TREE}/go.mod" \
  || die "bench: ${TREE} is not a Kueue tree (run make patch)"
TREE=$(cd "${TREE}" && pwd -P)
for f in pkg/scheduler/scheduler_cycle_bench_test.go pkg/scheduler/scheduler_waittime_bench_test.go \
  pkg/visibility/storage/pending_workloads_bench_test.go pkg/visibility/storage/pending_workloads_waittime_bench_test.go \
  pkg/cache/queue/cluster_queue_bench_test.go; do
  [[ -f "${TREE}/${f}" ]] || die "bench: ${TREE} has no ${f}: apply the patch series that adds the benchmarks"
done
grep -q 'feature-gates' "${TREE}/test/performance/scheduler/minimalkueue/main.go" \
  || die "bench: ${TREE}'s minimalkueue takes no --feature-gates: apply the patch series"
if [[ "${HARNESS}" == 1 ]]; then
  [[ -x "${KUBEBUILDER_ASSETS}/kube-apiserver" && -x "${KUBEBUILDER_ASSETS}/etcd" ]] \
    || die "bench: no envtest binaries in ${KUBEBUILDER_ASSETS} (make envtest), or pass --no-harness"
fi

PRISTINE=${OUT}/pristine
BIN=${OUT}/bin
RAW=${OUT}/raw
H=${OUT}/harness
start=$(date +%s)
log() { printf 'bench: [%4ss] %s\n' "$(( $(date +%s) - start ))" "$*" >&2; }
benchstat_dir=${ROOT}/bin/tools/benchstat-${BENCHSTAT_VERSION}
BENCHSTAT=${benchstat_dir}/benchstat
if [[ ! -x "${BENCHSTAT}" ]]; then
  log "installing benchstat ${BENCHSTAT_VERSION} into ${benchstat_dir}"
  (cd / && GOWORK=off GOBIN="${benchstat_dir}" go install "golang.org/x/perf/cmd/benchstat@${BENCHSTAT_VERSION}")
fi
if [[ "${REPORT_ONLY}" == 1 ]]; then
  [[ -d "${RAW}" ]] || die "bench: no results in ${RAW} to report"
  [[ -d "${H}" ]] || HARNESS=0
fi

# measure: builds both sides and runs every benchmark into ${RAW} and ${H}.
measure() {
  mkdir -p "${OUT}"
  rm -rf "${BIN}" "${RAW}" "${H}"
  mkdir -p "${BIN}" "${RAW}"
  {
    echo "hack/bench.sh: ${COUNT} interleaved rounds, -cpu 1; harness $([[ "${HARNESS}" == 1 ]] && echo "${HARNESS_RUNS} run(s) per side at 1/${HARNESS_SCALE} of the baseline" || echo skipped)"
    echo "patched tree: ${TREE}; $(go version | cut -d' ' -f3-); $(nproc) CPUs; $(date -u +%Y-%m-%dT%H:%MZ)"
  } > "${OUT}/run.txt"

  # --- tools and builds -------------------------------------------------------


  log "pristine Kueue ${KUEUE_VERSION} into ${PRISTINE}, with the upstream-API benchmark files of ${TREE}"
  "${ROOT}/hack/kueue-src.sh" "${PRISTINE}" >/dev/null
  cp "${TREE}/pkg/scheduler/scheduler_cycle_bench_test.go" "${PRISTINE}/pkg/scheduler/"
  cp "${TREE}/pkg/visibility/storage/pending_workloads_bench_test.go" "${PRISTINE}/pkg/visibility/storage/"
  cp "${TREE}/pkg/cache/queue/cluster_queue_bench_test.go" "${PRISTINE}/pkg/cache/queue/"

  # Both sides must build against the same dependency versions, or the ratio
  # measures them too.
  deps() { go list -test -deps -f '{{with .Module}}{{.Path}} {{.Version}}{{end}}' ./pkg/scheduler ./pkg/visibility/storage | sort -u; }
  if ! diff <(cd "${PRISTINE}" && GOWORK=off deps) <(cd "${TREE}" && GOWORK=off deps) > "${OUT}/deps.diff"; then
    log "WARNING: the two sides build with different dependency versions (see ${OUT}/deps.diff)"
  fi

  if [[ "${GO_BENCH}" == 1 ]]; then
    log "building the benchmark binaries"
    (cd "${PRISTINE}" && export GOWORK=off &&
      go test -c -o "${BIN}/scheduler-pristine.test" ./pkg/scheduler &&
      go test -c -o "${BIN}/storage-pristine.test" ./pkg/visibility/storage &&
      go test -c -o "${BIN}/queue-pristine.test" ./pkg/cache/queue)
    (cd "${TREE}" && export GOWORK=off &&
      go test -c -o "${BIN}/scheduler-patched.test" ./pkg/scheduler &&
      go test -c -o "${BIN}/storage-patched.test" ./pkg/visibility/storage &&
      go test -c -o "${BIN}/queue-patched.test" ./pkg/cache/queue)
    (cd "${ROOT}" && export GOWORK=off &&
      go test -c -o "${BIN}/forecast.test" ./pkg/forecast &&
      go test -c -o "${BIN}/estimator.test" ./pkg/estimator)

    # run BINARY PKGDIR BENCH-REGEXP BENCHTIME [extra flags]: one benchmark run.
    run() {
      local bin=$1 dir=$2 re=$3 bt=$4
      shift 4
      (cd "${dir}" && "${bin}" -test.run '^$' -test.bench "${re}" -test.benchtime "${bt}" \
        -test.benchmem -test.cpu 1 -test.count 1 "$@" 2>&1) \
        | grep -v 'feature_gate.go' || true
    }

    # --- interleaved rounds: pristine, patched-off, patched-on ------------------

    # The patched-on benchmarks carry the names of the others, for benchstat.
    as_off() { sed -e 's/^BenchmarkSchedulingCycleWaitTimeEstimation\//BenchmarkSchedulingCycle\//' \
      -e 's/^BenchmarkPendingWorkloadsInLQWaitTimeEstimation\//BenchmarkPendingWorkloadsInLQ\//'; }

    side() {
      local side=$1
      case "${side}" in
        pristine)
          run "${BIN}/scheduler-pristine.test" "${PRISTINE}/pkg/scheduler" '^BenchmarkSchedulingCycle$' 10x >> "${RAW}/cycle-pristine.txt"
          run "${BIN}/storage-pristine.test" "${PRISTINE}/pkg/visibility/storage" '^BenchmarkPendingWorkloadsInLQ$' 20x >> "${RAW}/visibility-pristine.txt"
          run "${BIN}/queue-pristine.test" "${PRISTINE}/pkg/cache/queue" '^BenchmarkClusterQueueSnapshot$' 5x >> "${RAW}/snapshot-pristine.txt" ;;
        off)
          run "${BIN}/scheduler-patched.test" "${TREE}/pkg/scheduler" '^BenchmarkSchedulingCycle$' 10x >> "${RAW}/cycle-off.txt"
          run "${BIN}/storage-patched.test" "${TREE}/pkg/visibility/storage" '^BenchmarkPendingWorkloadsInLQ$' 20x >> "${RAW}/visibility-off.txt"
          run "${BIN}/queue-patched.test" "${TREE}/pkg/cache/queue" '^BenchmarkClusterQueueSnapshot$' 5x >> "${RAW}/snapshot-off.txt" ;;
        on)
          run "${BIN}/scheduler-patched.test" "${TREE}/pkg/scheduler" '^BenchmarkSchedulingCycleWaitTimeEstimation$' 10x | as_off >> "${RAW}/cycle-on.txt"
          run "${BIN}/storage-patched.test" "${TREE}/pkg/visibility/storage" '^BenchmarkPendingWorkloadsInLQWaitTimeEstimation$' 20x | as_off >> "${RAW}/visibility-on.txt" ;;
      esac
    }

    sides=(pristine off on)
    for ((i = 0; i < COUNT; i++)); do
      log "round $((i + 1))/${COUNT}"
      for ((j = 0; j < 3; j++)); do
        side "${sides[$(((i + j) % 3))]}"
      done
    done

    log "the estimator alone: forecast, refresh, per-call costs, memory"
    for ((i = 0; i < COUNT; i++)); do
      run "${BIN}/forecast.test" "${ROOT}/pkg/forecast" '^BenchmarkForecast10000Pending$' 1s >> "${RAW}/forecast.txt"
    done
    run "${BIN}/estimator.test" "${ROOT}/pkg/estimator" \
      '^(BenchmarkRefresh10000PendingOneClusterQueue|BenchmarkPendingWorkloadsInfo10000|BenchmarkInadmissibleCondition|BenchmarkObserveCycle|BenchmarkObserveAdmission)$' \
      1s -test.count 3 >> "${RAW}/estimator.txt"
    run "${BIN}/estimator.test" "${ROOT}/pkg/estimator" '^BenchmarkRetainedMemoryPerPendingWorkload$' 3x >> "${RAW}/estimator.txt"
    run "${BIN}/scheduler-patched.test" "${TREE}/pkg/scheduler" \
      '^BenchmarkWaitTimeEstimatorRefresh/(10k-pending-1000-CQs-100-cohorts|100k-pending-1-CQ)$' 3x -test.count 3 >> "${RAW}/refresh.txt"

    if grep -l -e '^--- FAIL' -e '^FAIL' "${RAW}"/*.txt >/dev/null 2>&1; then
      log "WARNING: some benchmarks failed: $(grep -l -e '^--- FAIL' -e '^FAIL' "${RAW}"/*.txt | tr '\n' ' ')"
    fi
  fi

  # --- Kueue's performance harness ---------------------------------------------

  harness_config=${H}/generator.yaml
  if [[ "${HARNESS}" == 1 ]]; then
    log "building Kueue's performance harness (runner and minimalkueue) on both sides"
    mkdir -p "${H}" "${BIN}/pristine" "${BIN}/on"
    (cd "${PRISTINE}" && GOWORK=off go build -o "${BIN}/runner" ./test/performance/scheduler/runner &&
      GOWORK=off go build -o "${BIN}/pristine/minimalkueue" ./test/performance/scheduler/minimalkueue)
    (cd "${TREE}" && GOWORK=off go build -o "${BIN}/minimalkueue-patched" ./test/performance/scheduler/minimalkueue)
    gated_minimalkueue "${BIN}/minimalkueue-patched" "${BIN}/on"
    if [[ "${HARNESS_OFF}" == 1 ]]; then
      mkdir -p "${BIN}/off"
      printf '#!/bin/sh\nexec "%s" --feature-gates=WaitTimeEstimation=false "$@"\n' "${BIN}/minimalkueue-patched" > "${BIN}/off/minimalkueue"
      chmod +x "${BIN}/off/minimalkueue"
    fi
    scaled_baseline "${PRISTINE}" "${HARNESS_SCALE}" "${harness_config}"

    harness_run() {
      local side=$1 n=$2 dir=${H}/$1-$2 tree=${PRISTINE}
      [[ "${side}" != pristine ]] && tree=${TREE}
      mkdir -p "${dir}"
      if "${BIN}/runner" --o "${dir}" --crds="${tree}/config/components/crd/bases" \
        --generatorConfig="${harness_config}" --minimalKueue="${BIN}/${side}/minimalkueue" > "${dir}/runner.log" 2>&1 \
        && [[ -f "${dir}/summary.yaml" && -f "${dir}/minimalkueue.stats.yaml" ]]; then
        return 0
      fi
      log "harness run ${side}-${n} failed: see ${dir}/runner.log"
      return 0
    }
    for ((i = 1; i <= HARNESS_RUNS; i++)); do
      if ((i % 2)); then order=(pristine on); else order=(on pristine); fi
      [[ "${HARNESS_OFF}" == 1 ]] && order=("${order[0]}" off "${order[1]}")
      for s in "${order[@]}"; do
        log "harness run ${i}/${HARNESS_RUNS}: ${s}"
        harness_run "${s}" "${i}"
      done
    done
  fi

}
[[ "${REPORT_ONLY}" == 1 ]] || measure

# --- the table ----------------------------------------------------------------

log "comparing"
{
  echo "## scheduling cycle: pristine, patched-off, patched-on (vs pristine)"
  "${BENCHSTAT}" pristine="${RAW}/cycle-pristine.txt" patched-off="${RAW}/cycle-off.txt" patched-on="${RAW}/cycle-on.txt" || true
  echo
  echo "## scheduling cycle: patched-on vs patched-off"
  "${BENCHSTAT}" patched-off="${RAW}/cycle-off.txt" patched-on="${RAW}/cycle-on.txt" || true
  echo
  echo "## visibility: pristine, patched-off, patched-on (vs pristine)"
  "${BENCHSTAT}" pristine="${RAW}/visibility-pristine.txt" patched-off="${RAW}/visibility-off.txt" patched-on="${RAW}/visibility-on.txt" || true
  echo
  echo "## ClusterQueue.Snapshot: pristine, patched (gate off)"
  "${BENCHSTAT}" pristine="${RAW}/snapshot-pristine.txt" patched-off="${RAW}/snapshot-off.txt" || true
  echo
  echo "## the estimator alone"
  "${BENCHSTAT}" "${RAW}/forecast.txt" "${RAW}/estimator.txt" "${RAW}/refresh.txt" || true
} > "${OUT}/benchstat.txt" 2>&1

# bstat BASE NEW: "unit<TAB>name<TAB>base-median<TAB>new-median<TAB>p" per
# benchmark; bstat FILE: "unit<TAB>name<TAB>median".
bstat() {
  if [[ $# == 2 ]]; then
    "${BENCHSTAT}" -format csv base="$1" new="$2" 2>/dev/null || true
  else
    "${BENCHSTAT}" -format csv "$1" 2>/dev/null || true
  fi | awk -F, -v two=$(( $# == 2 )) '
    $1 == "" && $2 != "" && $3 == "CI" { unit = $2; next }
    $1 == "" || $1 == "geomean" || NF < 3 { next }
    two { p = $7; sub(/^p=/, "", p); sub(/ .*/, "", p); print unit "\t" $1 "\t" $2 "\t" $4 "\t" p; next }
    { print unit "\t" $1 "\t" $2 }'
}
# pick UNIT NAME: the fields after unit and name of bstat's line for them.
pick() { awk -F'\t' -v u="$1" -v n="$2" '$1 == u && $2 == n { sub(/^[^\t]*\t[^\t]*\t/, ""); print; exit }'; }

bstat "${RAW}/cycle-off.txt" "${RAW}/cycle-on.txt" > "${OUT}/cycle-on-vs-off.tsv"
bstat "${RAW}/cycle-pristine.txt" "${RAW}/cycle-on.txt" > "${OUT}/cycle-on-vs-pristine.tsv"
bstat "${RAW}/visibility-pristine.txt" "${RAW}/visibility-on.txt" > "${OUT}/visibility-on-vs-pristine.tsv"
bstat "${RAW}/visibility-pristine.txt" "${RAW}/visibility-off.txt" > "${OUT}/visibility-off-vs-pristine.tsv"
bstat "${RAW}/snapshot-pristine.txt" "${RAW}/snapshot-off.txt" > "${OUT}/snapshot-off-vs-pristine.tsv"
cat "${RAW}/forecast.txt" "${RAW}/estimator.txt" "${RAW}/refresh.txt" > "${RAW}/estimator-all.txt" 2>/dev/null || true
bstat "${RAW}/estimator-all.txt" > "${OUT}/estimator.tsv"

# Rows: scenario, pristine, patched-off, patched-on, ratio, p, goal, result.
rows=${OUT}/rows.tsv
: > "${rows}"
# row SCENARIO PRISTINE OFF ON RATIO P GOAL RESULT; a row without values
# (benchmarks not run) is left out.
row() {
  [[ "${2:--}${3:--}${4:--}" == "---" ]] && return 0
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >> "${rows}"
}

# fmt UNIT VALUE: a human value.
fmt() {
  awk -v u="$1" -v v="$2" 'BEGIN {
    if (v == "") { print "-"; exit }
    if (u == "sec/op") {
      if (v >= 1) printf "%.3f s\n", v; else if (v >= 1e-3) printf "%.2f ms\n", v * 1e3; else if (v >= 1e-6) printf "%.2f us\n", v * 1e6; else printf "%.0f ns\n", v * 1e9
    } else if (u == "B/op" || u ~ /B\/pending/) {
      if (v >= 1048576) printf "%.1f MiB\n", v / 1048576; else if (v >= 10240) printf "%.1f KiB\n", v / 1024; else printf "%.0f B\n", v
    } else if (v >= 1000) printf "%.0f\n", v; else printf "%.4g\n", v
  }'
}
# verdict RATIO GOAL P: PASS, MISS or MISS (n.s.); "-" without a goal.
verdict() {
  awk -v r="$1" -v g="$2" -v p="$3" 'BEGIN {
    if (g == "" || r == "") { print "-"; exit }
    if (r + 0 <= g + 0) { print "PASS"; exit }
    if (p != "" && p + 0 >= 0.05) print "MISS (n.s.)"; else print "MISS"
  }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print ""; else printf "%.3f\n", a / b }'; }

# compare_row LABEL NAME UNIT GOAL BASE TSV OTHER_TSV: one benchmark on the
# three sides. TSV is benchstat's "patched-on vs BASE" (BASE, on, p) and
# OTHER_TSV holds the third side in its first (off) or second (pristine)
# column; the judged ratio is on/BASE.
compare_row() {
  local label=$1 name=$2 unit=$3 goal=$4 base=$5 tsv=$6 other_tsv=$7
  local b on p third pristine off r
  IFS=$'\t' read -r b on p < <(pick "${unit}" "${name}" < "${OUT}/${tsv}") || true
  if [[ "${base}" == off ]]; then
    IFS=$'\t' read -r third _ _ < <(pick "${unit}" "${name}" < "${OUT}/${other_tsv}") || true
    pristine=${third:-} off=${b:-}
  else
    IFS=$'\t' read -r _ third _ < <(pick "${unit}" "${name}" < "${OUT}/${other_tsv}") || true
    pristine=${b:-} off=${third:-}
  fi
  r=$(ratio "${on:-}" "${b:-}")
  row "${label}" "$(fmt "${unit}" "${pristine}")" "$(fmt "${unit}" "${off}")" "$(fmt "${unit}" "${on:-}")" \
    "${r:+${r} on/${base}}" "${p:--}" "${goal:+<= ${goal}}" "$(verdict "${r}" "${goal}" "${p:-}")"
}
cycle_row() { compare_row "$1" "$2" "${3:-sec/op}" "${4-1.02}" off cycle-on-vs-off.tsv cycle-on-vs-pristine.tsv; }
visibility_row() { compare_row "$1" "$2" "${3:-sec/op}" "${4-1.20}" pristine visibility-on-vs-pristine.tsv visibility-off-vs-pristine.tsv; }
# single_row LABEL UNIT NAME GOAL [SCALE NOTE]: one-sided, absolute goal.
single_row() {
  local label=$1 unit=$2 name=$3 goal=$4 v result="-" shown
  v=$(pick "${unit}" "${name}" < "${OUT}/estimator.tsv" | cut -f1)
  shown=$(fmt "${unit}" "${v}")
  if [[ -n "${goal}" && -n "${v}" ]]; then
    result=$(awk -v v="${v}" -v g="${goal}" 'BEGIN { print (v + 0 <= g + 0) ? "PASS" : "MISS" }')
  fi
  row "${label}" "" "" "${shown}" "" "${5:-}" "${goal:+<= $(fmt "${unit}" "${goal}")}" "${result}"
}

cycle_row "cycle: 10k pending, 1000 CQs, 100 cohorts" "SchedulingCycle/10k-pending-1000-CQs-100-cohorts"
cycle_row "cycle: 100k pending, 1 CQ" "SchedulingCycle/100k-pending-1-CQ"
cycle_row "cycle: 100k pending, 1 CQ, no LQ metrics" "SchedulingCycle/100k-pending-1-CQ-no-LQ-metrics"
cycle_row "  allocs/op, 10k pending, 1000 CQs" "SchedulingCycle/10k-pending-1000-CQs-100-cohorts" allocs/op ""
cycle_row "  B/op, 10k pending, 1000 CQs" "SchedulingCycle/10k-pending-1000-CQs-100-cohorts" B/op ""
cycle_row "  allocs/op, 100k pending, 1 CQ" "SchedulingCycle/100k-pending-1-CQ" allocs/op ""
cycle_row "  B/op, 100k pending, 1 CQ" "SchedulingCycle/100k-pending-1-CQ" B/op ""
visibility_row "visibility: GET 1000 of 10000 pending" "PendingWorkloadsInLQ/Get"
visibility_row "visibility: GET + JSON encoding" "PendingWorkloadsInLQ/GetJSON"
visibility_row "  B/op, GET + JSON" "PendingWorkloadsInLQ/GetJSON" B/op ""
visibility_row "  allocs/op, GET + JSON" "PendingWorkloadsInLQ/GetJSON" allocs/op ""
# snapshot_row LABEL NAME [UNIT]: pristine and patched-off (the same code
# as patched-on here), their ratio, no goal.
snapshot_row() {
  local label=$1 name=$2 unit=${3:-sec/op} b off p r
  IFS=$'\t' read -r b off p < <(pick "${unit}" "${name}" < "${OUT}/snapshot-off-vs-pristine.tsv") || true
  r=$(ratio "${off:-}" "${b:-}")
  row "${label}" "$(fmt "${unit}" "${b:-}")" "$(fmt "${unit}" "${off:-}")" "" "${r:+${r} off/pristine}" "${p:--}" "" "-"
}
snapshot_row "snapshot: ClusterQueue.Snapshot, 100k pending" "ClusterQueueSnapshot/100k-pending"
snapshot_row "  its copy under the ClusterQueue's read lock" "ClusterQueueSnapshot/100k-pending-copy-under-lock"
snapshot_row "  allocs/op, Snapshot of 100k pending" "ClusterQueueSnapshot/100k-pending" allocs/op
snapshot_row "snapshot: ClusterQueue.Snapshot, 10k pending" "ClusterQueueSnapshot/10k-pending"
single_row "forecast: 10k pending, 1 CQ (pkg/forecast)" sec/op "Forecast10000Pending" 0.005
single_row "memory kept per pending workload" B/pending "RetainedMemoryPerPendingWorkload" 200 \
  "events $(fmt B/pending "$(pick events-B/pending RetainedMemoryPerPendingWorkload < "${OUT}/estimator.tsv")"), results $(fmt B/pending "$(pick results-B/pending RetainedMemoryPerPendingWorkload < "${OUT}/estimator.tsv")")"
sort_ms=$(pick sec/op PendingWorkloadsInfo10000 < "${OUT}/estimator.tsv")
single_row "refresh: 1 CQ, 10k pending (whole pass)" sec/op "Refresh10000PendingOneClusterQueue" "" \
  "of which Kueue's pending list sort $(fmt sec/op "${sort_ms}")"
single_row "  per unadmitted head: InadmissibleCondition" sec/op "InadmissibleCondition" ""
single_row "  per admission: ObserveAdmission" sec/op "ObserveAdmission" ""
single_row "  per cycle: ObserveCycle" sec/op "ObserveCycle" ""
# The estimator's calls in one 10k-pending cycle from their measured costs
# (900 unadmitted heads, 100 admissions, one cycle): a low-noise
# cross-check of the cycle ratio.
calls=$(awk -F'\t' '$1 == "sec/op" { v[$2] = $3 } END {
  if (("InadmissibleCondition" in v) && ("ObserveAdmission" in v) && ("ObserveCycle" in v)) printf "%.6f\n", 900 * v["InadmissibleCondition"] + 100 * v["ObserveAdmission"] + v["ObserveCycle"] }' "${OUT}/estimator.tsv")
off10k=$(pick sec/op "SchedulingCycle/10k-pending-1000-CQs-100-cohorts" < "${OUT}/cycle-on-vs-off.tsv" | cut -f1)
if [[ -n "${calls}" && -n "${off10k}" ]]; then
  r=$(awk -v c="${calls}" -v o="${off10k}" 'BEGIN { printf "%.3f\n", 1 + c / o }')
  row "  10k cycle: estimator calls from per-call costs" "" "" "$(fmt sec/op "${calls}")" "${r} est." \
    "900 x InadmissibleCondition + 100 x ObserveAdmission + ObserveCycle" "<= 1.02" "$(verdict "${r}" 1.02 "")"
fi
for s in 10k-pending-1000-CQs-100-cohorts 100k-pending-1-CQ; do
  v=$(pick sec/op "WaitTimeEstimatorRefresh/${s}" < "${OUT}/estimator.tsv" | cut -f1)
  single_row "refresh (background): ${s}" sec/op "WaitTimeEstimatorRefresh/${s}" "" \
    "$(awk -v d="${v:-0}" 'BEGIN { w = (5 * d > 1) ? 5 * d : 1; printf "%.0f%% of a CPU: one every %.1fs (d/(d+max(1s,5d)))", 100 * d / (d + w), d + w }')"
done

if [[ "${HARNESS}" == 1 ]]; then
  # harness_values SIDE KEY: the mean over the side's runs of a summary key
  # ("wallMs", "cpuMs", or a workload class's averageTimeToAdmissionMs),
  # then min and max.
  harness_values() {
    local side=$1 key=$2 d
    for d in "${H}/${side}"-*; do
      [[ -f "${d}/summary.yaml" && -f "${d}/minimalkueue.stats.yaml" ]] || continue
      case "${key}" in
        wallMs) awk '$1 == "wallMs:" { print $2 }' "${d}/minimalkueue.stats.yaml" ;;
        cpuMs) awk '$1 == "userMs:" || $1 == "sysMs:" { s += $2 } END { print s }' "${d}/minimalkueue.stats.yaml" ;;
        *) awk -v c="${key}:" '/^workloadClasses:/ { in_wl = 1; next } /^[^ ]/ { in_wl = 0 }
             in_wl && $1 == c { in_c = 1; next } in_wl && /^  [^ ]/ { in_c = 0 }
             in_c && $1 == "averageTimeToAdmissionMs:" { print $2 }' "${d}/summary.yaml" ;;
      esac
    done | awk 'NF { s += $1; n++; if (n == 1 || $1 < lo) lo = $1; if (n == 1 || $1 > hi) hi = $1 }
      END { if (n) printf "%.0f\t%.0f\t%.0f\t%d\n", s / n, lo, hi, n }'
  }
  harness_row() {
    local label=$1 key=$2 goal=${3-1.02} pm plo phi pn om olo ohi on fm flo fhi fn r note result
    IFS=$'\t' read -r pm plo phi pn < <(harness_values pristine "${key}") || true
    IFS=$'\t' read -r om olo ohi on < <(harness_values on "${key}") || true
    IFS=$'\t' read -r fm flo fhi fn < <(harness_values off "${key}") || true
    r=$(ratio "${om:-}" "${pm:-}")
    result=$(verdict "${r}" "${goal}" "")
    # With the runs' ranges overlapping, a miss is within the noise.
    if [[ "${result}" == MISS ]] && awk -v a="${olo}" -v b="${phi}" 'BEGIN { exit !(a + 0 <= b + 0) }'; then
      result="MISS (n.s.)"
    fi
    note="${pn:-0}+${on:-0} runs"
    if [[ -n "${fm:-}" ]]; then
      note="${pn:-0}+${fn}+${on:-0} runs; on/off $(ratio "${om:-}" "${fm}"), off/pristine $(ratio "${fm}" "${pm:-}")"
    fi
    row "${label}" "${pm:+${pm} ms [${plo}-${phi}]}" "${fm:+${fm} ms [${flo}-${fhi}]}" "${om:+${om} ms [${olo}-${ohi}]}" "${r:+${r} on/pristine}" "${note}" "${goal:+<= ${goal}}" "${result}"
  }
  harness_row "harness: wall time" wallMs
  harness_row "harness: avg time to admission, small" small
  harness_row "harness: avg time to admission, medium" medium
  harness_row "harness: avg time to admission, large" large
  harness_row "harness: minimalkueue CPU (user+sys)" cpuMs ""
fi

# --- print --------------------------------------------------------------------

header=$'scenario\tpristine\tpatched-off\tpatched-on\tratio\tp / note\tgoal\tresult'
{
  cat "${OUT}/run.txt"
  echo
  { echo "${header}"; cat "${rows}"; } | awk -F'\t' '
    { for (i = 1; i <= NF; i++) { cell[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } if (NF > nf) nf = NF }
    END { for (r = 1; r <= NR; r++) { line = ""; for (i = 1; i <= nf; i++) line = line sprintf("%-" w[i] "s  ", cell[r, i]); sub(/ +$/, "", line); print line } }'
} | tee "${OUT}/results.txt"
{
  echo "| ${header//$'\t'/ | } |"
  echo "|---|---|---|---|---|---|---|---|"
  sed 's/\t/ | /g; s/^/| /; s/$/ |/' "${rows}"
} > "${OUT}/results.md"
log "done: ${OUT}/results.txt, ${OUT}/results.md, details in ${OUT}/benchstat.txt"
