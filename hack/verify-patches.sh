#!/usr/bin/env bash
# Proves the patch series is sound, on a fresh pristine copy of Kueue:
#  1. patches/series applies in order, one commit per patch, and regenerating
#     the patch files from those commits, the generated one from pkg/ of this
#     repository (hack/update-patches.sh), gives patches/ byte for byte: no
#     hand-edited patch, none not produced by update-patches, and no change in
#     pkg/ left out of the patch that copies it into Kueue's tree. (First,
#     because it takes seconds.)
#  2. after each patch, the Go packages it touches (test/ and hack/ included)
#     type-check with their tests, with Kueue's own go.mod and no workspace
#     (GOWORK=off go vet on those directories), so each patch's own packages
#     build on their own. VERIFY_PATCHES_EACH=tree vets the whole tree (go vet
#     ./...) after each patch instead, which also proves that no package a
#     patch leaves untouched breaks where it stands; it costs the recompilation
#     of every importer of a low package (cache/queue, metrics, the config API,
#     util/heap: 90-150 s a patch, 35 min of a 2-core CI run of 31 patches),
#     so `make test` vets the touched packages per patch and the whole tree
#     after the last one, and `make verify-patches-tree` runs the whole-tree
#     mode. After the last patch, in both modes, go vet ./... type-checks every
#     package and test and go build ./... compiles and links every main
#     package; and no file imports this repository's module.
#     VERIFY_PATCHES_BUILD_EACH=1 runs go build
#     ./... after every patch too: it adds code generation for the main
#     packages and the link of every binary of the tree per patch, which only
#     a //go:linkname, assembly or cgo change could break where type-checking
#     passes (build and vet together took 446 s after the metrics patch alone
#     on a loaded 2-core machine).
#  3. after each patch, the unit tests of the Go packages it touches pass
#     (GOWORK=off go test on those directories, outside test/ and hack/, whose
#     suites need a control plane: `make test-upstream` runs Kueue's scheduler
#     integration suite on the whole series), so each patch's own tests pass
#     at that point and not only at the end. Go's test cache skips a package
#     unchanged since an earlier patch. VERIFY_PATCHES_TESTS=0 skips it. The
#     estimator's packages under pkg/scheduler/waittime/ are vetted here with
#     their tests but their tests are not run: they are the generated copy of
#     this repository's pkg/, whose tests `make test-unit` runs under the race
#     detector, and step 1 proves the copy is pkg/ byte for byte.
#
# Steps 2 and 3 of a patch, and the whole-tree go vet after the last one,
# depend only on pristine Kueue, the patches up to that one, this script and
# the Go version: each is keyed by the content of those (content_key in
# lib.sh) and skipped when a pass with the same key is on record (the tree's
# hack/verified.txt or this machine's cache), with a line saying so. A patch
# whose key has no record is verified, and its pass recorded. So a change to
# one package of the estimator's pkg/ verifies the generated patch that adds
# it (0010-0030, one a package) and every patch after it, and a change to
# the last patch only that one. VERIFY_PATCHES_FORCE=1
# (`make test-all`) verifies every patch whatever the records say.
#
# The tree sits at the same path on every run, so the build cache keeps its
# packages: a package is compiled and vetted again only when its own files or
# its dependencies' export data changed since a build the cache still holds.
#
# Disk: every patch that changes a package low in the tree (the cache, the
# queue manager, the heap) makes go vet and go test compile again everything
# above it, and the build cache would keep every one of those states (3.8 GiB
# more over the 26 patches of 2026-11-26, on top of the 3.3 GiB the last one
# needs; a CI run once ran out of disk here). So after each
# patch the entries this script added to the cache and that the patch's step
# did not use are deleted (prune_build_cache below); entries that were in the
# cache before the script started are never touched. VERIFY_PATCHES_PRUNE=0
# keeps everything.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

work="${ROOT}/_output/verify"
tree="${work}/kueue"
rm -rf "${work}"
mkdir -p "${work}"
"${ROOT}/hack/kueue-src.sh" "${tree}" >/dev/null

