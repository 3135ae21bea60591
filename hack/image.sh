#!/usr/bin/env bash
# Builds the patched Kueue manager image with neither Docker nor a registry:
#
#   _output/image/kueue-waittime.tar  docker-loadable (`docker load -i`), tagged IMAGE;
#   _output/image/oci/                the same image as an OCI image layout;
#   _output/image/digest              its manifest digest.
#
# The image has what Kueue's Dockerfile puts on gcr.io/distroless/static:nonroot,
# in one layer: the statically linked manager at /manager (where Kueue's
# manifests run it), a CA bundle at /etc/ssl/certs/ca-certificates.crt (the
# host's, CA_BUNDLE), /etc/passwd and /etc/group with root, nobody and nonroot
# (65532), /home/nonroot and /tmp (1777). Config: entrypoint /manager, user
# 65532:65532, workdir /, platform IMAGE_PLATFORM (linux/amd64).
#
# Reproducible: the binary is built with -trimpath, no VCS stamping and fixed
# version ldflags; the layer tarball has a fixed entry order, owners and
# mtimes; the image's created time is SOURCE_DATE_EPOCH (default: the commit
# time of this repository's HEAD, else 0). Given the same sources, Go toolchain
# and CA bundle, two builds give the same digest; --verify-reproducible builds
# the image a second time from scratch (not the binary) and fails unless both
# are byte for byte identical.
#
# crane (go-containerregistry, built once into bin/tools/crane-<version>/)
# appends the layer onto an empty base and sets the config. `crane mutate`
# works only on images in a registry, so an in-memory `crane registry serve`
# runs on a random port of 127.0.0.1 for the duration of the build (stopped on
# exit); nothing is pushed anywhere else. crane has no flag for the created
# time: it is set through that registry's API with curl.
#
# Usage:
#   IMAGE=registry.example.com/kueue:tag hack/image.sh [--verify-reproducible]
#   hack/image.sh --manager-only PATH    # only the static manager binary (Dockerfile)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

CRANE_VERSION=v0.20.6
TOOLS_BIN=${TOOLS_BIN:-${ROOT}/bin/tools}
IMAGE=${IMAGE:-kueue-waittime/kueue:${KUEUE_VERSION}-waittime}
IMAGE_PLATFORM=${IMAGE_PLATFORM:-linux/amd64}
CA_BUNDLE=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
out="${ROOT}/_output/image"

usage() { die "usage: hack/image.sh [--verify-reproducible] | --manager-only PATH"; }
mode=image verify=false manager_dest=
case "${1:-}" in
  "") ;;
  --verify-reproducible) verify=true ;;
  --manager-only) mode=manager; manager_dest=${2:-}; [[ -n "${manager_dest}" ]] || usage ;;
  *) usage ;;
esac

if [[ -z "${SOURCE_DATE_EPOCH:-}" ]]; then
  SOURCE_DATE_EPOCH=$(git -C "${ROOT}" log -1 --format=%ct 2>/dev/null || echo 0)
fi
[[ "${SOURCE_DATE_EPOCH}" =~ ^[0-9]+$ ]] || die "image: SOURCE_DATE_EPOCH must be seconds since the epoch, got '${SOURCE_DATE_EPOCH}'"
created=$(date -u -d "@${SOURCE_DATE_EPOCH}" +%Y-%m-%dT%H:%M:%SZ)

# --- the manager binary -------------------------------------------------------

# build_manager DEST: the patched sigs.k8s.io/kueue/cmd/kueue, statically
# linked for IMAGE_PLATFORM, with the version fields Kueue's Makefile sets.
build_manager() {
  local dest=$1 version commit
  [[ -f "${KUEUE_DIR}/go.mod" ]] || die "image: no patched tree ${KUEUE_DIR} (run make patch)"
  version=${GIT_TAG:-${KUEUE_VERSION}-waittime}
  if [[ -z "${GIT_COMMIT:-}" ]]; then
    commit=$(git -C "${ROOT}" rev-parse HEAD 2>/dev/null || echo unknown)
    if [[ "${commit}" != unknown && -n "$(git -C "${ROOT}" status --porcelain 2>/dev/null)" ]]; then
      version+="-dirty"
    fi
  else
    commit=${GIT_COMMIT}
  fi
  local ldflags="-X sigs.k8s.io/kueue/pkg/version.GitVersion=${version}"
  ldflags+=" -X sigs.k8s.io/kueue/pkg/version.GitCommit=${commit}"
  ldflags+=" -X sigs.k8s.io/kueue/pkg/version.BuildDate=${created}"
  echo "image: building the manager for ${IMAGE_PLATFORM} (${version}, ${commit}, $(go env GOVERSION))"
  mkdir -p "$(dirname "${dest}")"
  # The patched tree alone, with Kueue's go.mod: it holds the estimator.
  (cd "${KUEUE_DIR}" && GOWORK=off CGO_ENABLED=0 GOOS="${IMAGE_PLATFORM%%/*}" GOARCH="${IMAGE_PLATFORM#*/}" \
    "${ROOT}/hack/heartbeat.sh" "image: still compiling the manager" go build -trimpath -ldflags "${ldflags}" -o "${dest}" ./cmd/kueue)
}

