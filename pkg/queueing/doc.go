// Package queueing holds the pure queueing mathematics behind Kueue wait-time
// estimates: Erlang-B and Erlang-C by a numerically stable recursion, the
// exact M/M/k waiting-time law, the paper's Approximation 1 (modified
// Erlang-C, Cosmetatos–Tijms style) for M/G/k, the Allen–Cunneen/Whitt
// two-moment approximation for GI/G/k, waiting-time quantiles, preemptive
// priority classes and preemption feedback.
//
// Conventions used throughout:
//
//   - Time is in seconds (float64) and rates are per second.
//   - k (servers) is the effective server count k_eff of a ClusterQueue.
//   - λ is the arrival rate, μ_p the preemption (re-entry) rate, E[S] the mean
//     service time, C_S² = Var[S]/E[S]² the squared coefficient of variation
//     (SCV) of service times and c_a² the SCV of interarrival times (1 for
//     Poisson arrivals, 0 for periodic arrivals).
//   - The offered load is a = (λ+μ_p)·E[S] Erlangs and the utilization is
//     ρ = a/k. A queue with ρ ≥ 1 is unstable: its waits grow without bound.
//     Unstable queues are reported with Stable=false and zero waits, never as
//     Inf or NaN.
//   - The waiting time W is the time from arrival to admission (start of
//     service). Every wait law here has the form
//     P(W > t) = C·exp(−t/θ) for t ≥ 0, where C = P(W > 0) and θ = E[W | W > 0].
//
// Bad input never panics and never yields NaN, Inf or negative values: the
// scalar functions (ErlangB, ErlangC) define an answer for every input, and
// the model-level functions return an error wrapping ErrInvalidInput.
//
// The package imports only the standard library and knows nothing of
// Kubernetes or Kueue.
package queueing
