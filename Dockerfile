# The patched Kueue manager image, built the way Kueue v0.19.2's own Dockerfile
# builds upstream's: a Go builder stage, then the manager alone at /manager on
# distroless static:nonroot (same base images and digests as upstream's).
#
#   docker build -t kueue-waittime/kueue:v0.19.2-waittime \
#     --build-arg GIT_COMMIT=$(git rev-parse HEAD) .
#
# Without Docker, `make image` (hack/image.sh) assembles an equivalent image
# reproducibly with crane; this file is for CI systems that build with Docker.

# defaulted ARGs need to be declared first
ARG BUILDER_IMAGE=golang:1.26@sha256:3aff6657219a4d9c14e27fb1d8976c49c29fddb70ba835014f477e1c70636647
ARG BASE_IMAGE=gcr.io/distroless/static:nonroot@sha256:963fa6c544fe5ce420f1f54fb88b6fb01479f054c8056d0f74cc2c6000df5240

FROM --platform=${BUILDPLATFORM} ${BUILDER_IMAGE} AS builder
WORKDIR /workspace
# The patched tree first (it changes only with patches/): pristine
# sigs.k8s.io/kueue v0.19.2 from the Go module proxy into _output/kueue, with
# patches/series applied (it holds the estimator's packages and builds alone).
COPY go.mod go.sum ./
COPY hack/ hack/
COPY patches/ patches/
RUN hack/patch.sh
# Then this module's sources (.dockerignore keeps _output/ out, so the
# patched tree stays; hack/image.sh reads only the tree and the build
# arguments) and the static manager from the tree alone, cross-compiled.
COPY . .
ARG TARGETARCH
# The version fields (pkg/version) the manager reports; .git is not copied in.
ARG GIT_COMMIT
ARG SOURCE_DATE_EPOCH
RUN IMAGE_PLATFORM=linux/${TARGETARCH} hack/image.sh --manager-only /workspace/manager

# final image, implicitly --platform=${TARGETPLATFORM}
FROM ${BASE_IMAGE}
WORKDIR /
USER 65532:65532
ENTRYPOINT ["/manager"]
COPY --from=builder /workspace/manager /manager
