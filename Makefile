# kueue-waittime: wait time estimation for Kueue v0.19.2.
# `make demo` runs the main job; `make test` runs every test. Both install what
# they need (Go is the only prerequisite).

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

ROOT := $(CURDIR)
K8S_VERSION ?= 1.36.0
KUBEBUILDER_ASSETS ?= $(ROOT)/bin/k8s/$(K8S_VERSION)
KUEUE_DIR := $(ROOT)/_output/kueue
WORKSPACE := $(ROOT)/_output/go.work
# Every go command builds with -trimpath: a package's compilation then does
# not depend on the directory it sits in (without it Go keys the compilation
# on that directory), so a fresh clone in another folder, the patched tree
# under _output/kueue and the copies verify-patches and verify-codegen make
# share Go's build and test caches instead of compiling the same Kueue
# packages once per folder.
GOFLAGS_ALL := -buildvcs=false -trimpath
# cgo off for every go command but the race detector's: the image's manager
# is static, and with cgo on the net package and every package above it
# (client-go, controller-runtime, Kueue) compile apart from the static build.
# So the tests, go vet, bin/ and the image share one compilation of each
# package. -race needs cgo: the commands that use it set $(RACE).
export CGO_ENABLED := 0
RACE := CGO_ENABLED=1
# This module's harness and CLI build with the patched tree through the
# workspace (they construct the patched tree's in-tree estimator).
GO_PATCHED := GOWORK=$(WORKSPACE) GOFLAGS="$(GOFLAGS_ALL)" go
# The patched tree alone, with Kueue's own go.mod (run in $(KUEUE_DIR)); and
# the library against the unpatched v0.19.2 module (run here).
GO_KUEUE := GOWORK=off GOFLAGS="$(GOFLAGS_ALL)" go
GO_PRISTINE := GOWORK=off GOFLAGS="$(GOFLAGS_ALL)" go
INTEGRATION_TIMEOUT ?= 30m

export KUBEBUILDER_ASSETS

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

##@ Patched Kueue

.PHONY: kueue-src
kueue-src: ## Copy pristine Kueue v0.19.2 from the Go module cache into _output/kueue.
	hack/kueue-src.sh

.PHONY: patch
patch: ## Apply patches/series to a pristine _output/kueue and write _output/go.work.
	hack/patch.sh