if [[ "${mode}" == manager ]]; then
  build_manager "${manager_dest}"
  exit 0
fi

# --- tools and inputs ---------------------------------------------------------

crane="${TOOLS_BIN}/crane-${CRANE_VERSION}/crane"
if [[ ! -x "${crane}" ]]; then
  echo "image: installing crane ${CRANE_VERSION} into ${crane%/*}"
  (cd / && GOWORK=off GOBIN="${crane%/*}" scratch_gocache go install "github.com/google/go-containerregistry/cmd/crane@${CRANE_VERSION}")
fi
command -v curl >/dev/null || die "image: curl is needed (apt-get install curl)"
[[ -s "${CA_BUNDLE}" ]] || die "image: no CA bundle at ${CA_BUNDLE}: install it (apt-get install ca-certificates) or set CA_BUNDLE"
tar --version 2>/dev/null | grep -q 'GNU tar' || die "image: GNU tar is needed for a reproducible layer"

work="${out}/work"
rm -rf "${out}"
mkdir -p "${work}"
build_manager "${work}/manager"

# --- the layer ----------------------------------------------------------------

# make_layer DIR: stages the root filesystem in DIR/rootfs and writes
# DIR/layer.tar: entries in a fixed order, numeric owners, one mtime.
make_layer() {
  local dir=$1 rootfs=$1/rootfs
  rm -rf "${rootfs}"
  mkdir -p "${rootfs}/etc/ssl/certs" "${rootfs}/home/nonroot" "${rootfs}/tmp"
  cp "${work}/manager" "${rootfs}/manager"
  cp "${CA_BUNDLE}" "${rootfs}/etc/ssl/certs/ca-certificates.crt"
  printf '%s\n' \
    'root:x:0:0:root:/root:/sbin/nologin' \
    'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin' \
    'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' > "${rootfs}/etc/passwd"
  printf '%s\n' 'root:x:0:' 'nobody:x:65534:' 'nonroot:x:65532:' > "${rootfs}/etc/group"
  # Leading zeros: GNU chmod keeps a directory's setgid bit otherwise.
  chmod 00755 "${rootfs}/etc" "${rootfs}/etc/ssl" "${rootfs}/etc/ssl/certs" "${rootfs}/home" "${rootfs}/manager"
  chmod 00644 "${rootfs}/etc/passwd" "${rootfs}/etc/group" "${rootfs}/etc/ssl/certs/ca-certificates.crt"
  chmod 00700 "${rootfs}/home/nonroot"
  chmod 01777 "${rootfs}/tmp"
  local t=(tar --format=gnu --no-recursion --numeric-owner --mtime="@${SOURCE_DATE_EPOCH}" -C "${rootfs}" -f "${dir}/layer.tar")
  rm -f "${dir}/layer.tar"
  "${t[@]}" --owner=0 --group=0 -c etc etc/group etc/passwd etc/ssl etc/ssl/certs etc/ssl/certs/ca-certificates.crt home
  "${t[@]}" --owner=65532 --group=65532 -r home/nonroot
  "${t[@]}" --owner=0 --group=0 -r manager tmp
}

# --- the registry -------------------------------------------------------------

"${crane}" registry serve --address 127.0.0.1:0 2> "${work}/registry.log" &
registry_pid=$!
trap 'kill "${registry_pid}" 2>/dev/null || true; wait "${registry_pid}" 2>/dev/null || true' EXIT
# A background job of a script ignores Ctrl-C: exit, and so stop it, on signals.
trap 'exit 130' INT TERM
port=
for _ in $(seq 100); do
  port=$(sed -n 's/.*serving on port \([0-9]*\).*/\1/p' "${work}/registry.log")
  [[ -n "${port}" ]] && break
  kill -0 "${registry_pid}" 2>/dev/null || { cat "${work}/registry.log" >&2; die "image: crane registry serve exited"; }
  sleep 0.1
done
[[ -n "${port}" ]] || die "image: crane registry serve did not report its port"
registry="127.0.0.1:${port}"

# run CMD...: runs a command quietly, showing its output if it fails.
run() {
  local log
  log=$(mktemp "${work}/log.XXXXXX")
  "$@" > "${log}" 2>&1 || { cat "${log}" >&2; die "image: failed: $*"; }
  rm -f "${log}"
}

