# Deployment targets: manifests (config/ over Kueue's own), the manager image
# built without Docker, and their tests. The Makefile includes this file.

##@ Deployment

# The manager image: the tag `make image` gives the docker tarball and the
# image `make manifests` deploys. Set it to where you push the image.
IMAGE ?= kueue-waittime/kueue:v0.19.2-waittime
export IMAGE
# Extra hack/image.sh flags; test-deploy adds --verify-reproducible.
IMAGE_FLAGS ?=

.PHONY: manifests
manifests: ## Render config/ over Kueue v0.19.2's own manifests: _output/manifests/kueue-waittime.yaml (IMAGE=... retargets).
	hack/manifests.sh

.PHONY: image
image: $(WORKSPACE) ## Build the manager image without Docker: _output/image/kueue-waittime.tar (docker load) and _output/image/oci.
	hack/image.sh $(IMAGE_FLAGS)

# A target-specific variable reaches the prerequisites: here `image` builds
# the image a second time from scratch and fails unless it is byte-identical.
test-deploy: IMAGE_FLAGS = --verify-reproducible

.PHONY: test-deploy
test-deploy: manifests image envtest $(WORKSPACE) ## Dry-run the manifests on envtest, diff them with upstream's, check the image (built twice: reproducible), render the Helm chart's RBAC.
	$(GO_PATCHED) vet ./test/deploy/...
	$(GO_PATCHED) test -count=1 -timeout 10m ./test/deploy/...
	cd test/helmchart && GOWORK=off go vet . && KUEUE_DIR=$(KUEUE_DIR) GOWORK=off go test -count=1 .
