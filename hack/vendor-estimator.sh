#!/usr/bin/env bash
# Writes the estimator's packages into a Kueue tree, as the patch series adds
# them: pkg/estimator of this repository, pkg/dispatch (the MultiKueue
# wait-time dispatcher's decision) and every package of pkg/ they need
# (their dependencies and their tests' dependencies, transitively, found with
# go list) are copied to <tree>/pkg/scheduler/waittime/<name>: their Go files,
# tests included, and their testdata (fuzz corpora), with
#   - the import path github.com/kueue-waittime/kueue-waittime/pkg/<name>
#     rewritten to sigs.k8s.io/kueue/pkg/scheduler/waittime/<name>, and merged
#     into the sigs.k8s.io/kueue import group (Kueue's gci sections);
#   - Kueue's license header (the tree's hack/boilerplate.go.txt) on top.
# pkg/ stays the one source: hack/update-patches.sh regenerates the patch that
# adds these files from it, and hack/verify-patches.sh fails on any drift.
#
# The series adds them in one generated commit a package (hack/update-patches.sh),
# in an order where every package comes after the packages it and its tests
# import; a package of more than VENDOR_SPLIT_LINES lines (5000) comes as
# three, its code, its tests and its benchmarks (*_bench_test.go), so that no
# generated patch is far above that. --plan prints that order, one
# "<package> <part>" line a commit, part being all, code, tests or
# benchmarks.
#
# Usage: hack/vendor-estimator.sh TREE   (replaces TREE/pkg/scheduler/waittime)
#        hack/vendor-estimator.sh --plan
set -euo pipefail
source "$(dirname "$0")/lib.sh"
tree=${1:?usage: hack/vendor-estimator.sh TREE | --plan}

module=github.com/kueue-waittime/kueue-waittime

# estimator_packages: the names under pkg/ of pkg/estimator, pkg/dispatch and
# every package of pkg/ they or the tests of any of them import, transitively.
estimator_packages() {
  local have="dispatch estimator" next
  while :; do
    next=$(cd "${ROOT}" && GOWORK=off go list -deps -test $(printf './pkg/%s ' ${have}) |
      sed -n "s|^${module}/pkg/\([a-z0-9]*\)\$|\1|p" | sort -u | tr '\n' ' ')
    [[ "${next}" == "${have}" ]] && break
    have=${next}
  done
  echo "${have}"
}

# plan: the commits that add the packages, in order: "<package> <part>" lines.
# Each package is one node ("all") or, when its Go files hold more than
# VENDOR_SPLIT_LINES lines, "code", "tests" after the code, and "benchmarks"
# after the tests if it has any; a node
# comes after every node of a package its files import (the code's imports
# for "code"; the tests' too for "all" and "tests"), ordered by tsort, with
# ties in name order.
plan() {
  local packages name part lines graph deps d
  packages=" $(estimator_packages) "
  graph=$(
    for name in ${packages}; do
      lines=$(cat "${ROOT}/pkg/${name}"/*.go | wc -l)
      # own_imports WHAT: the packages of the set that pkg/NAME's WHAT import.
      own_imports() {
        (cd "${ROOT}" && GOWORK=off go list -f "$1" "./pkg/${name}") | tr ' ' '\n' |
          sed -n "s|^${module}/pkg/\([a-z0-9]*\)\$|\1|p" | sort -u |
          while read -r d; do [[ "${packages}" == *" ${d} "* && "${d}" != "${name}" ]] && echo "${d}"; done
      }
      code=$(own_imports '{{join .Imports " "}}')
      tests=$(own_imports '{{join .TestImports " "}} {{join .XTestImports " "}}')
      if (( lines > ${VENDOR_SPLIT_LINES:-5000} )); then
        echo "${name}:code ${name}:code"
        for d in ${code}; do echo "${d}:last ${name}:code"; done
        echo "${name}:code ${name}:tests"
        for d in ${tests}; do echo "${d}:last ${name}:tests"; done
        if compgen -G "${ROOT}/pkg/${name}/*_bench_test.go" >/dev/null; then
          echo "${name}:tests ${name}:benchmarks"
        fi
      else
        echo "${name}:all ${name}:all"
        for d in ${code} ${tests}; do echo "${d}:last ${name}:all"; done
      fi
    done
  )
  # ":last" stands for a package's last node: its benchmarks or its tests
  # when split, else all.
  for name in ${packages}; do
    if grep -q " ${name}:benchmarks$" <<< "${graph}"; then
      graph=${graph//${name}:last /${name}:benchmarks }
    elif grep -q " ${name}:tests$" <<< "${graph}"; then
      graph=${graph//${name}:last /${name}:tests }
    else
      graph=${graph//${name}:last /${name}:all }
    fi
  done
  LC_ALL=C sort -u <<< "${graph}" | tsort | tr ':' ' '
}

if [[ "${tree}" == --plan ]]; then
  plan
  exit 0
fi

header="${tree}/hack/boilerplate.go.txt"
[[ -f "${header}" ]] || die "vendor-estimator: ${header} not found (is ${tree} a Kueue tree?)"

# rewrite_go SRC DST: the Go file SRC as it lives in Kueue's tree.
rewrite_go() {
  { cat "${header}"; echo; sed "s|\"${module}/pkg/|\"${KUEUE_MODULE}/pkg/scheduler/waittime/|" "$1"; } |
    # In the import block, the rewritten imports were this module's own last
    # group: join it to a sigs.k8s.io/kueue group right before it.
    awk -v own="\"${KUEUE_MODULE}/pkg/scheduler/waittime/" -v kueue="\"${KUEUE_MODULE}/" '
      /^import \($/ { inblock = 1 }
      inblock && /^\)$/ { inblock = 0 }
      inblock && /^$/ { pending = 1; next }
      {
        if (pending) {
          if (!(index($0, own) && index(prev, kueue))) print ""
          pending = 0
        }
        print
        if (inblock && NF) prev = $0
      }' > "$2"
  gofmt -l "$2" >/dev/null || die "vendor-estimator: $1 does not parse after the rewrite"
  gofmt -w "$2"
}

dest="${tree}/pkg/scheduler/waittime"
packages=$(estimator_packages)
rm -rf "${dest}"
for name in ${packages}; do
  src="${ROOT}/pkg/${name}"
  while IFS= read -r -d '' f; do
    rel=${f#"${src}/"}
    mkdir -p "$(dirname "${dest}/${name}/${rel}")"
    case "${rel}" in
      *.go) rewrite_go "${f}" "${dest}/${name}/${rel}" ;;
      *) cp "${f}" "${dest}/${name}/${rel}" ;;
    esac
  done < <(find "${src}" -type f \( -name '*.go' -o -path "${src}/*testdata/*" \) -print0 | LC_ALL=C sort -z)
done
if grep -rl "${module}" "${dest}"; then
  die "vendor-estimator: the files above still name ${module}"
fi
echo "vendor-estimator: $(find "${dest}" -name '*.go' | wc -l) Go files of $(wc -w <<< "${packages}") packages (${packages% }) in ${dest}"
