#!/usr/bin/env bash
# Copies the pristine sigs.k8s.io/kueue module source out of the Go module cache
# into _output/kueue, makes it writable and commits it as the "pristine" tag.
# Also fills config/components/crd/_output from crd/bases, which is where
# Kueue's integration framework looks for CRDs (upstream fills it with
# kustomize; the bases are what envtest needs).
#
# Usage: hack/kueue-src.sh [dest]   (default _output/kueue)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
KUEUE_DIR=${1:-${KUEUE_DIR}}

src=$(cd "${ROOT}" && GOFLAGS=-mod=mod go mod download -json "${KUEUE_MODULE}@${KUEUE_VERSION}" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
[[ -d "${src}" ]] || die "kueue-src: go mod download gave no directory for ${KUEUE_MODULE}@${KUEUE_VERSION}"

rm -rf "${KUEUE_DIR}"
mkdir -p "$(dirname "${KUEUE_DIR}")"
cp -R "${src}" "${KUEUE_DIR}"
chmod -R u+w "${KUEUE_DIR}"
mkdir -p "${KUEUE_DIR}/config/components/crd/_output"
cp "${KUEUE_DIR}"/config/components/crd/bases/*.yaml "${KUEUE_DIR}/config/components/crd/_output/"

git -C "${KUEUE_DIR}" init -q -b main
# Build outputs and the CRD copy stay out of the patch history.
printf '%s\n' '/config/components/crd/_output/' '/bin/' '*.test' >> "${KUEUE_DIR}/.git/info/exclude"
kgit add -A
kgit commit -q -m "pristine ${KUEUE_MODULE} ${KUEUE_VERSION}"
kgit tag -f pristine >/dev/null
echo "kueue-src: pristine ${KUEUE_MODULE} ${KUEUE_VERSION} at ${KUEUE_DIR}"
