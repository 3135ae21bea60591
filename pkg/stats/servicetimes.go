package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// ReservoirOptions configures a ServiceTimes sample.
type ReservoirOptions struct {
	// Capacity is the maximum number of service times kept. Zero means
	// DefaultReservoirCapacity; negative is an error.
	Capacity int
	// HalfLife, when positive, biases the sample towards recent observations
	// (see ServiceTimes). Zero keeps a uniform sample of all history
	// (Vitter's Algorithm R); negative is an error. Note that, unlike
	// DecayOptions, zero here does not mean a default half-life.
	HalfLife time.Duration
	// MinSamples is the sample size below which the getters report ok=false.
	// Zero means DefaultMinSamples; negative is an error.
	MinSamples int
}

// ServiceTimes keeps a bounded reservoir sample of observed service times
// (seconds from admission to finish) and reports their mean, SCV and
// quantiles.
//
// Sampling: the sample holds at most Capacity values. While it is not full
// every observation is kept; afterwards an observation replaces a uniformly
// chosen kept value with probability Capacity/n, where n is the number of
// observations so far. With HalfLife = 0, n is the plain count and this is
// Algorithm R: every observation ever made is in the sample with equal
// probability Capacity/n. With HalfLife = h > 0, n is the time-decayed count
// Σ 2^(−age/h) (while n ≤ Capacity every observation replaces one). Each
// observation still enters with the same probability, but at a steady
// observation rate r, n ≈ r·h/ln 2, so kept values are replaced at
// r·Capacity/n = Capacity·ln 2/h per second and each one is evicted at rate
// ln 2/h: a kept value survives t seconds with probability 2^(−t/h). The
// sample is then a uniform draw from recent observations weighted by
// 2^(−age/h), and follows a changing workload mix on the time scale of h.
//
// Random choices come from the injected *rand.Rand.
type ServiceTimes struct {
	clock      Clock
	rng        *rand.Rand
	capacity   int
	halfLife   float64 // seconds; 0 = no decay
	minSamples int

	sample      []float64
	sorted      []float64
	sortedValid bool

	weight    float64 // n: plain or decayed count of accepted observations
	latest    time.Time
	hasLatest bool

	count, rejected uint64
}

// NewServiceTimes returns an empty sample. It returns an error wrapping
// ErrInvalidInput for a nil clock or rng or invalid options. The clock is
// read only by Observe.
func NewServiceTimes(clock Clock, rng *rand.Rand, opts ReservoirOptions) (*ServiceTimes, error) {
	if clock == nil {
		return nil, invalidf("nil clock")
	}
	if rng == nil {
		return nil, invalidf("nil random source")
	}
	capacity := opts.Capacity
	switch {
	case capacity < 0:
		return nil, invalidf("reservoir capacity must be non-negative, got %d", capacity)
	case capacity == 0:
		capacity = DefaultReservoirCapacity
	}
	h, err := resolveHalfLife(opts.HalfLife, 0)
	if err != nil {
		return nil, err
	}
	n, err := resolveMinSamples(opts.MinSamples)
	if err != nil {
		return nil, err
	}
	return &ServiceTimes{
		clock: clock, rng: rng, capacity: capacity, halfLife: h, minSamples: n,
		sample: make([]float64, 0, capacity),
		sorted: make([]float64, 0, capacity),
	}, nil
}

// Observe records a service time of seconds, observed at clock.Now().
// See ObserveAt.
func (s *ServiceTimes) Observe(seconds float64) bool { return s.ObserveAt(s.clock.Now(), seconds) }

// ObserveAt records a service time of seconds that ended at time t and
// reports whether it was accepted. Negative, NaN and infinite values are
// rejected (counted in Rejected). t matters only with a half-life: an
// out-of-order t (before the latest one) adds its decayed weight
// 2^(−(latest−t)/h) to n without moving the decay reference.
func (s *ServiceTimes) ObserveAt(t time.Time, seconds float64) bool {
	if math.IsNaN(seconds) || math.IsInf(seconds, 0) || seconds < 0 {
		s.rejected++
		return false
	}
	s.count++
	switch {
	case s.halfLife == 0:
		s.weight++
	case !s.hasLatest:
		s.weight, s.latest, s.hasLatest = 1, t, true
	case t.Before(s.latest):
		s.weight += math.Exp2(-s.latest.Sub(t).Seconds() / s.halfLife)
	default:
		s.weight = s.weight*math.Exp2(-t.Sub(s.latest).Seconds()/s.halfLife) + 1
		s.latest = t
	}
	s.sortedValid = false
	if len(s.sample) < s.capacity {
		s.sample = append(s.sample, seconds)
		return true
	}
	if keep := float64(s.capacity) / s.weight; keep >= 1 || s.rng.Float64() < keep {
		s.sample[s.rng.IntN(s.capacity)] = seconds
	}
	return true
}

