package stats

import (
	"math"
	"slices"
	"time"
)

// EventRate estimates the rate of a stream of events (workload arrivals,
// admissions, preemptions, scheduling cycles) and the variability of the
// intervals between them, with exponential time decay.
//
// Rate is the decayed count over the decayed exposure time,
//
//	N(t) = Σ_i 2^(−(t−t_i)/h),
//	E(t) = ∫_{t₀}^{t} 2^(−(t−s)/h) ds = (h/ln 2)·(1 − 2^(−(t−t₀)/h)),
//	rate(t) = N(t) / E(t)  events per second,
//
// where t₀ is the start of the observation window. Dividing by E(t) rather
// than by its limit h/ln 2 removes the start-up bias, and because N decays
// while E keeps growing the rate falls during a silence, and is 0 (with a
// known exposure) for a stream that has not fired at all — which suits rare
// events such as preemptions. For a constant rate the estimate is unbiased
// up to a sawtooth of relative size about ln 2·(period)/(2h).
//
// The intervals between consecutive events, x_j = t_j − t_{j−1}, are
// summarised by their decayed weighted mean and unbiased weighted variance
// (weights 2^(−age/h), reliability-weights correction W − Σw²/W). MeanInterval
// is the decayed mean interval (for a scheduling-cycle stream, the cycle
// period); IntervalSCV is c² = Var[x]/E[x]², the interarrival SCV c_a² of a
// GI/G/k model (0 for periodic arrivals, 1 for Poisson).
//
// Out-of-order timestamps (earlier than the latest one seen but inside the
// window) are counted in Rate with their decayed weight but do not enter the
// interval statistics, whose neighbour intervals were already recorded; they
// are counted in OutOfOrder. Timestamps before the window start are
// rejected.
type EventRate struct {
	clock      Clock
	halfLife   float64 // seconds
	minSamples int

	start     time.Time // t₀, start of the exposure window
	latest    time.Time // latest accepted event
	hasLatest bool
	decayed   float64 // N(latest)

	intervals       uint64
	intervalWeight  float64 // W = Σw
	intervalWeight2 float64 // Σw²
	intervalMean    float64
	intervalM2      float64 // Σw(x − mean)²

	count, outOfOrder, rejected uint64
}

// NewEventRate returns an estimator whose observation window starts at
// clock.Now(). It returns an error wrapping ErrInvalidInput for a nil clock
// or invalid options.
func NewEventRate(clock Clock, opts DecayOptions) (*EventRate, error) {
	if clock == nil {
		return nil, invalidf("nil clock")
	}
	h, err := resolveHalfLife(opts.HalfLife, DefaultHalfLife)
	if err != nil {
		return nil, err
	}
	n, err := resolveMinSamples(opts.MinSamples)
	if err != nil {
		return nil, err
	}
	return &EventRate{clock: clock, halfLife: h, minSamples: n, start: clock.Now()}, nil
}

// decay returns 2^(−dt/h) for dt ≥ 0 seconds.
func (r *EventRate) decay(dt float64) float64 { return math.Exp2(-dt / r.halfLife) }

// Observe records one event at clock.Now(). See ObserveAt.
func (r *EventRate) Observe() bool { return r.ObserveAt(r.clock.Now()) }

// ObserveAt records one event at time t and reports whether it was accepted.
// An event before the window start is rejected (counted in Rejected); an
// event before the latest one is accepted for the rate only (counted in
// OutOfOrder). Equal timestamps are a zero interval (a burst).
func (r *EventRate) ObserveAt(t time.Time) bool {
	if t.Before(r.start) {
		r.rejected++
		return false
	}
	r.count++
	if !r.hasLatest {
		r.latest, r.hasLatest, r.decayed = t, true, 1
		return true
	}
	if t.Before(r.latest) {
		r.outOfOrder++
		r.decayed += r.decay(r.latest.Sub(t).Seconds())
		return true
	}
	gap := t.Sub(r.latest).Seconds()
	d := r.decay(gap)
	r.decayed = r.decayed*d + 1
	r.latest = t

	// Weighted incremental mean and variance (West 1979) with the old
	// weights decayed by the time since the previous interval ended.
	r.intervals++
	r.intervalWeight = r.intervalWeight*d + 1
	r.intervalWeight2 = r.intervalWeight2*d*d + 1
	r.intervalM2 *= d
	delta := gap - r.intervalMean
	r.intervalMean += delta / r.intervalWeight
	r.intervalM2 += delta * (gap - r.intervalMean)
	return true
}

