package queueing

import "math"

// WaitDistribution is a waiting-time law of the form used by every model in
// this package: with probability 1 − C an arrival is admitted at once, and
// otherwise it waits an exponential time with mean θ = E[W | W > 0]:
//
//	P(W > t) = C·exp(−t/θ)  for t ≥ 0,   E[W] = C·θ.
//
// For M/M/k this is exact, with C the Erlang-C probability and
// θ = E[S]/(k(1−ρ)) = 1/(kμ(1−ρ)), μ = 1/E[S]. For the M/G/k and GI/G/k
// approximations it is a modelling choice: P(W > 0) is kept at the Erlang-C
// value and θ is scaled so that E[W] matches the approximation's mean
// (θ = E[W]/C).
//
// The zero value is an unstable queue: Stable is false and both fields are
// zero, and Quantile reports ErrUnstable.
type WaitDistribution struct {
	// Stable is true when the wait is finite: the queue has ρ < 1 and its
	// mean wait is representable as a float64.
	Stable bool
	// WaitProbability is C = P(W > 0), in [0, 1]. It is 1 when !Stable.
	WaitProbability float64
	// MeanWait is E[W] in seconds, finite and ≥ 0. It is 0 when !Stable.
	MeanWait float64
}

// unstableWait is what every model returns when the wait is infinite.
var unstableWait = WaitDistribution{WaitProbability: 1}

// newWaitDistribution builds a stable law from C and E[W], degrading to the
// unstable law when E[W] is not finite (float64 overflow near ρ = 1). A zero
// mean (zero service times, or no variability at all in the GI/G/k factor)
// means nobody waits, so C is reported as 0 too.
func newWaitDistribution(waitProbability, meanWait float64) WaitDistribution {
	if math.IsNaN(meanWait) || math.IsInf(meanWait, 0) {
		return unstableWait
	}
	c := clampUnit(waitProbability)
	if c == 0 || meanWait <= 0 {
		return WaitDistribution{Stable: true}
	}
	return WaitDistribution{Stable: true, WaitProbability: c, MeanWait: meanWait}
}

// ConditionalMeanWait returns θ = E[W | W > 0] = E[W]/C in seconds, and false
// when the queue is unstable. It is 0 when nobody waits (C = 0 or E[W] = 0).
func (d WaitDistribution) ConditionalMeanWait() (float64, bool) {
	if !d.Stable {
		return 0, false
	}
	if d.WaitProbability <= 0 || d.MeanWait <= 0 {
		return 0, true
	}
	theta := d.MeanWait / d.WaitProbability
	if math.IsInf(theta, 0) {
		return 0, false
	}
	return theta, true
}

// Survival returns P(W > t) = C·exp(−t/θ) for a wait of t seconds.
//
// Edge cases: t < 0 gives 1 (every wait exceeds a negative time) and so does
// NaN; an unstable queue gives 1 for every t (the wait is unbounded); t = +Inf
// gives 0 for a stable queue. The result is always in [0, 1].
func (d WaitDistribution) Survival(t float64) float64 {
	if math.IsNaN(t) || t < 0 || !d.Stable {
		return 1
	}
	theta, _ := d.ConditionalMeanWait()
	if theta == 0 {
		return 0
	}
	return clampUnit(d.WaitProbability * math.Exp(-t/theta))
}

// Quantile returns the q-quantile t_q of the wait in seconds, the smallest t
// with P(W > t) ≤ 1 − q:
//
//	t_q = 0                       if C ≤ 1 − q,
//	t_q = θ·ln(C / (1 − q))       otherwise.
//
// For M/M/k, θ·ln(C/(1−q)) = ln(C/(1−q)) / (kμ(1−ρ)).
//
// It returns an error wrapping ErrInvalidInput when q is not in the open
// interval (0, 1) or is NaN, and ErrUnstable when the queue is unstable or the
// quantile overflows float64.
func (d WaitDistribution) Quantile(q float64) (float64, error) {
	if math.IsNaN(q) || q <= 0 || q >= 1 {
		return 0, invalidf("quantile level must be in (0, 1), got %g", q)
	}
	if !d.Stable {
		return 0, ErrUnstable
	}
	tail := 1 - q
	if d.WaitProbability <= tail {
		return 0, nil
	}
	theta, ok := d.ConditionalMeanWait()
	if !ok {
		return 0, ErrUnstable
	}
	t := theta * math.Log(d.WaitProbability/tail)
	if math.IsInf(t, 0) || math.IsNaN(t) {
		return 0, ErrUnstable
	}
	return t, nil
}
