#!/usr/bin/env bash
# Builds the envtest control plane (kube-apiserver and etcd) from Go modules into
# bin/k8s/<version>/. Prebuilt envtest archives cannot be downloaded on these
# machines; the Go module proxy can serve the sources. Skipped when present.
#
# The scratch module requires k8s.io/kubernetes and replaces each staging module
# (listed as "k8s.io/x => ./staging/src/k8s.io/x" in its go.mod) with the
# published v0.<minor>.<patch> of that staging module.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

K8S_VERSION=${K8S_VERSION:-1.36.0}
ETCD_VERSION=${ETCD_VERSION:-v3.6.8}
dest="${ROOT}/bin/k8s/${K8S_VERSION}"
# "hack/envtest.sh kubectl" builds kubectl from the same modules instead
# (not needed by the tests; handy for trying the README against the demo).
# "hack/envtest.sh cluster" also makes sure of what a cluster adds to the
# envtest control plane (kube-controller-manager, kube-scheduler, and KWOK
# ${KWOK_VERSION}, which simulates nodes and the pod lifecycle).
#
# Whichever is asked for, every Kubernetes binary of the control plane that is
# missing (kube-apiserver, kube-controller-manager, kube-scheduler) is built
# in one `go build` of one scratch module: the three share most of their
# packages, so built together they compile them once (built one call after
# another, each in a scratch build cache of its own, kube-controller-manager
# alone took 8.5 minutes on 2 cores after kube-apiserver).
what=${1:-envtest}
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
kwok_dest="${ROOT}/bin/tools/kwok-${KWOK_VERSION}"
case "${what}" in
  envtest|cluster) ;;
  kubectl)
    if [[ -x "${dest}/kubectl" ]]; then
      echo "envtest: ${dest} already has kubectl"
      exit 0
    fi ;;
  *) die "envtest: unknown target ${what} (envtest, kubectl or cluster)" ;;
esac
if [[ "${what}" == cluster && ! -x "${kwok_dest}/kwok" ]]; then
  echo "envtest: building kwok ${KWOK_VERSION} into ${kwok_dest} (about 2 minutes on 2 cores)"
  (cd / && GOWORK=off GOBIN="${kwok_dest}" scratch_gocache go install "sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}")
fi
components=()
if [[ "${what}" == kubectl ]]; then
  components=(kubectl)
else
  for c in kube-apiserver kube-controller-manager kube-scheduler; do
    [[ -x "${dest}/${c}" ]] || components+=("${c}")
  done
  need_etcd=false
  [[ -x "${dest}/etcd" ]] || need_etcd=true
  if [[ ${#components[@]} -eq 0 && "${need_etcd}" == false ]]; then
    echo "envtest: ${dest} already has kube-apiserver, etcd, kube-controller-manager and kube-scheduler"
    exit 0
  fi
fi

staging_version="v0.${K8S_VERSION#1.}"
# The scratch module lives under _output/, next to the patched-Kueue
# workspace file: keep it out of that workspace.
export GOWORK=off
# The Kubernetes binaries of one call share a build cache of their own,
# deleted when it ends (see scratch_gocache in lib.sh): nothing else
# compiles their packages.
GOCACHE=$(mktemp -d "${TMPDIR:-/tmp}/gocache-k8s.XXXXXX")
export GOCACHE
trap 'rm -rf "${GOCACHE}"' EXIT
work="${ROOT}/_output/envtest-build"
rm -rf "${work}"
mkdir -p "${work}" "${dest}"
cd "${work}"

gomod=$(go mod download -json "k8s.io/kubernetes@v${K8S_VERSION}" | sed -n 's/^\s*"GoMod": "\(.*\)",$/\1/p')
[[ -f "${gomod}" ]] || die "envtest: cannot find go.mod of k8s.io/kubernetes@v${K8S_VERSION}"

{
  echo "module envtestbuild"
  echo
  echo "go 1.26"
  echo
  echo "require k8s.io/kubernetes v${K8S_VERSION}"
  echo
  echo "replace ("
  sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\t\1 => \1 '"${staging_version}"'#p' "${gomod}"
  echo ")"
} > go.mod
cat > tools.go <<'GO'
//go:build tools

package envtestbuild

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO

progress() {
  local what=$1 pid=$2 start=$SECONDS
  while kill -0 "${pid}" 2>/dev/null; do
    sleep 30
    kill -0 "${pid}" 2>/dev/null && echo "envtest: still building ${what} ($((SECONDS - start))s)"
  done
  wait "${pid}"
}

echo "envtest: resolving modules for kube-apiserver v${K8S_VERSION} (staging ${staging_version}) and etcd ${ETCD_VERSION}"
go get "k8s.io/kubernetes@v${K8S_VERSION}" >/dev/null 2>&1 || go get "k8s.io/kubernetes@v${K8S_VERSION}"
go mod tidy -e >/dev/null 2>&1 || true
# Stamp the version the way upstream's release build does, so /version and
# clients see v${K8S_VERSION} rather than v0.0.0-master.
ldflags="-X k8s.io/component-base/version.gitVersion=v${K8S_VERSION} -X k8s.io/component-base/version.gitMajor=${K8S_VERSION%%.*}"
ldflags+=" -X k8s.io/component-base/version.gitMinor=$(echo "${K8S_VERSION}" | cut -d. -f2) -X k8s.io/component-base/version.gitTreeState=clean"
if [[ ${#components[@]} -gt 0 ]]; then
  echo "envtest: building ${components[*]} in one go build (about 8 minutes on 2 cores for all three)"
  mkdir -p "${work}/out"
  pkgs=()
  for c in "${components[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/${c}"); done
  go build -ldflags "${ldflags}" -o "${work}/out/" "${pkgs[@]}" &
  progress "${components[*]}" $!
  for c in "${components[@]}"; do
    mv "${work}/out/${c}" "${dest}/${c}"
    "${dest}/${c}" --version 2>/dev/null | sed -n 1p || "${dest}/${c}" version --client
  done
fi
if [[ "${what}" != kubectl && "${need_etcd}" == true ]]; then
  go get "go.etcd.io/etcd/server/v3@${ETCD_VERSION}"
  echo "envtest: building etcd ${ETCD_VERSION}"
  go build -o "${dest}/etcd.tmp" go.etcd.io/etcd/server/v3 &
  progress etcd $!
  mv "${dest}/etcd.tmp" "${dest}/etcd"
  "${dest}/etcd" --version | sed -n 1p
fi
echo "envtest: KUBEBUILDER_ASSETS=${dest}"