export KUEUE_DIR="${tree}"
total=${SECONDS}
each=${VERIFY_PATCHES_EACH:-touched}
[[ "${each}" == touched || "${each}" == tree ]] ||
  die "verify-patches: VERIFY_PATCHES_EACH=${each}: want touched (the packages each patch touches) or tree (the whole tree after each patch)"

# Build-cache pruning. Go marks a cache file used by setting its mtime to now,
# but only when the mtime is more than an hour old (cmd/go/internal/cache,
# mtimeInterval). So before each step the files this script added are dated
# two hours back; a file the step reads gets today's mtime again, one it
# writes is new, and after the step every added file still older than the
# step's start was not needed by it, and goes. A file deleted too eagerly is
# only a cache miss: Go compiles that package again.
gocache=$(go env GOCACHE)
prune=${VERIFY_PATCHES_PRUNE:-1}
if [[ "${prune}" == 1 ]]; then
  [[ "${gocache}" == /* ]] || die "verify-patches: the build cache is off (GOCACHE=${gocache}); VERIFY_PATCHES_PRUNE=0 to go on"
  mkdir -p "${gocache}"
fi
cache_files() { find "${gocache}" -mindepth 2 -maxdepth 2 -type f -path "${gocache}/[0-9a-f][0-9a-f]/*" | sort; }
if [[ "${prune}" == 1 ]]; then
  cache_files > "${work}/gocache-before"
fi
added_cache_files() { cache_files | comm -23 - "${work}/gocache-before"; }
age_build_cache() {
  [[ "${prune}" == 1 ]] || return 0
  added_cache_files | tr '\n' '\0' | xargs -0 -r touch -m -d "@$(($(date +%s) - 7200))"
}
prune_build_cache() {  # $1: a file touched when the step started
  [[ "${prune}" == 1 ]] || return 0
  local before after
  before=$(du -sk "${gocache}" | cut -f1)
  added_cache_files | tr '\n' '\0' | xargs -0 -r sh -c 'for f; do [ "$f" -nt "$0" ] || rm -f "$f"; done' "$1"
  after=$(du -sk "${gocache}" | cut -f1)
  echo "verify-patches: build cache ${after} KiB after pruning what the step did not use (was ${before} KiB)"
}
for p in $(series); do
  apply_patch "${ROOT}/patches/${p}" || die "verify-patches: ${p} does not apply on top of the previous ones"
done
commits=$(kgit rev-list --reverse pristine..main)

regen="${work}/patches"
"${ROOT}/hack/update-patches.sh" "${regen}" >/dev/null
if ! diff -ru "${ROOT}/patches" "${regen}"; then
  die "verify-patches: patches/ differs from a regeneration: pkg/ changed without regenerating the generated patch, or a patch was edited by hand. Rebuild with: make patch, (edit and commit in _output/kueue,) make update-patches"
fi
echo "verify-patches: $(series | wc -l) patch(es) apply in order and regenerate byte for byte from their commits and pkg/ ($((SECONDS - total)) s)"

force=${VERIFY_PATCHES_FORCE:-0}
# patch_key N: the key of the checks of the series' N-th patch.
patch_key() {
  local files=()
  mapfile -t files < <(series | head -n "$1" | sed 's#^#patches/#')
  content_key "verify-patches ${each} tests=${VERIFY_PATCHES_TESTS:-1}" "${files[@]}" hack/verify-patches.sh hack/kueue-src.sh
}
n=0
skipped=0
for c in ${commits}; do
  n=$((n + 1))
  p=$(series | sed -n "${n}p")
  key=$(patch_key "${n}")
  if skip_verified "verify-patches: [${n}]" "patch ${p}" "${key}" "${force}"; then
    skipped=$((skipped + 1))
    continue
  fi
  kgit checkout -q "${c}"
  age_build_cache
  touch "${work}/step-start"
  start=${SECONDS}
  if [[ "${VERIFY_PATCHES_BUILD_EACH:-0}" == 1 ]]; then
    (cd "${tree}" && GOWORK=off go build ./...) || die "verify-patches: the tree does not build with GOWORK=off after ${p}"
  fi
  # The directories of the Go files the patch adds or changes (that still
  # exist), and those of them outside test/ and hack/ (their unit tests run).
  mapfile -t touched_dirs < <(kgit diff --name-only "${c}^" "${c}" -- '*.go' | xargs -r -n1 dirname | sort -u |
    while read -r d; do [[ -d "${tree}/${d}" ]] && echo "./${d}"; done)
  mapfile -t touched < <(printf '%s\n' "${touched_dirs[@]}" | grep -Ev '^\./((test|hack)(/|$)|pkg/scheduler/waittime(/|$))' || true)
  case "${each}" in
  tree)
    (cd "${tree}" && GOWORK=off go vet ./...) || die "verify-patches: the tree does not vet with GOWORK=off after ${p}"
    echo "verify-patches: [${n}] ${p}: go vet ./... passes ($((SECONDS - start)) s)"
    ;;
  touched)
    if [[ ${#touched_dirs[@]} -gt 0 ]]; then
      (cd "${tree}" && GOWORK=off go vet "${touched_dirs[@]}") ||
        die "verify-patches: the packages ${p} touches do not vet with GOWORK=off after it"
      echo "verify-patches: [${n}] ${p}: go vet of the ${#touched_dirs[@]} package(s) it touches passes ($((SECONDS - start)) s)"
    fi
    ;;
  esac
  if [[ "${VERIFY_PATCHES_TESTS:-1}" == 1 ]]; then
    start=${SECONDS}
    if [[ ${#touched[@]} -gt 0 && -n "${touched[0]}" ]]; then
      if ! (cd "${tree}" && GOWORK=off go test "${touched[@]}") > "${work}/test-${n}.log" 2>&1; then
        grep -v -e '^ok ' -e 'no test files' "${work}/test-${n}.log" >&2
        die "verify-patches: the tests of the packages ${p} touches fail after it (${work}/test-${n}.log)"
      fi
      echo "verify-patches: [${n}] ${p}: go test of the ${#touched[@]} package(s) it touches passes ($((SECONDS - start)) s)"
    fi
  fi
  prune_build_cache "${work}/step-start"
  record_verified "patch ${p}" "${key}"
done
kgit checkout -q main
start=${SECONDS}
if [[ "${each}" != tree ]]; then
  key=$(content_key "verify-patches tree vet" patches hack/verify-patches.sh hack/kueue-src.sh)
  if ! skip_verified verify-patches tree-vet "${key}" "${force}"; then
    (cd "${tree}" && GOWORK=off go vet ./...) || die "verify-patches: the patched tree does not vet with GOWORK=off"
    record_verified "tree-vet" "${key}"
    echo "verify-patches: the patched tree: go vet ./... passes ($((SECONDS - start)) s)"
  fi
  start=${SECONDS}
fi
(cd "${tree}" && GOWORK=off go build ./...) || die "verify-patches: the patched tree does not build with GOWORK=off"
echo "verify-patches: the patched tree: go build ./... passes ($((SECONDS - start)) s)"
unformatted=$(kgit diff --name-only --diff-filter=d pristine main -- '*.go' | (cd "${tree}" && xargs -r gofmt -l))
[[ -z "${unformatted}" ]] || die "verify-patches: the series leaves Go files gofmt would change: ${unformatted}"
echo "verify-patches: every Go file the series adds or changes is gofmt-clean"
if grep -rl --include='*.go' 'github.com/kueue-waittime/' "${tree}"; then
  die "verify-patches: the files above of the patched tree import this repository's module"
fi
echo "verify-patches: ${n} patch(es) vet and test one by one (${each}; $((n - skipped)) run now, ${skipped} on record) and the tree vets and builds with GOWORK=off ($((SECONDS - total)) s)"
