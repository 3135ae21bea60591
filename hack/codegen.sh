#!/usr/bin/env bash
# Regenerates every generated file of a Kueue tree the way Kueue v0.19.2 does
# (its `make manifests`, which runs `generate-code` first), with the generator
# versions its hack/tools module pins:
#
#   - controller-gen (sigs.k8s.io/controller-tools v0.20.1): deepcopy for
#     ./apis/..., then the CRDs, the manager ClusterRole and the webhook
#     configurations under config/components/;
#   - k8s.io/code-generator v0.35.5 (hack/tools replaces v0.36.2 with it)
#     through its own kube_codegen.sh, called exactly as Kueue's
#     hack/tools/code-generator/generate.sh calls it: gen_helpers (deepcopy,
#     defaults, conversion), gen_openapi for the visibility API (with
#     zz_generated.model_name.go) and gen_client (clientset, listers,
#     informers, applyconfigurations) over the whole apis/ directory.
#
# On the pristine v0.19.2 tree this reproduces every generated file byte for
# byte, so hack/verify-codegen.sh can demand an empty diff.
#
# The generators are built once into bin/tools/<module>-<version>/ (gitignored)
# with `go install`, from each module's own go.mod as upstream does, and
# reused while present. kube_codegen.sh runs `go install` on every call; a
# `go` shell function in front of it skips those installs when the binaries
# are already there (a missing one is installed by the very same command).
#
# The Kueue API packages are generated with GOWORK=off: they import only
# Kueue's own module graph, which is what upstream generates from (the
# CRD and OpenAPI schemas embed types of k8s.io/api and apimachinery at the
# versions Kueue's go.mod selects). So is every other run: the patched tree
# holds the estimator's packages and needs no workspace.
#
# Usage: hack/codegen.sh [tree]   (default _output/kueue)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

CONTROLLER_TOOLS_VERSION=v0.20.1
CODE_GENERATOR_VERSION=v0.35.5
TOOLS_BIN=${TOOLS_BIN:-${ROOT}/bin/tools}

tree=${1:-${KUEUE_DIR}}
[[ -f "${tree}/go.mod" ]] && grep -q '^module sigs.k8s.io/kueue$' "${tree}/go.mod" \
  || die "codegen: ${tree} is not a Kueue tree (run make patch first)"
tree=$(cd "${tree}" && pwd -P)

# A go.work in a parent directory (e.g. _output/go.work) must not leak in.
export GOWORK=off
export GO111MODULE=on

# --- tools ------------------------------------------------------------------

controller_gen_dir="${TOOLS_BIN}/controller-tools-${CONTROLLER_TOOLS_VERSION}"
controller_gen="${controller_gen_dir}/controller-gen"
if [[ ! -x "${controller_gen}" ]]; then
  echo "codegen: installing controller-gen ${CONTROLLER_TOOLS_VERSION} into ${controller_gen_dir}"
  GOBIN="${controller_gen_dir}" scratch_gocache go install "sigs.k8s.io/controller-tools/cmd/controller-gen@${CONTROLLER_TOOLS_VERSION}"
fi