# assemble DIR NAME: builds the image from scratch into DIR (layer, then
# kueue-waittime.tar, oci/ and digest), through repository NAME of the
# registry.
assemble() {
  local dir=$1 repo=$2 ref="${registry}/$2"
  mkdir -p "${dir}"
  make_layer "${dir}"
  run "${crane}" append --new_layer "${dir}/layer.tar" --new_tag "${ref}:layered"

  # created: the empty base leaves the zero time in the config and history.
  local config manifest old new
  config=$("${crane}" config "${ref}:layered")
  old='"created":"0001-01-01T00:00:00Z"'
  [[ "${config}" == *"${old}"* ]] || die "image: unexpected config from crane append: ${config}"
  new=${config//${old}/\"created\":\"${created}\"}
  printf '%s' "${new}" > "${dir}/config.json"
  local old_desc new_desc new_digest
  old_desc="\"size\":$(printf '%s' "${config}" | wc -c),\"digest\":\"sha256:$(printf '%s' "${config}" | sha256sum | cut -d' ' -f1)\""
  new_digest="sha256:$(sha256sum < "${dir}/config.json" | cut -d' ' -f1)"
  new_desc="\"size\":$(wc -c < "${dir}/config.json"),\"digest\":\"${new_digest}\""
  manifest=$("${crane}" manifest "${ref}:layered")
  [[ "${manifest}" == *"${old_desc}"* ]] || die "image: config descriptor ${old_desc} not in manifest ${manifest}"
  printf '%s' "${manifest//${old_desc}/${new_desc}}" > "${dir}/manifest.json"
  local media_type
  media_type=$(sed -n 's/^{"schemaVersion":2,"mediaType":"\([^"]*\)".*/\1/p' "${dir}/manifest.json")
  [[ -n "${media_type}" ]] || die "image: no mediaType in manifest ${manifest}"
  run curl -fsS --noproxy '*' -X POST -H 'Content-Type: application/octet-stream' \
    --data-binary "@${dir}/config.json" "http://${registry}/v2/${repo}/blobs/uploads/?digest=${new_digest}"
  run curl -fsS --noproxy '*' -X PUT -H "Content-Type: ${media_type}" \
    --data-binary "@${dir}/manifest.json" "http://${registry}/v2/${repo}/manifests/dated"

  local mutate=("${crane}" mutate "${ref}:dated" --entrypoint=/manager --user=65532:65532 --workdir=/
    --set-platform="${IMAGE_PLATFORM}")
  run "${mutate[@]}" --tag "${ref}:final"
  run "${mutate[@]}" --tag "${IMAGE}" --output "${dir}/kueue-waittime.tar"
  run "${crane}" pull --format=oci "${ref}:final" "${dir}/oci"
  run "${crane}" validate --tarball "${dir}/kueue-waittime.tar"
  run "${crane}" validate --remote "${ref}:final"

  local pushed saved
  pushed=$("${crane}" digest "${ref}:final")
  saved=$("${crane}" digest --tarball "${dir}/kueue-waittime.tar")
  [[ "${pushed}" == "${saved}" ]] || die "image: the tarball's digest ${saved} differs from the image's ${pushed}"
  grep -q "\"digest\": *\"${pushed}\"" "${dir}/oci/index.json" || die "image: ${dir}/oci/index.json does not hold ${pushed}"
  echo "${pushed}" > "${dir}/digest"
  rm -rf "${dir}/rootfs" "${dir}/layer.tar" "${dir}/config.json" "${dir}/manifest.json"
}

start=${SECONDS}
assemble "${out}" kueue-waittime/first
digest=$(cat "${out}/digest")
echo "image: ${IMAGE} ${digest} for ${IMAGE_PLATFORM}, created ${created} ($((SECONDS - start)) s to assemble)"

if [[ "${verify}" == true ]]; then
  assemble "${work}/again" kueue-waittime/again
  again=$(cat "${work}/again/digest")
  [[ "${again}" == "${digest}" ]] || die "image: not reproducible: a second build gave ${again}, the first ${digest}"
  cmp -s "${out}/kueue-waittime.tar" "${work}/again/kueue-waittime.tar" \
    || die "image: not reproducible: the two docker tarballs differ"
  diff -r "${out}/oci" "${work}/again/oci" >/dev/null || die "image: not reproducible: the two OCI layouts differ"
  echo "image: reproducible: a second build from scratch gave the same ${digest}, byte for byte"
fi
rm -rf "${work}"
echo "image: wrote ${out}/kueue-waittime.tar (docker load -i) and ${out}/oci (OCI layout)"
