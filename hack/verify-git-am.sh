#!/usr/bin/env bash
# Applies the patch series with `git am` to Kueue's own git history at the
# v0.19.2 tag — what a reviewer does — and builds, vets and tests the result
# with Kueue's go.mod and no workspace. hack/verify-patches.sh checks the
# series against the v0.19.2 module zip from the Go module proxy, which has
# no site/, hack/tools or .github; this checks it against the repository.
#
# It needs a clone of github.com/kubernetes-sigs/kueue with its tags, which
# the Go module proxy does not serve, so `make test` does not run it.
#
# Usage: hack/verify-git-am.sh KUEUE_GIT_DIR   (read only; works in a
#        temporary clone of it)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
src=${1:?usage: hack/verify-git-am.sh KUEUE_GIT_DIR (a clone of kubernetes-sigs/kueue with its tags)}
git -C "${src}" rev-parse --verify -q "refs/tags/${KUEUE_VERSION}" >/dev/null ||
  die "verify-git-am: ${src} has no tag ${KUEUE_VERSION}"

work=$(mktemp -d)
trap 'rm -rf "${work}"' EXIT
git clone -q --no-checkout "${src}" "${work}/kueue"
cd "${work}/kueue"
git -c advice.detachedHead=false checkout -q "${KUEUE_VERSION}"
mapfile -t series < <(sed "s|^|${ROOT}/patches/|" "${ROOT}/patches/series")
git -c user.name=reviewer -c user.email=reviewer@example.com -c commit.gpgsign=false am -q "${series[@]}" ||
  die "verify-git-am: git am of the series on ${KUEUE_VERSION} failed"
echo "verify-git-am: ${#series[@]} patch(es) apply with git am on ${KUEUE_VERSION} ($(git rev-parse --short HEAD))"

# The Go packages the series touches, as verify-patches finds them.
mapfile -t packages < <(git diff --name-only "${KUEUE_VERSION}" HEAD -- '*.go' |
  grep -v '^test/\|^hack/' | xargs -r -n1 dirname | sort -u | sed 's|^|./|')
GOWORK=off go build ./...
GOWORK=off go vet ./...
echo "verify-git-am: go build and go vet of the whole tree pass with GOWORK=off"
GOWORK=off go test -count=1 "${packages[@]}"
echo "verify-git-am: go test of the ${#packages[@]} package(s) the series touches passes"
