// Package forecast predicts, for every pending workload of one Kueue
// ClusterQueue, how long it will still wait: its expected wait, P50 and P90
// in seconds from now. It goes beyond the paper's a-priori model
// (Approximation 1, W = C(k,ρ)·E[S]/(k(1−ρ))·(C_S²+1)/2), which gives one
// number per queue from long-run rates, by conditioning on the live state:
// which workloads run and for how long already, which wait and in which
// order, how much quota is free in every flavor-resource, and how fast the
// scheduler admits (one head per ClusterQueue per cycle). Predictors that
// use the queue state in this way beat history averages (Ibrahim & Whitt,
// 2009) such as the paper's EMA baseline.
//
// # Model
//
// [Forecaster.Forecast] rolls the queue forward by Monte Carlo: each of R
// replicas draws the residual service of the running workloads from a
// [ServiceModel] (conditioned on their age, bounded by their maximum
// execution time), then replays completions and admissions with vector
// packing in every flavor-resource under the queue's [Policy]
// (BestEffortFIFO or StrictFIFO), the scheduling-cycle cap and the
// admission latency. The first H quotable workloads are simulated; those
// further back are extrapolated from the simulated work throughput (see
// [Forecaster.Forecast] for the formulas). Optional Poisson [Arrival]
// classes of higher priority jump ahead during the roll, each until its
// UntilSeconds (the caller extrapolates a measured rate no further ahead
// than it measured it back). There are no arrivals otherwise: the forecast answers "if nothing else arrives ahead
// of me", which is exact for FIFO queues of one demand shape. With a
// within-ClusterQueue [PreemptionPolicy] other than Never, a waiting
// workload that does not fit preempts running workloads of lower priority
// as Kueue's classical preemption picks them; the victims requeue at their
// place with their remaining (or, with [Queue.PreemptedRestart], their
// whole) service, so lower-priority forecasts include the work that passes
// them. With [Queue.AdmissionFairSharing] the roll orders the pending
// workloads as Kueue's admission fair sharing does, by their LocalQueues'
// usage, which grows with each admission (its entry penalty, then its
// requests) and decays with the half-life over the roll's time.
//
// Each replica draws from a random stream of its own, seeded from the
// caller's source, so rolls of nearly the same queue from the same seed
// share their draws replica by replica (common random numbers). The
// replicas come in antithetic pairs: the second of a pair replays the
// first one's draws mirrored (a uniform U becomes 1−U), so a pair's long
// and short services offset each other and the estimates need fewer
// replicas for the same precision (see replicaSource).
//
// With exponential service, one demand shape, all k servers busy and no
// cycle cap, the wait of the n-th workload in line (0-based) is
// Erlang(n+1, k/E[S]); the tests check the roll against it.
//
// # Guarantees
//
// Every [Estimate] is finite, ≥ 0 and at most the time horizon (default 7
// days), with P50 ≤ P90, also in transient overload (ρ ≥ 1): the roll
// drains a finite queue. A figure cut by the horizon is flagged Clamped.
// Unfeasible (not Quotable) workloads are skipped entirely: their estimate
// is not Quotable and has no figures. Bad per-workload numbers (NaN ages, negative
// demands, absurd bounds) are sanitized; a queue that cannot be forecast at
// all (nil service model, unknown policy) yields an error wrapping
// [ErrInvalidQueue]. Randomness comes only from the caller's *rand.Rand,
// so a seeded source gives reproducible forecasts.
//
// # Service models
//
// [Exponential] (a-priori, memoryless), [Empirical] (observed completions,
// with an exponential tail past the largest observation), [Bootstrap] (a
// small Empirical sample resampled per replica) and [Deterministic]. One
// law serves the whole queue unless [Queue.ServiceByPriority] gives some
// priorities their own, or [Queue.ServiceClasses] some workloads theirs
// (by their ServiceClass: the estimator's demand shapes).
package forecast
