#!/usr/bin/env bash
# The slow tier of `make test`: checks that take minutes each and whose
# verdict depends only on files they can name. Each runs here unless a pass
# on the same inputs is on record (content_key, is_verified and
# record_verified in lib.sh: the tree's hack/verified.txt or this machine's
# cache), and says which it did; SLOW_TIER_FORCE=1 (`make test-all`) runs
# every one whatever the records say.
#
#   scheduler-gate-off  Kueue's scheduler integration suite on the patched
#                       tree with the WaitTimeEstimation gate off (make test
#                       runs it with the gate on): the series changes
#                       nothing when the gate is off. Inputs: the patches.
#   e2e-faults          the end-to-end tests make test's short run leaves
#                       out: the manager killed mid-run, the API server
#                       restarted under load, a malformed configuration,
#                       replicas that agree with the leader, an eval scenario
#                       run as Jobs on the cluster. Inputs: the patches,
#                       config/, cmd/, pkg/, the cluster, e2e and eval test
#                       code, the image and manifest scripts, go.mod.
#   perf-score          Kueue's scheduler performance harness at 1/2 of its
#                       baseline, the gate on and scraped, scored by
#                       `kueue-waittime score`: enough forecasts, none of
#                       hours. Inputs: the patches, cmd/kueue-waittime and
#                       internal/harness (the binary it builds links the
#                       evaluation harness), the harness script, go.mod.
#
# Usage: hack/slow-tier.sh [CHECK...]   (default: all three, in that order)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

# inputs CHECK: the paths (git pathspecs, one a line) whose content keys
# CHECK, besides lib.sh, this script, the Makefile and the Go version.
inputs() {
  set -f
  # shellcheck disable=SC2046 # one word a pathspec
  printf '%s\n' $(_inputs "$1")
  set +f
}
_inputs() {
  case "$1" in
    scheduler-gate-off) echo patches ;;
    e2e-faults) echo patches config cmd pkg internal/harness test/e2e test/eval/*.yaml hack/image.sh hack/manifests.sh hack/envtest.sh go.mod go.sum ;;
    perf-score) echo patches cmd/kueue-waittime internal/harness hack/perf-score.sh go.mod go.sum ;;
    *) die "slow-tier: unknown check $1 (scheduler-gate-off, e2e-faults or perf-score)" ;;
  esac
}
# target CHECK: the make target that runs it.
target() {
  case "$1" in
    scheduler-gate-off) echo test-upstream-gate-off ;;
    e2e-faults) echo e2e-faults ;;
    perf-score) echo test-perf-score ;;
  esac
}

checks=("$@")
[[ ${#checks[@]} -gt 0 ]] || checks=(scheduler-gate-off e2e-faults perf-score)
for check in "${checks[@]}"; do
  case "${check}" in
    scheduler-gate-off | e2e-faults | perf-score) ;;
    *) die "slow-tier: unknown check ${check} (scheduler-gate-off, e2e-faults or perf-score)" ;;
  esac
  mapfile -t paths < <(inputs "${check}")
  key=$(content_key "slow-tier ${check}" "${paths[@]}" hack/slow-tier.sh Makefile hack/bench.mk hack/deploy.mk)
  skip_verified slow-tier "${check}" "${key}" "${SLOW_TIER_FORCE:-0}" && continue
  start=${SECONDS}
  echo "slow-tier: ${check}: no pass on record for these inputs (key ${key:0:12}): running make $(target "${check}")"
  make -C "${ROOT}" --no-print-directory "$(target "${check}")"
  record_verified "${check}" "${key}"
  echo "slow-tier: ${check}: passed in $((SECONDS - start)) s; recorded (hack/verified.txt: commit it with the change it verified)"
done
