#!/usr/bin/env bash
# Before/after benchmarks of the last patches of the series: the patched tree
# with its first N commits ("before") against the whole series ("after"),
# alternated ROUNDS times on the same machine, so that load that comes and
# goes falls on both sides. It runs the estimator's refresh and lock
# benchmarks (pkg/estimator, built against each tree) and Kueue's
# BenchmarkClusterQueueSnapshot (pkg/cache/queue of each tree), and prints
# the median and range of each benchmark's wall time and custom metrics.
#
#   hack/bench-patch-ab.sh [N]     N defaults to all commits but the last
#
# Needs the patched tree (make patch). Environment: ROUNDS (default 3),
# BENCH_OUT (default _output/bench-patch-ab), where the binaries and the raw
# output (raw.txt) go.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ -d "${KUEUE_DIR}/.git" ]] || die "bench-patch-ab needs the patched tree: make patch"
total=$(git -C "${KUEUE_DIR}" rev-list --count pristine..HEAD)
n=${1:-$((total - 1))}
[[ "${n}" =~ ^[0-9]+$ && "${n}" -lt "${total}" ]] || die "N must be a number of commits below ${total}"
before=pristine
if [[ "${n}" -gt 0 ]]; then
  before=$(git -C "${KUEUE_DIR}" rev-list --reverse pristine..HEAD | sed -n "${n}p")
fi
OUT=${BENCH_OUT:-${ROOT}/_output/bench-patch-ab}
ROUNDS=${ROUNDS:-3}
rm -rf "${OUT}"
mkdir -p "${OUT}"
git -C "${KUEUE_DIR}" worktree add -q --detach "${OUT}/before" "${before}"
trap 'git -C "${KUEUE_DIR}" worktree remove --force "${OUT}/before"' EXIT
printf 'go 1.26.0\n\nuse (\n\t%s\n\t%s\n)\n' "${ROOT}" "${OUT}/before" > "${OUT}/go.work"
echo "before: ${n} of ${total} commits ($(git -C "${KUEUE_DIR}" log --format=%s -1 "${before}"))" >&2
echo "after: ${total} commits ($(git -C "${KUEUE_DIR}" log --format=%s -1 HEAD))" >&2

(cd "${ROOT}" && GOWORK="${OUT}/go.work" go test -c -o "${OUT}/estimator-before.test" ./pkg/estimator)
(cd "${ROOT}" && GOWORK="${ROOT}/_output/go.work" go test -c -o "${OUT}/estimator-after.test" ./pkg/estimator)
(cd "${OUT}/before" && GOWORK=off go test -c -o "${OUT}/queue-before.test" ./pkg/cache/queue)
(cd "${KUEUE_DIR}" && GOWORK=off go test -c -o "${OUT}/queue-after.test" ./pkg/cache/queue)

RAW="${OUT}/raw.txt"
: > "${RAW}"
# bench SIDE BINARY DIR REGEXP BENCHTIME: one run, each result line
# prefixed with the side.
bench() {
  (cd "$3" && "$2" -test.run '^$' -test.bench "$4" -test.benchtime "$5" -test.benchmem -test.cpu 1 2>&1) |
    grep '^Benchmark' | sed "s/^/$1 /" | tee -a "${RAW}" >&2
}
for round in $(seq "${ROUNDS}"); do
  for side in before after; do
    echo "round ${round}: ${side}" >&2
    est="${OUT}/estimator-${side}.test"
    bench "${side}" "${est}" "${ROOT}/pkg/estimator" '^BenchmarkRefresh100000PendingOneClusterQueue$' 3x
    bench "${side}" "${est}" "${ROOT}/pkg/estimator" '^BenchmarkRefresh10000PendingThousandClusterQueues$' 5x
    bench "${side}" "${est}" "${ROOT}/pkg/estimator" '^BenchmarkRefreshAfterOneAdmission$' 20x
    bench "${side}" "${est}" "${ROOT}/pkg/estimator" '^BenchmarkRefreshLockHold100000Pending$' 3x
    tree="${KUEUE_DIR}"
    [[ "${side}" == before ]] && tree="${OUT}/before"
    bench "${side}" "${OUT}/queue-${side}.test" "${tree}/pkg/cache/queue" '^BenchmarkClusterQueueSnapshot$' 1s
  done
done

# One line per benchmark, metric and side: median (range) over the rounds;
# nanoseconds are printed as milliseconds.
awk '
  {
    side = $1; name = $2; sub(/-[0-9]+$/, "", name)
    for (i = 4; i < NF; i += 2) {
      key = name " " $(i + 1) " " side
      n[key]++; v[key, n[key]] = $i
      if (!(name " " $(i + 1) in seen)) { seen[name " " $(i + 1)] = 1; order[++m] = name " " $(i + 1) }
    }
  }
  function show(key, unit,   k, i, j, t, a, med) {
    k = n[key]
    for (i = 1; i <= k; i++) a[i] = v[key, i]
    for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    med = a[int((k + 1) / 2)]
    if (unit ~ /ns/) return sprintf("%.3f ms (%.3f-%.3f)", med / 1e6, a[1] / 1e6, a[k] / 1e6)
    return sprintf("%g (%g-%g)", med, a[1], a[k])
  }
  END {
    for (i = 1; i <= m; i++) {
      split(order[i], p, " ")
      printf "%s %s: before %s, after %s\n", p[1], p[2], show(order[i] " before", p[2]), show(order[i] " after", p[2])
    }
  }' "${RAW}"
