#!/usr/bin/env bash
# Regenerates patches/*.patch and patches/series from the commits on top of the
# pristine tag in _output/kueue. Byte-stable: zero commit hash, no signature,
# no diffstat, fixed abbreviation, so a patch diff in review shows only real
# changes.
#
# First it regenerates the generated commits, which add the estimator's
# packages under pkg/scheduler/waittime (hack/vendor-estimator.sh), one a
# package, from pkg/ of this repository, and rebases the commits after them
# onto the new ones: pkg/ is their only source, so `make patch update-patches` is the one command that
# brings the series up to date with a change in pkg/.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
out=${1:-${ROOT}/patches}

# sync_vendored_commits: replaces the run of generated commits (subjects
# matching VENDOR_SUBJECT_RE, one after the other) with the commits
# hack/vendor-estimator.sh --plan asks for, whose files are those it writes
# now, and rebases the commits after the run onto the new last one. The
# commits are byte-stable (lib.sh's kgit), so an unchanged pkg/ gives the
# same hashes and nothing is rewritten.
sync_vendored_commits() {
  local run first last parent tmp idx new name part dir msg files
  run=$(kgit log --reverse --format='%H%x09%s' pristine..main | awk -F '\t' -v re="${VENDOR_SUBJECT_RE}" '$2 ~ re { print $1 }')
  [[ -n "${run}" ]] ||
    die "update-patches: no generated commit (subject matching ${VENDOR_SUBJECT_RE}) in ${KUEUE_DIR} (make patch)"
  first=$(head -1 <<< "${run}")
  last=$(tail -1 <<< "${run}")
  [[ "$(kgit rev-list --count "${first}^..${last}")" == "$(wc -l <<< "${run}")" ]] ||
    die "update-patches: the generated commits in ${KUEUE_DIR} are not one after the other"
  [[ -z "$(kgit status --porcelain --untracked-files=no)" ]] ||
    die "update-patches: ${KUEUE_DIR} has uncommitted changes; commit them first"
  parent=$(kgit rev-parse "${first}^")
  tmp=$(mktemp -d)
  mkdir -p "${tmp}/tree/hack"
  kgit show "${parent}:hack/boilerplate.go.txt" > "${tmp}/tree/hack/boilerplate.go.txt"
  "${ROOT}/hack/vendor-estimator.sh" "${tmp}/tree" >/dev/null
  idx="${tmp}/index"
  GIT_INDEX_FILE="${idx}" kgit read-tree "${parent}"
  GIT_INDEX_FILE="${idx}" kgit --work-tree="${tmp}/tree" rm -r -q --cached --ignore-unmatch pkg/scheduler/waittime
  new=${parent}
  while read -r name part; do
    dir="pkg/scheduler/waittime/${name}"
    case "${part}" in
      all) files=$(cd "${tmp}/tree" && find "${dir}" -type f | LC_ALL=C sort) ;;
      code) files=$(cd "${tmp}/tree" && find "${dir}" -type f -name '*.go' ! -name '*_test.go' | LC_ALL=C sort) ;;
      tests) files=$(cd "${tmp}/tree" && find "${dir}" -type f ! \( -name '*.go' ! -name '*_test.go' \) ! -name '*_bench_test.go' | LC_ALL=C sort) ;;
      benchmarks) files=$(cd "${tmp}/tree" && find "${dir}" -type f -name '*_bench_test.go' | LC_ALL=C sort) ;;
    esac
    [[ -n "${files}" ]] || die "update-patches: ${part} of ${dir}: no files"
    # shellcheck disable=SC2086 # one path a word; vendor-estimator.sh writes no spaces
    GIT_INDEX_FILE="${idx}" kgit --work-tree="${tmp}/tree" add -f ${files}
    msg="${tmp}/msg"
    { vendor_subject "${name}" "${part}"; echo; vendor_body "${name}" "${part}"; } > "${msg}"
    new=$(kgit commit-tree "$(GIT_INDEX_FILE="${idx}" kgit write-tree)" -p "${new}" -F "${msg}")
  done < <("${ROOT}/hack/vendor-estimator.sh" --plan)
  local left
  left=$(GIT_INDEX_FILE="${idx}" kgit --work-tree="${tmp}/tree" ls-files --others --modified -- pkg/scheduler/waittime)
  [[ -z "${left}" ]] ||
    die "update-patches: files vendor-estimator.sh wrote that no generated commit adds: $(head -5 <<< "${left}")"
  if [[ "${new}" != "${last}" ]]; then
    kgit rebase -q --onto "${new}" "${last}" main ||
      die "update-patches: a commit after the generated ones does not rebase onto them; resolve in ${KUEUE_DIR} (git rebase --continue) and rerun"
    echo "update-patches: regenerated the $(kgit rev-list --count "${parent}..${new}") generated commits from pkg/"
  fi
  rm -rf "${tmp}"
}
sync_vendored_commits

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
