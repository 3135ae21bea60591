#!/usr/bin/env bash
# Runs Kueue's own performance harness (test/performance/scheduler: the
# runner and minimalkueue, baseline generator config divided by a scale) on
# the patched tree with the WaitTimeEstimation gate on and the runner's
# metrics scraping, then scores the estimator's series in the runner's
# metricsDump.tgz with `kueue-waittime score`.
#
# Usage: hack/perf-score.sh [--scale N] [--scrape-interval D] [KUEUE_TREE]
#   --scale N            divide every workload set's count by N (default 5)
#   --scrape-interval D  the runner's --metricsScrapeInterval (default 10s)
#   --min-scored N       fail unless score counts at least N workloads scored
#                        over all ClusterQueues (default 1)
#   --min-forecasts N    fail unless the forecast answered at least N of them
#                        (default 0)
#   --max-forecast-mae S fail if the forecast's MAE over all ClusterQueues is
#                        above S seconds (default: no bound); the harness's
#                        waits are seconds to a minute, so a bound of minutes
#                        catches forecasts of hours or days
# Environment: PERF_OUT (default _output/perf-score), KUBEBUILDER_ASSETS.
# Output: $PERF_OUT/harness (the runner's artifacts, metricsDump.tgz among
#   them), $PERF_OUT/score.txt and score.json; the table on stdout.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

SCALE=5
SCRAPE=10s
MIN_SCORED=1
MIN_FORECASTS=0
MAX_FORECAST_MAE=
OUT=${PERF_OUT:-${ROOT}/_output/perf-score}
TREE=${KUEUE_DIR}
export KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS:-${ROOT}/bin/k8s/1.36.0}

while [[ $# -gt 0 ]]; do
  case "$1" in
    --scale) SCALE=$2; shift 2 ;;
    --scrape-interval) SCRAPE=$2; shift 2 ;;
    --min-scored) MIN_SCORED=$2; shift 2 ;;
    --min-forecasts) MIN_FORECASTS=$2; shift 2 ;;
    --max-forecast-mae) MAX_FORECAST_MAE=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "perf-score: unknown flag $1" ;;
    *) TREE=$1; shift ;;
  esac
done
[[ "${SCALE}" =~ ^[1-9][0-9]*$ ]] || die "perf-score: --scale must be a positive integer"
[[ "${MIN_SCORED}" =~ ^[0-9]+$ ]] || die "perf-score: --min-scored must be a non-negative integer"
[[ "${MIN_FORECASTS}" =~ ^[0-9]+$ ]] || die "perf-score: --min-forecasts must be a non-negative integer"
[[ -z "${MAX_FORECAST_MAE}" || "${MAX_FORECAST_MAE}" =~ ^[0-9]+$ ]] \
  || die "perf-score: --max-forecast-mae must be a whole number of seconds"
[[ -f "${TREE}/go.mod" ]] && grep -q '^module sigs.k8s.io/kueue$' "${TREE}/go.mod" \
  || die "perf-score: ${TREE} is not a Kueue tree (run make patch)"
TREE=$(cd "${TREE}" && pwd -P)
WORK=${ROOT}/_output/go.work
[[ "${TREE}" -ef "${ROOT}/_output/kueue" ]] || WORK=${TREE%/}.go.work
[[ -f "${WORK}" ]] || die "perf-score: no workspace ${WORK} (hack/patch.sh writes it)"
grep -q 'feature-gates' "${TREE}/test/performance/scheduler/minimalkueue/main.go" \
  || die "perf-score: ${TREE}'s minimalkueue takes no --feature-gates: apply the patch series"
[[ -x "${KUBEBUILDER_ASSETS}/kube-apiserver" && -x "${KUBEBUILDER_ASSETS}/etcd" ]] \
  || die "perf-score: no envtest binaries in ${KUBEBUILDER_ASSETS} (make envtest)"

start=$(date +%s)
log() { printf 'perf-score: [%4ss] %s\n' "$(( $(date +%s) - start ))" "$*" >&2; }
BIN=${OUT}/bin
H=${OUT}/harness
rm -rf "${H}"
mkdir -p "${BIN}" "${H}"

log "building the runner, the patched minimalkueue and kueue-waittime"
(cd "${TREE}" && GOWORK=off go build -o "${BIN}/runner" ./test/performance/scheduler/runner &&
  GOWORK=off go build -o "${BIN}/minimalkueue-patched" ./test/performance/scheduler/minimalkueue)
(cd "${ROOT}" && GOWORK="${WORK}" go build -o "${BIN}/kueue-waittime" ./cmd/kueue-waittime)
gated_minimalkueue "${BIN}/minimalkueue-patched" "${BIN}/on"
scaled_baseline "${TREE}" "${SCALE}" "${OUT}/generator.yaml"

log "running Kueue's performance harness at 1/${SCALE} of the baseline, gate on, scraping every ${SCRAPE}"
if ! "${BIN}/runner" --o "${H}" --crds="${TREE}/config/components/crd/bases" \
  --generatorConfig="${OUT}/generator.yaml" --minimalKueue="${BIN}/on/minimalkueue" \
  --metricsScrapeInterval="${SCRAPE}" > "${H}/runner.log" 2>&1; then
  tail -20 "${H}/runner.log" >&2
  die "perf-score: the harness failed: see ${H}/runner.log"
fi
[[ -s "${H}/metricsDump.tgz" ]] || die "perf-score: the runner left no ${H}/metricsDump.tgz"
log "harness done; scoring ${H}/metricsDump.tgz"

"${BIN}/kueue-waittime" score -f "${H}/metricsDump.tgz" | tee "${OUT}/score.txt"
"${BIN}/kueue-waittime" score -o json -f "${H}/metricsDump.tgz" > "${OUT}/score.json"
scored=$(awk '/^  "pooled": \{/ { p = 1 } p && /"scored":/ { gsub(/[^0-9]/, ""); print; exit }' "${OUT}/score.json")
[[ -n "${scored}" ]] || die "perf-score: no pooled row in ${OUT}/score.json"
(( scored >= MIN_SCORED )) || die "perf-score: score counted ${scored} workloads scored, fewer than --min-scored ${MIN_SCORED}"
# The pooled forecast row: its n (answers) and its MAE in seconds.
read -r forecasts forecast_mae < <(awk '
  /^  "pooled": \{/ { p = 1 }
  p && /^      "forecast": \{/ { f = 1 }
  f && /"n":/ { gsub(/[^0-9]/, ""); n = $0 }
  f && /"mae":/ { gsub(/[",]/, ""); print n, ($2 == "null" ? "none" : $2); exit }
  f && /^      \}/ { print n, "none"; exit }' "${OUT}/score.json")
[[ -n "${forecasts:-}" ]] || die "perf-score: no pooled forecast row in ${OUT}/score.json"
(( forecasts >= MIN_FORECASTS )) \
  || die "perf-score: the forecast answered ${forecasts} of ${scored} scored workloads, fewer than --min-forecasts ${MIN_FORECASTS}"
if [[ -n "${MAX_FORECAST_MAE}" && "${forecast_mae}" != none ]]; then
  awk -v m="${forecast_mae}" -v b="${MAX_FORECAST_MAE}" 'BEGIN { exit !(m <= b) }' \
    || die "perf-score: the forecast's MAE is ${forecast_mae} s, above --max-forecast-mae ${MAX_FORECAST_MAE}"
fi
log "done: ${scored} workloads scored, ${forecasts} with a forecast (MAE ${forecast_mae} s); ${OUT}/score.txt, ${OUT}/score.json"
