// Package engine is the Kueue-free core of the wait-time estimator: given
// one ClusterQueue's state in plain model terms — its quota ([capacity]),
// its running and pending workloads by demand class, its queueing and
// preemption policies, and the statistics measured of it ([Stats]) — it
// computes what is published of it:
//
//   - each pending workload's partition, Quotable or Unfeasible with the
//     reason (paper Def. 3, [capacity.Classify]);
//   - the a-priori model of paper §3.3–3.5 ([NewAPriori]: k_eff over the
//     demand mix, ρ_eff with preemption, Erlang-C, the paper's
//     Approximation 1, Whitt's GI/G/k wait, the priority breakdown);
//   - each Quotable workload's wait: the [forecast] package's Monte Carlo
//     roll of the live queue with the observed (or an a-priori) service
//     law and the higher-priority arrivals that will pass it, its P50 and
//     P90 calibrated by the conformal adjustments of [Stats.Calibration]
//     ([Engine.Roll]);
//   - the answer for a hypothetical workload on the same state
//     ([Engine.WhatIf]).
//
// [Verdicts] holds why some pending workloads can never be placed, which
// the scheduler's hook writes and a refresh reads without a lock, and
// [UnplaceableIndex] turns them into each workload's Pending.Unplaceable
// ([Reasons]). A [Scratch] holds what a caller builds per pending workload
// to roll a Queue, reused between rolls, with the untried [Candidate]s,
// of which a refresh examines at most [MaxUntriedCandidates].
//
// [Settings] are the estimator's plain settings (the refresh loop's
// pacing, the statistics' and the forecast's), with their defaults
// ([DefaultSettings]) and their validation.
//
// It imports nothing of Kueue or Kubernetes, holds no state between calls
// and reads no clock: the caller (pkg/estimator, which adapts Kueue's
// snapshot, queue manager and events to a [Queue]) owns time, randomness
// (the roll's seed) and the statistics. Bad input is an error
// ([forecast.ErrInvalidQueue]), never a panic, and no wait it returns is negative,
// NaN or infinite.
package engine
