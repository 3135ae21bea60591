package forecast

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
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
	return r.ExpFloat64() * e.tailMean
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
// of all n observations (with running ages, their Kaplan–Meier law, see
// below). A resample costs O(n) per replica, so the caller
// keeps it for small samples and passes an [Empirical] once the sample is
// large enough for its error to be small.
//
// A Bootstrap built by [NewCensoredBootstrap] also knows the ages of the
// workloads still running, whose service times are only known to exceed
// them (right-censored). Its law is then the Kaplan–Meier estimate of the
// observations and those ages (see [kaplanMeier]), and a replica's
// resample draws n + m pairs from the n observations and the m ages, each
// age drawn standing for a service time imputed from that law given that
// it exceeds the age. Without the ages, a small sample taken soon after a
// ClusterQueue starts is biased short: the workloads that completed first
// are the ones that ran shortest, while the long ones still run (in an
// M/G/4 at ρ 0.7 with exponential service, the first 10 completions
// average 16 % below the mean, the first 20 8 %).
type Bootstrap struct {
	Empirical
	// censored holds the ages of the running workloads, sorted, and km the
	// law of the observations with them; both nil without ages.
	censored []float64
	km       *kaplanMeier
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

// NewCensoredBootstrap builds the bootstrapped model of observed service
// times in seconds (under the conditions of [NewEmpirical]) and of the
// ages in seconds of the workloads still running, each a lower bound of a
// service time not yet observed. Ages that are not finite and > 0 say
// nothing and are left out; with none left the model is [NewBootstrap]'s.
func NewCensoredBootstrap(observations, runningAges []float64) (*Bootstrap, error) {
	b, err := NewBootstrap(observations)
	if err != nil {
		return nil, err
	}
	for _, a := range runningAges {
		if a > 0 && !math.IsInf(a, 0) {
			b.censored = append(b.censored, a)
		}
	}
	if len(b.censored) == 0 {
		return b, nil
	}
	slices.Sort(b.censored)
	b.km = newKaplanMeier(b.sorted, b.censored)
	return b, nil
}

// Sample draws S from the model's law: the observations' (uniformly), or
// with running ages the Kaplan–Meier law.
func (b *Bootstrap) Sample(r *rand.Rand) float64 {
	if b.km != nil {
		return b.km.residual(0, r)
	}
	return b.Empirical.Sample(r)
}

// Residual draws S − a given S > a from the model's law (see
// [Empirical.Residual] and [kaplanMeier.residual]).
func (b *Bootstrap) Residual(ageSeconds float64, r *rand.Rand) float64 {
	if b.km != nil {
		return b.km.residual(ageSeconds, r)
	}
	return b.Empirical.Residual(ageSeconds, r)
}

// Mean is E[S] under the model's law.
func (b *Bootstrap) Mean() float64 {
	if b.km != nil {
		return b.km.mean
	}
	return b.Empirical.Mean()
}

// kaplanMeier is the Kaplan–Meier (product-limit) estimate of a service
// law from n completed service times and m right-censored ones (ages of
// workloads still running: S > c). At each distinct completion time tₖ
// (t₁ < … < t_K), with dₖ completions there and Rₖ observations at risk
// (completed at or after tₖ, or still running at an age ≥ tₖ),
//
//	Ŝ(t) = Π_{tₖ ≤ t} (1 − dₖ/Rₖ),
//
// which puts mass pₖ = Ŝ(tₖ₋₁) − Ŝ(tₖ) on tₖ and leaves Ŝ(t_K) beyond the
// last completion, where the observations say nothing about the law's
// shape. That tail is t_K + Exp(1/θ) with θ = (Σ xᵢ + Σ cⱼ)/n, the
// maximum-likelihood mean of an exponential law under right-censoring
// (the total time on test per completion); a workload past t_K then has an
// Exp(1/θ) residual. Without censored ages Ŝ(t_K) = 0 and the law is the
// observations' empirical one. Units: seconds. The estimate is
// self-consistent (Efron 1967): imputing each censored time from the law
// given S > c gives back the law, which [Bootstrap.resampleInto] relies on.
type kaplanMeier struct {
	// times are t₁ < … < t_K and prefix[k] = p₁ + … + pₖ (prefix[0] = 0).
	times  []float64
	prefix []float64
	// tail is Ŝ(t_K), tailMean θ, mean the law's mean.
	tail, tailMean, mean float64
}

// newKaplanMeier estimates the law of the sorted observations (n ≥ 1) and
// sorted censored ages (all finite and > 0, m ≥ 1).
func newKaplanMeier(observations, censored []float64) *kaplanMeier {
	km := &kaplanMeier{prefix: []float64{0}}
	total := 0.0
	for _, x := range observations {
		total += x
	}
	for _, c := range censored {
		total += c
	}
	km.tailMean = total / float64(len(observations))
	survival, c := 1.0, 0
	for i := 0; i < len(observations); {
		t := observations[i]
		d := 0
		for i+d < len(observations) && observations[i+d] == t {
			d++
		}
		// Censored ages below t left the risk set before it; one equal to
		// t was still running at t.
		for c < len(censored) && censored[c] < t {
			c++
		}
		atRisk := len(observations) - i + len(censored) - c
		next := survival * (1 - float64(d)/float64(atRisk))
		km.times = append(km.times, t)
		km.prefix = append(km.prefix, km.prefix[len(km.prefix)-1]+survival-next)
		km.mean += (survival - next) * t
		survival = next
		i += d
	}
	km.tail = survival
	km.mean += survival * (km.times[len(km.times)-1] + km.tailMean)
	return km
}

// residual draws S − a given S > a (a NaN or ≤ 0 is 0: a draw of S): from
// the masses of the completion times above a and the tail beyond the last,
// in proportion; past the last completion time, from the tail alone.
func (km *kaplanMeier) residual(a float64, r *rand.Rand) float64 {
	if !(a > 0) {
		a = 0
	}
	last := km.times[len(km.times)-1]
	// k is the first completion time above a (all of them for a = 0, so
	// that a zero service time keeps its mass).
	k := 0
	if a > 0 {
		k, _ = slices.BinarySearch(km.times, math.Nextafter(a, math.Inf(1)))
	}
	if k == len(km.times) {
		return r.ExpFloat64() * km.tailMean
	}
	atoms := km.prefix[len(km.prefix)-1] - km.prefix[k]
	u := r.Float64() * (atoms + km.tail)
	if u >= atoms {
		return max(last+r.ExpFloat64()*km.tailMean-a, 0)
	}
	// The first j ≥ k whose cumulative mass passes prefix[k] + u.
	target := km.prefix[k] + u
	j := k + sort.Search(len(km.times)-k, func(i int) bool { return km.prefix[k+i+1] > target })
	j = min(j, len(km.times)-1)
	return km.times[j] - a
}

// resampleInto makes dst the [Empirical] model of a bootstrap resample of
// b's observations drawn from r, reusing dst's storage and counts (both
// grown to n when shorter). It draws n indices, counts how often each
// observation is drawn and writes the observations in their sorted order,
// each as often as drawn, so the resample comes out sorted: O(n), no sort.
func (b *Bootstrap) resampleInto(dst *Empirical, counts []int32, r *rand.Rand) []int32 {
	if b.km != nil {
		b.resampleCensoredInto(dst, r)
		return counts
	}
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

// resampleCensoredInto makes dst the [Empirical] model of a bootstrap
// resample of b's n observations and m running ages: n + m draws with
// replacement, each age drawn replaced by itself plus a residual drawn
// from b's Kaplan–Meier law given S > age. O((n + m) log(n + m)).
func (b *Bootstrap) resampleCensoredInto(dst *Empirical, r *rand.Rand) {
	n, m := len(b.sorted), len(b.censored)
	dst.sorted = slices.Grow(dst.sorted[:0], n+m)
	for range n + m {
		i := r.IntN(n + m)
		if i < n {
			dst.sorted = append(dst.sorted, b.sorted[i])
			continue
		}
		age := b.censored[i-n]
		dst.sorted = append(dst.sorted, age+b.km.residual(age, r))
	}
	slices.Sort(dst.sorted)
	dst.summarize()
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