// Seed warm-starts the estimator from events already known: it moves the
// window start back to windowStart if that is earlier (windowStart should
// be the time from which events is complete), then observes events in time
// order (a sorted copy; the argument is not modified). It returns the number
// accepted.
func (r *EventRate) Seed(windowStart time.Time, events []time.Time) int {
	if windowStart.Before(r.start) {
		r.start = windowStart
	}
	sorted := slices.Clone(events)
	slices.SortFunc(sorted, func(a, b time.Time) int { return a.Compare(b) })
	accepted := 0
	for _, t := range sorted {
		if r.ObserveAt(t) {
			accepted++
		}
	}
	return accepted
}

// Rate returns the decayed event rate N(t)/E(t) in events per second at
// t = clock.Now() (or at the latest event, if the clock is behind it).
// ok is false while fewer than the minimum number of events were observed;
// the value is still the best estimate (0 for no events). Before any time
// has elapsed in the window it returns (0, false).
func (r *EventRate) Rate() (float64, bool) {
	now := r.now()
	ok := r.count >= uint64(r.minSamples)
	decayedExposure := r.decayedExposure(now)
	if decayedExposure <= 0 {
		return 0, false
	}
	n := 0.0
	if r.hasLatest {
		n = r.decayed * r.decay(now.Sub(r.latest).Seconds())
	}
	return n / decayedExposure, ok
}

// Exposure returns the decayed exposure E(t) in seconds at t = clock.Now()
// (or at the latest event, if the clock is behind it): the effective length
// of the window the rate is measured over,
//
//	E(t) = (h/ln 2)·(1 − 2^(−(t−t₀)/h)),
//
// about t − t₀ early on and at most h/ln 2 ≈ 1.44·h. It is 0 before any
// time has elapsed in the window. A forecast that extrapolates the rate
// should not extrapolate it further ahead than this.
func (r *EventRate) Exposure() float64 { return max(r.decayedExposure(r.now()), 0) }

// now is clock.Now(), or the latest event if the clock is behind it.
func (r *EventRate) now() time.Time {
	now := r.clock.Now()
	if r.hasLatest && now.Before(r.latest) {
		now = r.latest
	}
	return now
}

// decayedExposure is E(now), 0 for a window that has not started.
func (r *EventRate) decayedExposure(now time.Time) float64 {
	exposure := now.Sub(r.start).Seconds()
	if exposure <= 0 {
		return 0
	}
	// (h/ln2)·(1 − 2^(−T/h)) = −(h/ln2)·expm1(−T·ln2/h), accurate for small T.
	return -r.halfLife / math.Ln2 * math.Expm1(-exposure*math.Ln2/r.halfLife)
}

// MeanInterval returns the decayed mean time between consecutive in-order
// events, in seconds (for a scheduling-cycle stream, the cycle period). It
// does not include the interval still open since the latest event. ok is
// false while fewer than the minimum number of intervals were observed; with
// no interval it returns (0, false).
func (r *EventRate) MeanInterval() (float64, bool) {
	if r.intervals == 0 {
		return 0, false
	}
	return r.intervalMean, r.intervals >= uint64(r.minSamples)
}

// IntervalSCV returns the squared coefficient of variation of the intervals
// between events, c² = Var[x]/E[x]² (the interarrival SCV c_a²), using the
// unbiased weighted variance M2/(W − Σw²/W). A zero mean interval (all events
// simultaneous) gives 0. ok is false while fewer than max(2, minimum)
// intervals were observed; with fewer than 2 it returns (0, false).
func (r *EventRate) IntervalSCV() (float64, bool) {
	if r.intervals < 2 {
		return 0, false
	}
	ok := r.intervals >= uint64(max(2, r.minSamples))
	effective := r.intervalWeight - r.intervalWeight2/r.intervalWeight
	if effective <= 0 || r.intervalMean <= 0 {
		return 0, ok
	}
	variance := math.Max(0, r.intervalM2/effective)
	return variance / (r.intervalMean * r.intervalMean), ok
}

// Count returns the number of accepted events (including out-of-order ones).
func (r *EventRate) Count() uint64 { return r.count }

// Intervals returns the number of intervals entered into MeanInterval and
// IntervalSCV.
func (r *EventRate) Intervals() uint64 { return r.intervals }

// OutOfOrder returns the number of accepted events that were earlier than
// the latest event seen.
func (r *EventRate) OutOfOrder() uint64 { return r.outOfOrder }

// Rejected returns the number of events rejected for falling before the
// window start.
func (r *EventRate) Rejected() uint64 { return r.rejected }

// WindowStart returns t₀, the start of the exposure window.
func (r *EventRate) WindowStart() time.Time { return r.start }
