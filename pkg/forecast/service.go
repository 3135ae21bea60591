package forecast

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// ServiceModel is what the forecaster needs to know about service times
// (seconds from admission to completion) in one ClusterQueue. It is defined
// here, by its caller; [Exponential], [Empirical] and [Deterministic]
// implement it.
//
// Implementations draw from r only (never from a global source) and return
// finite, non-negative seconds. The forecaster applies each workload's
// maximum execution time on top (a draw s for a workload bounded by m
// becomes min(s, m), and a residual for a workload of age a becomes
// min(residual, m−a)), which is exactly the law of min(S, m), so models
// need not know about the bound. Values that are NaN, negative or infinite
// are treated as 0, 0 and "beyond the horizon" respectively.
type ServiceModel interface {
	// Sample draws the service time S of a newly admitted workload.
	Sample(r *rand.Rand) float64
	// Residual draws the remaining service time S − a of a workload that
	// has been running for a = ageSeconds, conditioned on S > a.
	Residual(ageSeconds float64, r *rand.Rand) float64
	// Mean is E[S] in seconds; the forecaster rejects a model whose mean
	// is not finite and positive.
	Mean() float64
}

// ErrInvalidServiceModel is wrapped by the constructors of this file when
// their parameters cannot describe a service-time distribution.
var ErrInvalidServiceModel = errors.New("invalid service model")

// Exponential is the memoryless service model: S ~ Exp(1/mean), so the
// residual of a workload of any age is again Exp(1/mean).
type Exponential struct {
	mean float64
}

// NewExponential returns the exponential model with E[S] = meanSeconds.
// meanSeconds must be finite and > 0; otherwise the error wraps
// [ErrInvalidServiceModel].
func NewExponential(meanSeconds float64) (Exponential, error) {
	if !(meanSeconds > 0) || math.IsInf(meanSeconds, 0) {
		return Exponential{}, fmt.Errorf("%w: exponential mean %v s must be finite and > 0", ErrInvalidServiceModel, meanSeconds)
	}
	return Exponential{mean: meanSeconds}, nil
}

// Sample returns mean·E with E ~ Exp(1), in seconds.
func (e Exponential) Sample(r *rand.Rand) float64 { return r.ExpFloat64() * e.mean }

// Residual ignores the age (memorylessness: P(S−a > x | S > a) = P(S > x))
// and returns a fresh [Exponential.Sample].
func (e Exponential) Residual(_ float64, r *rand.Rand) float64 { return e.Sample(r) }

// Mean returns E[S] in seconds (0 for the zero value, which the forecaster
// rejects).
func (e Exponential) Mean() float64 { return e.mean }

// Empirical is the service model of observed completions: S is drawn
// uniformly from the n observations x₁ ≤ … ≤ xₙ (the empirical
// distribution), and the residual of a workload of age a is drawn uniformly
// from {xᵢ − a : xᵢ > a} (the empirical law of S − a given S > a).
//
// When a ≥ xₙ the workload has outlived every observation and the sample
// says nothing about its remaining time. The residual is then drawn from an
// exponential tail, Exp(1/e), where e is the mean excess of the m = ⌈√n⌉
// largest observations over the smallest of them (a peaks-over-threshold
// estimate of the mean residual life in the tail; for an exponential sample
// e ≈ E[S]). When that excess is 0 (n = 1, or ties at the top) e falls back
// to the sample mean.
type Empirical struct {
	sorted   []float64
	mean     float64
	tailMean float64
}

// NewEmpirical builds the empirical model from observed service times in
// seconds. It copies and sorts them (O(n log n)). The slice must be
// non-empty and every value finite and ≥ 0; otherwise the error wraps
// [ErrInvalidServiceModel]. A sample whose mean is 0 (all zeros) is
// accepted by this constructor but rejected by the forecaster (E[S] must be
// > 0).
func NewEmpirical(observations []float64) (*Empirical, error) {
	if len(observations) == 0 {
		return nil, fmt.Errorf("%w: empirical model needs at least one observation", ErrInvalidServiceModel)
	}
	sorted := slices.Clone(observations)
	sum := 0.0
	for i, x := range sorted {
		if !(x >= 0) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%w: observation %d is %v s; want finite and >= 0", ErrInvalidServiceModel, i, x)
		}
		sum += x
	}
	slices.Sort(sorted)
	n := len(sorted)
	mean := sum / float64(n)
	m := int(math.Ceil(math.Sqrt(float64(n))))
	top := sorted[n-m:]
	topSum := 0.0
	for _, x := range top {
		topSum += x
	}
	tail := topSum/float64(m) - top[0]
	if !(tail > 0) {
		tail = mean
	}
	return &Empirical{sorted: sorted, mean: mean, tailMean: tail}, nil
}

// Sample returns one observation chosen uniformly at random.
func (e *Empirical) Sample(r *rand.Rand) float64 {
	return e.sorted[r.IntN(len(e.sorted))]
}

// Residual returns xᵢ − age for an observation xᵢ drawn uniformly from those
// greater than age; if there is none, an Exp(1/e) draw from the tail (see
// [Empirical]). A non-positive or NaN age is treated as 0, so the result is
// then a plain [Empirical.Sample].
func (e *Empirical) Residual(ageSeconds float64, r *rand.Rand) float64 {
	if !(ageSeconds > 0) {
		return e.Sample(r)
	}
	// First index whose observation exceeds the age.
	lo, hi := 0, len(e.sorted)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if e.sorted[mid] > ageSeconds {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if lo < len(e.sorted) {
		return e.sorted[lo+r.IntN(len(e.sorted)-lo)] - ageSeconds
	}
	return r.ExpFloat64() * e.tailMean
}

// Mean returns the sample mean in seconds.
func (e *Empirical) Mean() float64 { return e.mean }

// Deterministic is the model in which every workload runs exactly the same
// time d: S = d and the residual at age a is max(d − a, 0) (a workload
// already past d is taken to end now).
type Deterministic struct {
	seconds float64
}

// NewDeterministic returns the model S = seconds. seconds must be finite
// and > 0; otherwise the error wraps [ErrInvalidServiceModel].
func NewDeterministic(seconds float64) (Deterministic, error) {
	if !(seconds > 0) || math.IsInf(seconds, 0) {
		return Deterministic{}, fmt.Errorf("%w: deterministic service time %v s must be finite and > 0", ErrInvalidServiceModel, seconds)
	}
	return Deterministic{seconds: seconds}, nil
}

// Sample returns d.
func (d Deterministic) Sample(*rand.Rand) float64 { return d.seconds }

// Residual returns max(d − age, 0).
func (d Deterministic) Residual(ageSeconds float64, _ *rand.Rand) float64 {
	if !(ageSeconds > 0) {
		return d.seconds
	}
	return max(d.seconds-ageSeconds, 0)
}

// Mean returns d.
func (d Deterministic) Mean() float64 { return d.seconds }
