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

# A tree next to its own go.work: _output/kueue gets _output/go.work (the
# workspace the Makefile uses); another destination gets <dest>.go.work.
work="${ROOT}/_output/go.work"
[[ "${KUEUE_DIR}" -ef "${ROOT}/_output/kueue" ]] || work="${KUEUE_DIR%/}.go.work"
cat > "${work}" <<WORK
go 1.26.0

use (
	./$(realpath --relative-to="$(dirname "${work}")" "${ROOT}")
	./$(realpath --relative-to="$(dirname "${work}")" "${KUEUE_DIR}")
)
WORK
echo "patch: wrote ${work} (use it with GOWORK=${work})"
