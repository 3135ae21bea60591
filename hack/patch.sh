#!/usr/bin/env bash
# Applies patches/series on top of the pristine Kueue tree in _output/kueue, one
# commit per patch, then writes _output/go.work so this module and the patched
# Kueue build together. Idempotent: it always restarts from the pristine tag.
#
# Usage: hack/patch.sh [dest]   (default _output/kueue)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
KUEUE_DIR=${1:-${KUEUE_DIR}}

if ! git -C "${KUEUE_DIR}" rev-parse -q --verify pristine >/dev/null 2>&1; then
  "${ROOT}/hack/kueue-src.sh" "${KUEUE_DIR}"
fi
kgit checkout -q -f main
kgit reset -q --hard pristine
kgit clean -q -fdx -e config/components/crd/_output

for p in $(series); do
  apply_patch "${ROOT}/patches/${p}" || die "patch: ${p} does not apply"
  echo "patch: applied ${p}"
done

rel=$(realpath --relative-to="${ROOT}/_output" "${KUEUE_DIR}")
cat > "${ROOT}/_output/go.work" <<WORK
go 1.26.0

use (
	..
	./${rel}
)
WORK
echo "patch: wrote _output/go.work (GOWORK=${ROOT}/_output/go.work)"