$(WORKSPACE): patches/series $(wildcard patches/*.patch)
	hack/patch.sh

.PHONY: update-patches
update-patches: ## Regenerate patches/ from the commits in _output/kueue.
	hack/update-patches.sh

.PHONY: verify-patches
verify-patches: ## Fresh tree: apply each patch, vet and test what it touches, vet and build the whole tree; fail on drift from a regeneration.
	hack/verify-patches.sh

.PHONY: verify-patches-tree
verify-patches-tree: ## As verify-patches, but go vet ./... of the whole tree after every patch (about 35 min on 2 cores).
	VERIFY_PATCHES_EACH=tree hack/verify-patches.sh

.PHONY: verify-git-am
verify-git-am: ## git am the series on Kueue's own v0.19.2 tag (KUEUE_GIT=a clone with tags), then build, vet and test it.
	hack/verify-git-am.sh $(KUEUE_GIT)

.PHONY: envtest
envtest: ## Build kube-apiserver, etcd, kube-controller-manager and kube-scheduler from Go modules into bin/k8s/ (once, in one go build).
	hack/envtest.sh

.PHONY: kubectl
kubectl: ## Build kubectl v1.36.0 from Go modules into bin/k8s/ (once; for trying the README's commands).
	hack/envtest.sh kubectl

.PHONY: cluster-tools
cluster-tools: ## As envtest, and KWOK v0.8.0 into bin/tools/ (once).
	hack/envtest.sh cluster

.PHONY: build
build: $(WORKSPACE) ## Build bin/kueue (the patched manager), bin/kueuectl (patched) and bin/kueue-waittime.
	@echo "build: compiling the patched Kueue manager, kueuectl and kueue-waittime (the first time: about 5 minutes on 2 cores)"
	# Static (CGO_ENABLED=0, as every go command here but -race), as
	# hack/image.sh builds the image's manager: the two then share every
	# compiled package and differ only in the link.
	cd $(KUEUE_DIR) && $(ROOT)/hack/heartbeat.sh "build: still compiling bin/kueue, the patched manager" env $(GO_KUEUE) build -o $(ROOT)/bin/kueue ./cmd/kueue
	cd $(KUEUE_DIR) && $(ROOT)/hack/heartbeat.sh "build: still compiling bin/kueuectl" env $(GO_KUEUE) build -o $(ROOT)/bin/kueuectl ./cmd/kueuectl
	$(MAKE) --no-print-directory build-cli
	@echo "built bin/kueue, bin/kueuectl and bin/kueue-waittime"

.PHONY: build-cli
build-cli: $(WORKSPACE) ## Build bin/kueue-waittime alone (make demo needs it and the image, not bin/kueue or bin/kueuectl).
	hack/heartbeat.sh "build: still compiling bin/kueue-waittime" env $(GO_PATCHED) build -o bin/kueue-waittime ./cmd/kueue-waittime

include hack/codegen.mk
# Deployment (config/, manifests, image) and benchmark targets.
-include hack/deploy.mk
-include hack/bench.mk

##@ Tests

.PHONY: test
# `make test` guards every submission; each step prints its time. Its last
# step, test-slow, runs the slow checks (hack/slow-tier.sh) whose inputs
# changed since a pass on record, and says which it skipped and why; the
# per-patch checks of verify-patches are keyed the same way.
# `make test-all` runs everything, records or not.
TEST_STEPS := test-unit build verify-patches verify-codegen test-upstream test-integration test-deploy e2e test-monitoring test-slow
test: ## Every submission's tests: unit, patched build, patch and codegen verification, upstream tests, integration, deployment, a short end to end, monitoring, and the slow checks whose inputs changed (each step's time printed).
	@start=$$SECONDS; for step in $(TEST_STEPS); do \
	  t=$$SECONDS; $(MAKE) --no-print-directory $$step; \
	  echo "test: $$step passed in $$((SECONDS - t)) s (at $$((SECONDS - start)) s)"; \
	done; echo "test: all $(words $(TEST_STEPS)) steps passed in $$((SECONDS - start)) s"

.PHONY: test-all
test-all: ## As make test, but every patch verified one by one and every slow check run, whatever hack/verified.txt and this machine's records say (about 25 minutes more).
	VERIFY_PATCHES_FORCE=1 SLOW_TIER_FORCE=1 $(MAKE) --no-print-directory test

.PHONY: test-slow
test-slow: $(WORKSPACE) envtest ## The slow checks (gate-off scheduler suite, fault e2e, perf-harness score) whose inputs have no pass on record (SLOW_TIER_FORCE=1: all).
	hack/slow-tier.sh

.PHONY: test-unit
test-unit: ## Library unit tests against the unpatched v0.19.2 module, under the race detector (Go's test cache skips unchanged packages).
	$(GO_PRISTINE) vet ./pkg/...
	$(RACE) $(GO_PRISTINE) test -race ./pkg/...

# Kueue's own tests of every package the patches touch or add, on the
# patched tree with Kueue's go.mod; less the estimator's packages under
# ./pkg/scheduler/waittime/, the generated copy of this repository's pkg/
# whose tests test-unit runs (verify-patches proves the copy byte for byte and
# vets it with its tests against Kueue's go.mod).
UPSTREAM_PACKAGES ?= ./pkg/features/... ./pkg/scheduler/... ./pkg/cache/queue/... ./pkg/util/heap/... ./pkg/metrics/... ./pkg/visibility/... ./pkg/config/... ./apis/config/... ./cmd/kueue/... ./cmd/kueuectl/... ./apis/visibility/...
# Kueue's own scheduler integration suite on the patched tree: in make test
# with the gate on and the estimator wired into the scheduler; with the gate
# off in the slow tier (test-upstream-gate-off).
UPSTREAM_INTEGRATION ?= ./test/integration/singlecluster/scheduler

.PHONY: test-upstream
test-upstream: $(WORKSPACE) envtest ## Kueue's own unit tests of the patched and added packages and its scheduler integration suite with the estimator on, GOWORK=off.
	cd $(KUEUE_DIR) && pkgs=$$($(GO_KUEUE) list $(UPSTREAM_PACKAGES) | grep -v -e '/pkg/scheduler/waittime$$' -e '/pkg/scheduler/waittime/') && $(GO_KUEUE) test $$pkgs
	cd $(KUEUE_DIR) && PROJECT_DIR=$(KUEUE_DIR)/ $(GO_KUEUE) test -count=1 -timeout $(INTEGRATION_TIMEOUT) $(UPSTREAM_INTEGRATION) -args -wait-time-estimation

.PHONY: test-upstream-gate-off
test-upstream-gate-off: $(WORKSPACE) envtest ## Kueue's scheduler integration suite on the patched tree with the gate off (slow tier).
	cd $(KUEUE_DIR) && PROJECT_DIR=$(KUEUE_DIR)/ $(GO_KUEUE) test -count=1 -timeout $(INTEGRATION_TIMEOUT) $(UPSTREAM_INTEGRATION)

.PHONY: test-integration
# The packages of cmd/ whose tests start control planes (envtest): run every
# time (-count=1), since what they run lies outside Go's view of their inputs.
CMD_CONTROLPLANE_PACKAGES := ./cmd/kueue-waittime/ ./cmd/kueue-waittime/internal/dispatched/ ./cmd/kueue-waittime/internal/eval/ ./cmd/kueue-waittime/internal/whatif/
# The evaluation harness's scenario spec, runner and reports, whose tests
# start no control plane: cached like the other packages of cmd/.
HARNESS_PACKAGES := ./internal/harness/scenario/ ./internal/harness/runner/ ./internal/harness/report/
test-integration: $(WORKSPACE) envtest ## CLI and evaluation-harness tests, the docs' examples (test/docs), and the integration suites on envtest with the patched Kueue under the race detector.
	$(GO_PATCHED) vet ./cmd/... ./internal/... ./test/...
	pkgs=$$($(GO_PATCHED) list ./cmd/... $(HARNESS_PACKAGES) ./test/docs/... | grep -v -x $(foreach p,$(CMD_CONTROLPLANE_PACKAGES),-e 'github.com/kueue-waittime/kueue-waittime/$(patsubst ./%/,%,$(p))')) && $(GO_PATCHED) test $$pkgs
	PROJECT_DIR=$(KUEUE_DIR)/ $(GO_PATCHED) test -count=1 -timeout $(INTEGRATION_TIMEOUT) $(CMD_CONTROLPLANE_PACKAGES)
	PROJECT_DIR=$(KUEUE_DIR)/ $(RACE) $(GO_PATCHED) test -race -count=1 -timeout $(INTEGRATION_TIMEOUT) ./test/integration/... ./internal/harness/controlplane/ ./test/dispatcheval/

.PHONY: test-monitoring
test-monitoring: $(WORKSPACE) ## config/monitoring: PromQL parsed by Prometheus's parser against the manager's registry; promtool check/test rules.
	@eval "$$(hack/monitoring-tools.sh)"; export PROMTOOL PROMQLCHECK; \
	  $(GO_PATCHED) vet ./test/monitoring/ && $(GO_PATCHED) test -count=1 ./test/monitoring/
	cd hack/tools && GOWORK=off go vet ./...

# The local cluster (internal/harness/cluster): what it runs and what it deploys.
KWOK ?= $(ROOT)/bin/tools/kwok-v0.8.0/kwok
KUEUE_MANIFESTS ?= $(ROOT)/_output/manifests/kueue-waittime.yaml
KUEUE_IMAGE_LAYOUT ?= $(ROOT)/_output/image/oci
CLUSTER_ENV := KWOK=$(KWOK) KUEUE_MANIFESTS=$(KUEUE_MANIFESTS) KUEUE_IMAGE_LAYOUT=$(KUEUE_IMAGE_LAYOUT) KUEUECTL=$(ROOT)/bin/kueuectl KUEUE_WAITTIME=$(ROOT)/bin/kueue-waittime
E2E_TIMEOUT ?= 30m

# The end-to-end tests on the local cluster: make test runs the short set
# (Jobs, plain pods, GPU and DRA Jobs, the demo, metrics over HTTPS, kueuectl's
# what-if); the slow tier runs the rest (e2e-faults).
E2E_SHORT := ^(TestDemoRunsJobsOnItsOwnClusterAndScoresFromTheManagersMetrics|TestJobsQueueRunAndFinishThroughKueue|TestGPUJobRunsOnAGPUNode|TestPlainPodsQueueAndRunThroughKueue|TestDRAJobGetsADeviceOnADRANode|TestMetricsServedOverHTTPSToAnAuthorizedServiceAccount|TestKueuectlCreateWaitTimeReviewAnswersBeforeSubmitting|TestTopologyThatCanNeverHoldAJobMakesItUnfeasible)$$

.PHONY: e2e
e2e: envtest cluster-tools manifests image build ## End to end on a local cluster (KWOK nodes, real Jobs) with the image's manager deployed from the manifests: the short set.
	$(GO_PATCHED) vet ./internal/harness/cluster/ ./test/e2e/
	$(RACE) $(GO_PATCHED) test -race -count=1 ./internal/harness/cluster/
	$(CLUSTER_ENV) $(GO_PATCHED) test -count=1 -v -timeout $(E2E_TIMEOUT) -run '$(E2E_SHORT)' ./test/e2e/

.PHONY: e2e-faults
e2e-faults: envtest cluster-tools manifests image build ## The end-to-end tests the short set leaves out: faults (manager killed, API server restarted, malformed configuration), replicas, eval as Jobs (slow tier).
	$(GO_PATCHED) vet ./test/e2e/
	$(CLUSTER_ENV) $(GO_PATCHED) test -count=1 -v -timeout $(E2E_TIMEOUT) -skip '$(E2E_SHORT)' ./test/e2e/

.PHONY: e2e-all
e2e-all: envtest cluster-tools manifests image build ## Every end-to-end test on one cluster.
	$(CLUSTER_ENV) $(GO_PATCHED) test -count=1 -v -timeout $(E2E_TIMEOUT) ./test/e2e/

.PHONY: cluster
cluster: envtest cluster-tools manifests image build ## A local cluster with Kueue deployed from the manifests, until Ctrl-C (kubeconfig: _output/cluster/kubeconfig).
	$(CLUSTER_ENV) bin/kueue-waittime cluster --dir _output/cluster

##@ Main job

DEMO_ARGS ?=
# Every scenario of test/eval (but the smoke and quick ones), writing the
# tables, JSON, per-workload CSVs and plots of test/eval/results.
EVAL_SCENARIOS ?= table2 table3 table4 mm4 partition cold-start mt-cohort mt-cohort-busy mt-priority mt-afs mt-mixed mt-throughput mt-dra-cohort mt-lenders
# EVAL_OUT is where it writes and what it summarizes afterwards.
EVAL_OUT ?= test/eval/results
EVAL_ARGS ?= $(foreach s,$(EVAL_SCENARIOS),-f test/eval/$(s).yaml) --out $(EVAL_OUT)

.PHONY: demo
demo: envtest cluster-tools manifests image build-cli ## The main job: Jobs through Kueue on a local cluster (KWOK nodes), live wait-time table (Ctrl-C stops).
	$(CLUSTER_ENV) PROJECT_DIR=$(KUEUE_DIR)/ bin/kueue-waittime demo $(DEMO_ARGS)

.PHONY: eval
eval: envtest build ## Every evaluation scenario on the real scheduler into EVAL_OUT (test/eval/results; about 32 min on 2 cores), then its summary; without EVAL_ARGS it also removes the reruns of the results it replaces.
	$(if $(filter file,$(origin EVAL_ARGS)),rm -rf $(EVAL_OUT)/reruns)
	@start=$$SECONDS; PROJECT_DIR=$(KUEUE_DIR)/ bin/kueue-waittime eval $(EVAL_ARGS); \
	echo "eval: wall time $$((SECONDS - start)) s"
	@# The directory the run wrote: EVAL_ARGS's --out (EVAL_OUT by default).
	out=$$(echo ' $(EVAL_ARGS) ' | sed -n 's/.* --out[= ]\([^ ]*\) .*/\1/p'); bin/kueue-waittime eval --summarize "$${out:-$(EVAL_OUT)}"

.PHONY: eval-rerun
eval-rerun: envtest build ## Run SCENARIOS (names of test/eval/*.yaml) again, same model, into test/eval/results/reruns/run-N (SEED=N: with that base seed, other arrivals); the summary sets their slices beside make eval's (about 2 min a scenario).
	@test -n "$(SCENARIOS)" || { echo "eval-rerun: name the scenarios to run again, e.g. make eval-rerun SCENARIOS='partition mt-cohort'"; exit 2; }
	@n=2; while [ -e test/eval/results/reruns/run-$$n ]; do n=$$((n+1)); done; out=test/eval/results/reruns/run-$$n; \
	for s in $(SCENARIOS); do \
	  PROJECT_DIR=$(KUEUE_DIR)/ bin/kueue-waittime eval -f test/eval/$$s.yaml $(if $(SEED),--seed $(SEED)) --out $$out || { rm -rf $$out; exit 1; }; \
	done; rm -f $$out/*.png; echo "eval-rerun: wrote $$out"
	bin/kueue-waittime eval --summarize test/eval/results

.PHONY: eval-calibration-replay
eval-calibration-replay: envtest build ## Every scenario of make eval into _output/calibration-replay (about 32 min), then each ClusterQueue's calibrators replayed in variants on its outcomes into replay.md there.
	rm -rf _output/calibration-replay
	@start=$$SECONDS; PROJECT_DIR=$(KUEUE_DIR)/ bin/kueue-waittime eval $(foreach s,$(EVAL_SCENARIOS),-f test/eval/$(s).yaml) --out _output/calibration-replay; \
	echo "eval-calibration-replay: wall time $$((SECONDS - start)) s"
	rm -f _output/calibration-replay/*.png
	bin/kueue-waittime eval --replay-calibration _output/calibration-replay > _output/calibration-replay/replay.md

.PHONY: eval-quick
eval-quick: envtest build ## One small multi-tenant scenario (a few minutes) into _output/eval-quick.
	@start=$$SECONDS; PROJECT_DIR=$(KUEUE_DIR)/ bin/kueue-waittime eval -f test/eval/quick.yaml --out _output/eval-quick; \
	echo "eval-quick: wall time $$((SECONDS - start)) s"

.PHONY: eval-cluster
eval-cluster: envtest cluster-tools manifests image build ## test/eval/cluster.yaml as Jobs on a local cluster (eval --cluster) into _output/eval-cluster.
	@start=$$SECONDS; $(CLUSTER_ENV) bin/kueue-waittime eval --cluster -f test/eval/cluster.yaml --out _output/eval-cluster; \
	echo "eval-cluster: wall time $$((SECONDS - start)) s"

# MultiKueue's dispatchers on the same seeded arrivals (test/dispatcheval):
# a manager and two worker control planes on envtest, once per dispatcher and
# seed, and a run where a worker goes away. DISPATCH_EVAL_SEEDS,
# DISPATCH_EVAL_JOBS, DISPATCH_EVAL_DISPATCHERS and DISPATCH_EVAL_LOSS set the
# size (see the test's doc comment).
DISPATCH_EVAL_OUT ?= $(ROOT)/_output/eval-dispatch

.PHONY: eval-dispatch
eval-dispatch: $(WORKSPACE) envtest ## MultiKueue's AllAtOnce, Incremental and wait-time dispatchers on the same arrivals, 2 workers, into _output/eval-dispatch (about 25 min on 2 cores; test/eval/experiments/dispatch keeps a run).
	$(GO_PATCHED) vet ./test/dispatcheval/
	DISPATCH_EVAL_OUT= $(GO_PATCHED) test -count=1 ./test/dispatcheval/
	cd test/dispatcheval && DISPATCH_EVAL_OUT=$(DISPATCH_EVAL_OUT) PROJECT_DIR=$(KUEUE_DIR)/ $(GO_PATCHED) test -count=1 -v -timeout 120m -run '^TestDispatchEval$$' .

# What any dispatcher that nominates one worker per Job could gain over
# AllAtOnce on the same plans, by simulation (test/dispatcheval/headroom.go).
.PHONY: dispatch-headroom
dispatch-headroom: $(WORKSPACE) ## The race (AllAtOnce) against a clairvoyant one-worker dispatcher, simulated on 200 plans per scenario, into _output/eval-dispatch/headroom.md (seconds).
	DISPATCH_HEADROOM_OUT=$(DISPATCH_EVAL_OUT) $(GO_PATCHED) test -count=1 -run '^TestDispatchHeadroom$$' ./test/dispatcheval/

.PHONY: clean
clean: ## Remove _output/ (keeps bin/, whose control-plane build takes minutes).
	rm -rf _output
