# Shared helpers for hack/ scripts. Source it; do not run it.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KUEUE_MODULE=sigs.k8s.io/kueue
KUEUE_VERSION=${KUEUE_VERSION:-v0.19.2}
KUEUE_DIR=${KUEUE_DIR:-${ROOT}/_output/kueue}
export GOFLAGS=${GOFLAGS:--buildvcs=false}

die() { echo "$*" >&2; exit 1; }

# git in the patched tree with a fixed identity and dates, so commits (and the
# patches formatted from them) are byte-stable across machines and runs.
kgit() {
  GIT_AUTHOR_NAME="kueue-waittime" GIT_AUTHOR_EMAIL="kueue-waittime@users.noreply.github.com" \
  GIT_COMMITTER_NAME="kueue-waittime" GIT_COMMITTER_EMAIL="kueue-waittime@users.noreply.github.com" \
  GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z" \
    git -C "${KUEUE_DIR}" -c core.autocrlf=false -c commit.gpgsign=false "$@"
}

# apply_patch FILE: applies one patch file to the index of ${KUEUE_DIR} and
# commits it with the patch's own subject and body (parsed by git mailinfo,
# which unfolds long subjects), so update-patches reproduces it byte for byte.
apply_patch() {
  local patch=$1 tmp
  kgit apply --index --whitespace=nowarn "${patch}" || return 1
  tmp=$(mktemp -d)
  git mailinfo "${tmp}/body" "${tmp}/diff" < "${patch}" > "${tmp}/info"
  { sed -n 's/^Subject: //p' "${tmp}/info"; if [[ -s "${tmp}/body" ]]; then echo; cat "${tmp}/body"; fi; } > "${tmp}/msg"
  kgit commit -q --allow-empty --cleanup=verbatim -F "${tmp}/msg"
  rm -rf "${tmp}"
}

# series: prints the patch file names of patches/series in order.
series() {
  grep -v -e '^\s*$' -e '^#' "${ROOT}/patches/series" || true
}

# Kueue's scheduler performance harness (test/performance/scheduler), shared
# by hack/bench.sh and hack/perf-score.sh.

# scaled_baseline TREE SCALE OUT: writes the harness's baseline generator
# config of the Kueue tree TREE to OUT with every workload set's count
# divided by SCALE (at least 1).
scaled_baseline() {
  awk -v s="$2" '/^ *- count: [0-9]+ *$/ { n = int($3 / s); if (n < 1) n = 1; sub(/count: [0-9]+/, "count: " n) } { print }' \
    "$1/test/performance/scheduler/configs/baseline/generator.yaml" > "$3"
}

# gated_minimalkueue BINARY DIR: writes DIR/minimalkueue, which runs the
# patched minimalkueue BINARY with the WaitTimeEstimation gate on. The
# runner starts "<dir>/minimalkueue" (with --metricsPort when it scrapes)
# and names its outputs after it.
gated_minimalkueue() {
  mkdir -p "$2"
  printf '#!/bin/sh\nexec "%s" --feature-gates=WaitTimeEstimation=true "$@"\n' "$1" > "$2/minimalkueue"
  chmod +x "$2/minimalkueue"
}