# The code-generator module source (kube_codegen.sh and the go.mod its tools
# are built from). Asked from / so that no go.mod or go.work is involved.
codegen_pkg=$(cd / && go mod download -json "k8s.io/code-generator@${CODE_GENERATOR_VERSION}" \
  | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
[[ -f "${codegen_pkg}/kube_codegen.sh" ]] \
  || die "codegen: no kube_codegen.sh for k8s.io/code-generator@${CODE_GENERATOR_VERSION}"

codegen_bin="${TOOLS_BIN}/code-generator-${CODE_GENERATOR_VERSION}"
# What kube_codegen.sh installs (gen_helpers, gen_openapi, gen_client).
codegen_tools=(
  k8s.io/code-generator/cmd/conversion-gen
  k8s.io/code-generator/cmd/deepcopy-gen
  k8s.io/code-generator/cmd/defaulter-gen
  k8s.io/code-generator/cmd/validation-gen
  k8s.io/kube-openapi/cmd/openapi-gen
  k8s.io/code-generator/cmd/applyconfiguration-gen
  k8s.io/code-generator/cmd/client-gen
  k8s.io/code-generator/cmd/informer-gen
  k8s.io/code-generator/cmd/lister-gen
)
missing=()
for t in "${codegen_tools[@]}"; do
  [[ -x "${codegen_bin}/${t##*/}" ]] || missing+=("${t}")
done
if (( ${#missing[@]} > 0 )); then
  echo "codegen: installing ${#missing[@]} code-generator ${CODE_GENERATOR_VERSION} tool(s) into ${codegen_bin}"
  (cd "${codegen_pkg}" && GOBIN="${codegen_bin}" scratch_gocache go install "${missing[@]}")
fi

# --- generate -----------------------------------------------------------------

cd "${tree}"
start=${SECONDS}

echo "codegen: controller-gen object (deepcopy) for ./apis/..."
"${controller_gen}" object:headerFile="hack/boilerplate.go.txt" paths="./apis/..."

# Kueue's hack/tools/code-generator/generate.sh, with KUEUE_ROOT=${tree}.
(
  export GOBIN="${codegen_bin}"
  # kube_codegen.sh runs `go install <tools>` from its module directory before
  # each generator; skip that when every binary asked for is already in GOBIN.
  go() {
    if [[ "${1:-}" == install ]]; then
      local p
      for p in "${@:2}"; do
        [[ -x "${GOBIN}/${p##*/}" ]] || { command go "$@"; return; }
      done
      return 0
    fi
    command go "$@"
  }
  # shellcheck source=/dev/null
  source "${codegen_pkg}/kube_codegen.sh"

  kube::codegen::gen_helpers \
    --boilerplate "${tree}/hack/boilerplate.go.txt" \
    "${tree}/apis"

  kube::codegen::gen_openapi \
    --boilerplate "${tree}/hack/boilerplate.go.txt" \
    --output-dir "${tree}/apis/visibility/openapi" \
    --output-pkg "sigs.k8s.io/kueue/apis/visibility/openapi" \
    --output-model-name-file "zz_generated.model_name.go" \
    --update-report \
    "${tree}/apis/visibility"

  externals=(
    "k8s.io/api/core/v1.PodTemplateSpec:k8s.io/client-go/applyconfigurations/core/v1"
    "k8s.io/api/core/v1.Taint:k8s.io/client-go/applyconfigurations/core/v1"
    "k8s.io/api/core/v1.Toleration:k8s.io/client-go/applyconfigurations/core/v1"
  )
  # gen_client always gets the whole apis/: it deletes every file client-gen,
  # lister-gen, informer-gen and applyconfiguration-gen wrote before, so a
  # narrower input would drop the other groups' clients.
  kube::codegen::gen_client \
    --boilerplate "${tree}/hack/boilerplate.go.txt" \
    --output-dir "${tree}/client-go" \
    --output-pkg "sigs.k8s.io/kueue/client-go" \
    --with-watch \
    --with-applyconfig \
    --applyconfig-externals "$(IFS=,; echo "${externals[*]}")" \
    "${tree}/apis"
)

# The rest of Kueue's `make manifests`.
echo "codegen: controller-gen crd for ./apis/..."
"${controller_gen}" \
  crd:generateEmbeddedObjectMeta=true output:crd:artifacts:config=config/components/crd/bases \
  paths="./apis/..."
echo "codegen: controller-gen rbac and webhook for ./pkg/..."
"${controller_gen}" \
  rbac:roleName=manager-role output:rbac:artifacts:config=config/components/rbac \
  webhook output:webhook:artifacts:config=config/components/webhook \
  paths="./pkg/controller/...;./pkg/webhooks/...;./pkg/util/cert/...;./pkg/visibility/...;./pkg/config/..."

# hack/kueue-src.sh keeps a copy of the CRD bases where Kueue's integration
# framework looks for CRDs; keep it in step with the regenerated bases.
if [[ -d config/components/crd/_output ]]; then
  cp config/components/crd/bases/*.yaml config/components/crd/_output/
fi

echo "codegen: regenerated ${tree} in $((SECONDS - start)) s"
