#!/usr/bin/env bash
# Proves that the generated code the patches carry is what the real generators
# produce: on a fresh tree (pristine Kueue + patches/series, one commit per
# patch, in _output/codegen/kueue), runs hack/codegen.sh and fails with the
# diff if any file changed, appeared or disappeared. A patch that edits
# zz_generated files, client-go, the OpenAPI or the manifests by hand, or that
# changes API types without regenerating, fails here.
#
# Its verdict depends only on the series and the generators' definitions, so
# it is keyed like the per-patch checks of verify-patches (content_key in
# lib.sh): skipped when a pass on the same inputs is on record,
# VERIFY_PATCHES_FORCE=1 (make test-all) runs it whatever the records say. A
# new machine then builds the generators only when the series changed.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

key=$(content_key codegen patches hack/verify-codegen.sh hack/codegen.sh hack/codegen.mk hack/patch.sh hack/kueue-src.sh)
skip_verified verify-codegen codegen "${key}" "${VERIFY_PATCHES_FORCE:-0}" && exit 0

export KUEUE_DIR="${ROOT}/_output/codegen/kueue"
"${ROOT}/hack/patch.sh" "${KUEUE_DIR}" >/dev/null
# patch.sh leaves every patch committed; anything else left in the tree is
# committed too, so the check below sees only what codegen changes.
if [[ -n "$(kgit status --porcelain)" ]]; then
  kgit add -A
  kgit commit -q -m "verify-codegen: tree state before codegen"
fi

"${ROOT}/hack/codegen.sh" "${KUEUE_DIR}"

changes=$(kgit status --porcelain --untracked-files=all)
if [[ -n "${changes}" ]]; then
  echo "${changes}" >&2
  kgit add -A
  kgit --no-pager diff --cached --stat >&2
  kgit --no-pager diff --cached >&2
  die "verify-codegen: regenerating changes the files above: a patch carries generated code that the generators do not produce. Run make codegen in _output/kueue, commit, make update-patches"
fi
record_verified codegen "${key}"
echo "verify-codegen: $(series | wc -l) patch(es); the generated code matches the generators byte for byte; recorded (hack/verified.txt: commit it with the change it verified)"
