# Performance targets: the estimator's cost side by side with unpatched Kueue
# (hack/bench.sh). The Makefile includes this file; `make test` does not run it.

##@ Performance

# Extra hack/bench.sh flags, e.g. BENCH_FLAGS="--quick" or "-n 10 -r 3".
BENCH_FLAGS ?=

.PHONY: bench
bench: $(WORKSPACE) ## Benchmark pristine vs patched Kueue (gate off and on) and print the ratio table (~20 min; BENCH_FLAGS=--quick for a smoke run).
	hack/bench.sh $(BENCH_FLAGS) $(KUEUE_DIR)

# Kueue's performance harness alone at its full baseline configuration
# (15,000 workloads, about 6.5 minutes a run), pristine and gate on, twice
# each in alternating order (~27 min); the table goes to
# _output/bench-full/results.md.
.PHONY: bench-harness-full
bench-harness-full: $(WORKSPACE) envtest ## Kueue's perf harness at its full baseline, pristine vs gate on, 2 runs each (~27 min).
	BENCH_HARNESS_SCALE=1 BENCH_OUT=$(ROOT)/_output/bench-full hack/bench.sh --harness-only -r 2 $(KUEUE_DIR)

# Instructions per scheduling cycle, gate off and on, under valgrind's
# callgrind (hack/cycle-instructions.sh; needs valgrind): a ratio the
# machine's load does not move.
.PHONY: bench-cycle-instructions
bench-cycle-instructions: $(WORKSPACE) ## Instructions per scheduling cycle, gate off vs on, counted by callgrind (needs valgrind; ~25 min).
	hack/cycle-instructions.sh

.PHONY: bench-report
bench-report: ## Print the ratio table of the last `make bench` again (_output/bench).
	hack/bench.sh --report-only $(KUEUE_DIR)

.PHONY: perf-score
perf-score: $(WORKSPACE) envtest ## Kueue's perf harness (1/5 baseline) with the gate on and scraping, then `score` on its metricsDump.tgz (~2 min).
	hack/perf-score.sh $(KUEUE_DIR)

# In the slow tier of make test (hack/slow-tier.sh: run when its inputs
# changed since a pass on record, and by make test-all): the same harness at
# 1/2 of its baseline, scraping every 5 s, must hold the estimator's scores
# of at least 1,000 workloads, forecasts for at least 1,000 of them, and a
# forecast MAE of at most 10 minutes (the harness's waits are seconds to a
# few minutes; the roll's extrapolated arrivals once gave forecasts of days
# here: an MAE of 75 hours). A forecast needs minServiceSamples completions
# in its ClusterQueue: at 1/5 every arrival fell in the run's first 12 s,
# about when the ClusterQueues reached them, so how many were answered
# depended on when the refreshes fell (170 to 1,154 of 2,698 in four runs,
# and a CI run failed a bound of 200); at 1/2 four runs answered 4,313 to
# 4,992 of about 7,400, one with a core kept busy.
.PHONY: test-perf-score
test-perf-score: $(WORKSPACE) envtest ## Kueue's perf harness at 1/2 with scraping: enough forecasts, none of hours (~5 min).
	PERF_OUT=$(ROOT)/_output/test-perf-score hack/perf-score.sh --scale 2 --scrape-interval 5s --min-scored 1000 --min-forecasts 1000 --max-forecast-mae 600 $(KUEUE_DIR)

# Only the estimator's own benchmarks (pkg/estimator, pkg/forecast), one line
# per row of issue 14's target table (name=value unit).
.PHONY: bench-estimator
bench-estimator: ## The estimator's refresh, forecast and memory benchmarks alone, one name=value line per target (≤ 5 min; ESTIMATOR_BENCH_1M=1 adds the 1M-pending row).
	hack/bench-estimator.sh

# Before/after the last patch(es): the patched tree with its first N commits
# against the whole series, alternated (hack/bench-patch-ab.sh).
.PHONY: bench-patch-ab
bench-patch-ab: ## The estimator's refresh and lock benchmarks and Kueue's pending-list snapshot, the series without its last patch (or its first N: BENCH_AB_N=N) against the whole, alternated ROUNDS=3 times (≈4 min).
	hack/bench-patch-ab.sh $(BENCH_AB_N)
