#!/usr/bin/env bash
# Regenerates patches/*.patch and patches/series from the commits on top of the
# pristine tag in _output/kueue. Byte-stable: zero commit hash, no signature,
# no diffstat, fixed abbreviation, so a patch diff in review shows only real
# changes.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
out=${1:-${ROOT}/patches}

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
