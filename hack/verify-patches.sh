#!/usr/bin/env bash
# Proves the patch series is sound: on a fresh pristine copy of Kueue, applies
# patches/series one patch at a time, builds ./pkg/scheduler/... and
# ./cmd/kueue after each (so every patch builds on its own), then regenerates
# the patch files from the resulting commits and fails on any byte of drift
# (a hand-edited patch, or one not produced by update-patches).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

work="${ROOT}/_output/verify"
tree="${work}/kueue"
rm -rf "${work}"
mkdir -p "${work}"
"${ROOT}/hack/kueue-src.sh" "${tree}" >/dev/null
cat > "${work}/go.work" <<WORK
go 1.26.0

use (
	../..
	./kueue
)
WORK

export KUEUE_DIR="${tree}"
n=0
for p in $(series); do
  n=$((n + 1))
  apply_patch "${ROOT}/patches/${p}" || die "verify-patches: ${p} does not apply on top of the previous ones"
  echo "verify-patches: [${n}] ${p}: applied; building ./pkg/scheduler/... ./cmd/kueue"
  (cd "${tree}" && GOWORK="${work}/go.work" go build ./pkg/scheduler/... ./cmd/kueue) \
    || die "verify-patches: the tree does not build after ${p}"
done

regen="${work}/patches"
"${ROOT}/hack/update-patches.sh" "${regen}" >/dev/null
if ! diff -ru "${ROOT}/patches" "${regen}"; then
  die "verify-patches: patches/ differs from a regeneration (hand-edited patch?). Rebuild with: make patch, edit in _output/kueue, make update-patches"
fi
echo "verify-patches: ${n} patch(es) apply in order, build one by one, and regenerate byte for byte"
