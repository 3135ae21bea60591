#!/usr/bin/env bash
# Regenerates patches/*.patch and patches/series from the commits on top of the
# pristine tag in _output/kueue. Byte-stable: zero commit hash, no signature,
# no diffstat, fixed abbreviation, so a patch diff in review shows only real
# changes.
#
# First it regenerates the one generated commit, which adds the estimator's
# packages under pkg/scheduler/waittime (hack/vendor-estimator.sh), from pkg/
# of this repository, and rebases the commits after it onto the new one: pkg/
# is their only source, so `make patch update-patches` is the one command that
# brings the series up to date with a change in pkg/.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
out=${1:-${ROOT}/patches}

# sync_vendored_commit: replaces the commit whose subject is VENDOR_SUBJECT
# with one whose tree has pkg/scheduler/waittime as hack/vendor-estimator.sh
# writes it now, and rebases the commits after it onto that one.
sync_vendored_commit() {
  local old parent tmp idx tree new msg
  old=$(kgit log --format='%H%x09%s' pristine..main | awk -F '\t' -v s="${VENDOR_SUBJECT}" '$2 == s { print $1 }')
  [[ -n "${old}" && "${old}" != *$'\n'* ]] ||
    die "update-patches: want exactly one commit with subject \"${VENDOR_SUBJECT}\" in ${KUEUE_DIR} (make patch)"
  [[ -z "$(kgit status --porcelain --untracked-files=no)" ]] ||
    die "update-patches: ${KUEUE_DIR} has uncommitted changes; commit them first"
  parent=$(kgit rev-parse "${old}^")
  tmp=$(mktemp -d)
  mkdir -p "${tmp}/tree/hack"
  kgit show "${parent}:hack/boilerplate.go.txt" > "${tmp}/tree/hack/boilerplate.go.txt"
  "${ROOT}/hack/vendor-estimator.sh" "${tmp}/tree" >/dev/null
  idx="${tmp}/index"
  GIT_INDEX_FILE="${idx}" kgit read-tree "${parent}"
  GIT_INDEX_FILE="${idx}" kgit --work-tree="${tmp}/tree" rm -r -q --cached --ignore-unmatch pkg/scheduler/waittime
  GIT_INDEX_FILE="${idx}" kgit --work-tree="${tmp}/tree" add -f pkg/scheduler/waittime
  tree=$(GIT_INDEX_FILE="${idx}" kgit write-tree)
  msg="${tmp}/msg"
  printf '%s\n\n%s\n' "${VENDOR_SUBJECT}" "${VENDOR_BODY}" > "${msg}"
  if [[ "${tree}" != "$(kgit rev-parse "${old}^{tree}")" ]] || ! cmp -s "${msg}" <(kgit log -1 --format=%B "${old}"); then
    new=$(kgit commit-tree "${tree}" -p "${parent}" -F "${msg}")
    kgit rebase -q --onto "${new}" "${old}" main ||
      die "update-patches: a commit after the generated one does not rebase onto it; resolve in ${KUEUE_DIR} (git rebase --continue) and rerun"
    echo "update-patches: regenerated \"${VENDOR_SUBJECT}\" from pkg/"
  fi
  rm -rf "${tmp}"
}
sync_vendored_commit

mkdir -p "${out}"
rm -f "${out}"/*.patch
kgit format-patch -q --zero-commit --no-signature --no-stat --no-numbered \
  --full-index --abbrev=12 --no-renames --subject-prefix=PATCH -o "${out}" pristine..main >/dev/null
# Name each file NNNN-<area-summary>.patch after its subject without the
# "UPSTREAM: <carry>: " prefix, so the series reads as a list of concerns.
: > "${out}/series"
for f in "${out}"/[0-9][0-9][0-9][0-9]-*.patch; do
  [[ -e "${f}" ]] || continue
  n=$(basename "${f}" | cut -c1-4)
  subject=$(git mailinfo /dev/null /dev/null < "${f}" | sed -n 's/^Subject: //p')
  slug=$(printf '%s' "${subject#UPSTREAM: <carry>: }" | tr 'A-Z' 'a-z' | sed -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/^-//' | cut -c1-60 | sed 's/-$//')
  name="${n}-${slug}.patch"
  [[ "$(basename "${f}")" == "${name}" ]] || mv "${f}" "${out}/${name}"
  echo "${name}" >> "${out}/series"
done
echo "update-patches: $(wc -l < "${out}/series") patch(es) in ${out}"
