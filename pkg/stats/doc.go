// Package stats holds the online estimators that feed Kueue wait-time
// estimates: time-decayed event rates with interarrival variability
// (arrivals, admissions, preemptions, scheduling cycles), a bounded reservoir
// sample of service times, and the paper's EMA baseline of observed waits.
//
// Conventions:
//
//   - Time comes from an injected Clock and randomness from an injected
//     *rand.Rand (math/rand/v2); nothing here reads the wall clock or the
//     global random source, so tests are deterministic.
//   - Durations and values are in seconds (float64), rates per second.
//   - Decay is by time with a half-life h: an observation made Δ seconds
//     before the evaluation time carries weight 2^(−Δ/h).
//   - Every estimator counts its accepted observations and reports an ok flag
//     that is false while it has fewer than its minimum-sample threshold
//     ("too little history"). Getters still return their best value when
//     ok is false, if one exists, and 0 otherwise.
//   - Invalid observations (negative, NaN or infinite values, timestamps
//     before an estimator's observation window) are ignored and counted in
//     Rejected(); they never change an estimate. Observe methods report
//     whether the observation was accepted.
//   - Estimators are not safe for concurrent use: callers hold their own
//     lock. Observe methods do not allocate.
//   - Warm start: Seed methods load observations already known at start-up
//     (for example the admission and finish times of workloads the manager
//     still caches) with no I/O.
//
// Kueue admits at most one head workload per ClusterQueue per scheduling
// cycle, so an EventRate of scheduling cycles (Rate, MeanInterval) bounds the
// admission throughput that an EventRate of admissions measures.
package stats
