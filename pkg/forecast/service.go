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

// Sample returns mean·E with E ~ Exp(1) drawn by inversion, E = −ln(1−U)
// for U = r.Float64(), in seconds: at most 36.7 means, and increasing in U.
func (e Exponential) Sample(r *rand.Rand) float64 { return expDraw(r) * e.mean }

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
	for i, x := range observations {
		if !(x >= 0) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%w: observation %d is %v s; want finite and >= 0", ErrInvalidServiceModel, i, x)
		}
	}
	e := &Empirical{sorted: slices.Clone(observations)}
	slices.Sort(e.sorted)
	e.summarize()
	return e, nil
}

// summarize computes the mean and the tail's mean excess (see [Empirical])
// of e.sorted, which must be sorted, valid and non-empty.
func (e *Empirical) summarize() {
	n := len(e.sorted)
	sum := 0.0
	for _, x := range e.sorted {
		sum += x
	}
	e.mean = sum / float64(n)
	m := int(math.Ceil(math.Sqrt(float64(n))))
	top := e.sorted[n-m:]
	topSum := 0.0
	for _, x := range top {
		topSum += x
	}
	e.tailMean = topSum/float64(m) - top[0]
	if !(e.tailMean > 0) {
		e.tailMean = e.mean
	}
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
	return expDraw(r) * e.tailMean
}

// Mean returns the sample mean in seconds.
func (e *Empirical) Mean() float64 { return e.mean }

// Bootstrap is the [Empirical] model of a small sample, with the sample's
// own uncertainty: n observations tell the service-time law only up to an
// error (the sample mean's relative standard error is C_S/√n, 32 % for 10
// exponential observations), which a forecast from the sample alone
// leaves out of its spread. The roll therefore draws, for each replica, a
// bootstrap resample — n values drawn uniformly with replacement from the
// observations x₁ … xₙ — and runs that replica with the [Empirical] model
// of the resample (its own mean and exponential tail); across replicas the
// forecast's quantiles then include the variation of the sample (Efron's
// bootstrap). Used directly, outside the roll, it is the [Empirical] model
// of all n observations. A resample costs O(n) per replica, so the caller
// keeps it for small samples and passes an [Empirical] once the sample is
// large enough for its error to be small.
type Bootstrap struct {
	Empirical
}

// NewBootstrap builds the bootstrapped model of observed service times in
// seconds, under the conditions of [NewEmpirical].
func NewBootstrap(observations []float64) (*Bootstrap, error) {
	e, err := NewEmpirical(observations)
	if err != nil {
		return nil, err
	}
	return &Bootstrap{Empirical: *e}, nil
}

// resampleInto makes dst the [Empirical] model of a bootstrap resample of
// b's observations drawn from r, reusing dst's storage and counts (both
// grown to n when shorter). It draws n indices, counts how often each
// observation is drawn and writes the observations in their sorted order,
// each as often as drawn, so the resample comes out sorted: O(n), no sort.
func (b *Bootstrap) resampleInto(dst *Empirical, counts []int32, r *rand.Rand) []int32 {
	n := len(b.sorted)
	if cap(counts) < n {
		counts = make([]int32, n)
	}
	counts = counts[:n]
	clear(counts)
	for range n {
		counts[r.IntN(n)]++
	}
	if cap(dst.sorted) < n {
		dst.sorted = make([]float64, n)
	}
	dst.sorted = dst.sorted[:0]
	for i, c := range counts {
		for range c {
			dst.sorted = append(dst.sorted, b.sorted[i])
		}
	}
	dst.summarize()
	return counts
}

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