// Seed warm-starts the sample from known service spans (admission and
// finish times of workloads still cached at start-up): it observes
// End − Start at End for each span, in order of End (a sorted copy; the
// argument is not modified). Spans with End before Start are rejected. It
// returns the number accepted.
func (s *ServiceTimes) Seed(spans []Span) int {
	return seedSpans(spans, s.ObserveAt)
}

func seedSpans(spans []Span, observe func(time.Time, float64) bool) int {
	sorted := slices.Clone(spans)
	slices.SortFunc(sorted, func(a, b Span) int { return a.End.Compare(b.End) })
	accepted := 0
	for _, sp := range sorted {
		if observe(sp.End, sp.Seconds()) {
			accepted++
		}
	}
	return accepted
}

// Len returns the current sample size, at most the capacity.
func (s *ServiceTimes) Len() int { return len(s.sample) }

// Capacity returns the maximum sample size.
func (s *ServiceTimes) Capacity() int { return s.capacity }

// Count returns the number of accepted observations.
func (s *ServiceTimes) Count() uint64 { return s.count }

// Rejected returns the number of rejected observations.
func (s *ServiceTimes) Rejected() uint64 { return s.rejected }

func (s *ServiceTimes) enough(min int) bool { return len(s.sample) >= max(min, s.minSamples) }

// Mean returns the sample mean E[S] in seconds. ok is false while the sample
// is smaller than the minimum; an empty sample gives (0, false).
func (s *ServiceTimes) Mean() (float64, bool) {
	if len(s.sample) == 0 {
		return 0, false
	}
	return s.mean(), s.enough(1)
}

// mean is a running mean, which cannot overflow as a plain sum of values
// near math.MaxFloat64 would.
func (s *ServiceTimes) mean() float64 {
	m := 0.0
	for i, v := range s.sample {
		m += (v - m) / float64(i+1)
	}
	return m
}

// SCV returns the squared coefficient of variation of the sample,
// C_S² = s²/x̄² with the unbiased sample variance s² (divisor n − 1). A zero
// mean gives 0; an SCV beyond float64 range saturates at math.MaxFloat64. ok is false while the sample is smaller than max(2, minimum);
// fewer than 2 values give (0, false).
func (s *ServiceTimes) SCV() (float64, bool) {
	if len(s.sample) < 2 {
		return 0, false
	}
	m := s.mean()
	if m == 0 {
		return 0, s.enough(2)
	}
	// Σ((x−x̄)/x̄)²/(n−1) avoids squaring x̄ itself; it can still overflow
	// for absurd inputs, so it saturates at math.MaxFloat64.
	ss := 0.0
	for _, v := range s.sample {
		d := (v - m) / m
		ss += d * d
	}
	return math.Min(ss/float64(len(s.sample)-1), math.MaxFloat64), s.enough(2)
}

// Quantile returns the q-quantile of the sample in seconds, interpolating
// linearly between order statistics x₍₁₎ ≤ … ≤ x₍ₙ₎ at position 1 + (n−1)q
// (Hyndman–Fan type 7): q = 0 is the minimum, q = 1 the maximum. ok is false
// while the sample is smaller than the minimum; an empty sample gives
// (0, false, nil). It returns an error wrapping ErrInvalidInput for q outside
// [0, 1] or NaN. The sorted order is cached until the next observation.
func (s *ServiceTimes) Quantile(q float64) (float64, bool, error) {
	if math.IsNaN(q) || q < 0 || q > 1 {
		return 0, false, invalidf("quantile level must be in [0, 1], got %g", q)
	}
	n := len(s.sample)
	if n == 0 {
		return 0, false, nil
	}
	if !s.sortedValid {
		s.sorted = append(s.sorted[:0], s.sample...)
		slices.Sort(s.sorted)
		s.sortedValid = true
	}
	pos := q * float64(n-1)
	lo := int(math.Floor(pos))
	if lo >= n-1 {
		return s.sorted[n-1], s.enough(1), nil
	}
	frac := pos - float64(lo)
	return s.sorted[lo] + frac*(s.sorted[lo+1]-s.sorted[lo]), s.enough(1), nil
}

// AppendValues appends the current sample, in no particular order, to dst
// and returns the extended slice (for callers that resample service times).
func (s *ServiceTimes) AppendValues(dst []float64) []float64 {
	return append(dst, s.sample...)
}
