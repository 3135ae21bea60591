#!/usr/bin/env bash
# Proves the patch series is sound: on a fresh pristine copy of Kueue, applies
# patches/series one patch at a time and, after each, builds every package and
# type-checks every package and test of the tree with Kueue's own go.mod and
# no workspace (GOWORK=off go build ./... && go vet ./...), so every patch
# builds, and its tests compile, on its own. Then regenerates the patch files
# from the resulting commits, the generated one from pkg/ of this repository
# (hack/update-patches.sh), and fails on any byte of drift: a hand-edited
# patch, one not produced by update-patches, or pkg/ changed without
# regenerating the patch that copies it into Kueue's tree.
#
# The tree sits at the same path on every run, so the build cache keeps its
# packages: a package is compiled and vetted again only when its own files or
# its dependencies' changed, which is what makes the per-patch `vet ./...`
# affordable (a patch that touches pkg/features recompiles nearly the tree).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

work="${ROOT}/_output/verify"
tree="${work}/kueue"
rm -rf "${work}"
mkdir -p "${work}"
"${ROOT}/hack/kueue-src.sh" "${tree}" >/dev/null

export KUEUE_DIR="${tree}"
n=0
total=${SECONDS}
for p in $(series); do
  n=$((n + 1))
  apply_patch "${ROOT}/patches/${p}" || die "verify-patches: ${p} does not apply on top of the previous ones"
  start=${SECONDS}
  (cd "${tree}" && GOWORK=off go build ./... && GOWORK=off go vet ./...) \
    || die "verify-patches: the tree does not build or vet with GOWORK=off after ${p}"
  echo "verify-patches: [${n}] ${p}: applied; go build ./... and go vet ./... pass ($((SECONDS - start)) s)"
done
if grep -rl --include='*.go' 'github.com/kueue-waittime/' "${tree}"; then
  die "verify-patches: the files above of the patched tree import this repository's module"
fi

regen="${work}/patches"
"${ROOT}/hack/update-patches.sh" "${regen}" >/dev/null
if ! diff -ru "${ROOT}/patches" "${regen}"; then
  die "verify-patches: patches/ differs from a regeneration: pkg/ changed without regenerating the generated patch, or a patch was edited by hand. Rebuild with: make patch, (edit and commit in _output/kueue,) make update-patches"
fi
echo "verify-patches: ${n} patch(es) apply in order, build and vet one by one, and regenerate byte for byte from _output/kueue's commits and pkg/ ($((SECONDS - total)) s)"
