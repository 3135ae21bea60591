package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func mustEventRate(t *testing.T, clock Clock, opts DecayOptions) *EventRate {
	t.Helper()
	r, err := NewEventRate(clock, opts)
	if err != nil {
		t.Fatalf("NewEventRate: %v", err)
	}
	return r
}

func TestNewEventRateOptions(t *testing.T) {
	tests := map[string]struct {
		clock   Clock
		opts    DecayOptions
		wantErr bool
	}{
		"defaults":             {clock: newFakeClock()},
		"explicit":             {clock: newFakeClock(), opts: DecayOptions{HalfLife: time.Minute, MinSamples: 1}},
		"nil clock":            {opts: DecayOptions{}, wantErr: true},
		"negative half-life":   {clock: newFakeClock(), opts: DecayOptions{HalfLife: -time.Second}, wantErr: true},
		"negative min samples": {clock: newFakeClock(), opts: DecayOptions{MinSamples: -1}, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r, err := NewEventRate(tc.clock, tc.opts)
			if tc.wantErr {
				if !errors.Is(err, ErrInvalidInput) || r != nil {
					t.Fatalf("got %v, %v; want nil, ErrInvalidInput", r, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestEventRateHandValues(t *testing.T) {
	clock := newFakeClock()
	t0 := clock.Now()
	r := mustEventRate(t, clock, DecayOptions{HalfLife: 10 * time.Second, MinSamples: 2})

	if v, ok := r.Rate(); v != 0 || ok {
		t.Errorf("Rate with no exposure = %g, %v; want 0, false", v, ok)
	}
	clock.Advance(10 * time.Second)
	r.Observe()
	// One event at t0+10: N = 1, E = (10/ln2)(1 − 2^−1) = 7.21348, rate 0.138629.
	v, ok := r.Rate()
	assertApprox(t, "Rate after one event", v, 0.2*math.Ln2, 1e-12)
	assertOK(t, "Rate after one event", ok, false)
	if _, ok := r.MeanInterval(); ok {
		t.Errorf("MeanInterval ok with no interval")
	}

	clock.Advance(10 * time.Second)
	r.Observe()
	clock.Advance(20 * time.Second)
	r.Observe()
	// Events at t0+10, +20, +40 with h = 10 s, evaluated at t0+40:
	// N = 2^−3 + 2^−2 + 1 = 1.375, E = (10/ln2)(1 − 2^−4),
	// rate = 1.375·ln2/(10·0.9375) = 0.1016624.
	v, ok = r.Rate()
	assertApprox(t, "Rate", v, 1.375*math.Ln2/9.375, 1e-12)
	assertOK(t, "Rate", ok, true)
	// Intervals 10 (weight 2^−2 = 0.25 by now) and 20 (weight 1):
	// mean = (2.5 + 20)/1.25 = 18, M2 = 0.25·64 + 4 = 20,
	// W − Σw²/W = 1.25 − 1.0625/1.25 = 0.4, variance 50, SCV = 50/324.
	m, ok := r.MeanInterval()
	assertApprox(t, "MeanInterval", m, 18, 1e-12)
	assertOK(t, "MeanInterval", ok, true)
	scv, ok := r.IntervalSCV()
	assertApprox(t, "IntervalSCV", scv, 50.0/324, 1e-12)
	assertOK(t, "IntervalSCV", ok, true)

	// A silence of 20 s: N = 1.375/4, E = (10/ln2)(1 − 2^−6).
	clock.Advance(20 * time.Second)
	v, _ = r.Rate()
	assertApprox(t, "Rate after silence", v, 1.375/4*math.Ln2/(10*(1-1.0/64)), 1e-12)
	if got := r.WindowStart(); !got.Equal(t0) {
		t.Errorf("WindowStart = %v, want %v", got, t0)
	}
	if r.Count() != 3 || r.Intervals() != 2 || r.OutOfOrder() != 0 || r.Rejected() != 0 {
		t.Errorf("counts = %d/%d/%d/%d, want 3/2/0/0", r.Count(), r.Intervals(), r.OutOfOrder(), r.Rejected())
	}
}

// TestEventRateExposure: the decayed exposure is the elapsed time early on,
// (h/ln 2)(1 − 2^(−T/h)) in general, and tends to h/ln 2.
func TestEventRateExposure(t *testing.T) {
	clock := newFakeClock()
	r := mustEventRate(t, clock, DecayOptions{HalfLife: 10 * time.Second})
	if got := r.Exposure(); got != 0 {
		t.Errorf("Exposure before any time elapsed = %g, want 0", got)
	}
	clock.Advance(time.Millisecond)
	assertApprox(t, "Exposure after 1 ms", r.Exposure(), 0.001, 1e-6)
	clock.Advance(10*time.Second - time.Millisecond)
	assertApprox(t, "Exposure after one half-life", r.Exposure(), 5/math.Ln2, 1e-12)
	clock.Advance(time.Hour)
	assertApprox(t, "Exposure after many half-lives", r.Exposure(), 10/math.Ln2, 1e-12)
}

func TestEventRateConstantRate(t *testing.T) {
	const period = 2 * time.Second
	clock := newFakeClock()
	r := mustEventRate(t, clock, DecayOptions{HalfLife: 10 * time.Minute})
	for range 3000 {
		clock.Advance(period)
		r.Observe()
	}
	// Evaluated half a period after the last event, inside the sawtooth.
	clock.Advance(period / 2)
	rate, ok := r.Rate()
	assertOK(t, "Rate", ok, true)
	if math.Abs(rate-0.5) > 0.005*0.5 {
		t.Errorf("Rate = %g, want 1/period = 0.5 within 0.5%%", rate)
	}
	mean, ok := r.MeanInterval()
	assertOK(t, "MeanInterval", ok, true)
	assertApprox(t, "MeanInterval", mean, 2, 1e-12)
	scv, ok := r.IntervalSCV()
	assertOK(t, "IntervalSCV", ok, true)
	if scv < 0 || scv > 1e-12 {
		t.Errorf("IntervalSCV = %g, want 0 for periodic events", scv)
	}
}

func TestEventRatePoissonArrivals(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		const lambda = 0.5
		rng := rand.New(rand.NewPCG(seed, 99))
		clock := newFakeClock()
		r := mustEventRate(t, clock, DecayOptions{HalfLife: 2 * time.Hour})
		for range 50_000 {
			clock.Advance(seconds(rng.ExpFloat64() / lambda))
			r.Observe()
		}
		// Effective sample size 2λh/ln2 ≈ 10,400: rate σ ≈ 1%, SCV σ ≈ 0.03.
		rate, _ := r.Rate()
		if math.Abs(rate-lambda) > 0.05*lambda {
			t.Errorf("seed %d: Rate = %g, want %g within 5%%", seed, rate, lambda)
		}
		mean, _ := r.MeanInterval()
		if math.Abs(mean-1/lambda) > 0.05/lambda {
			t.Errorf("seed %d: MeanInterval = %g, want %g within 5%%", seed, mean, 1/lambda)
		}
		scv, ok := r.IntervalSCV()
		assertOK(t, "IntervalSCV", ok, true)
		if math.Abs(scv-1) > 0.12 {
			t.Errorf("seed %d: IntervalSCV = %g, want 1 ± 0.12 for exponential interarrivals", seed, scv)
		}
	}
}

func TestEventRateTracksRateChange(t *testing.T) {
	clock := newFakeClock()
	r := mustEventRate(t, clock, DecayOptions{HalfLife: time.Minute})
	for range 600 { // 10 minutes at 1/s
		clock.Advance(time.Second)
		r.Observe()
	}
	for range 100 { // 10 minutes at 1 per 6 s
		clock.Advance(6 * time.Second)
		r.Observe()
	}
	// Ten half-lives later the old rate weighs 2^−10 of the new one.
	rate, _ := r.Rate()
	if math.Abs(rate-1.0/6) > 0.01 {
		t.Errorf("Rate = %g, want about 1/6 after the change", rate)
	}
}

func TestEventRateRareEventsAndSilence(t *testing.T) {
	clock := newFakeClock()
	r := mustEventRate(t, clock, DecayOptions{HalfLife: time.Hour, MinSamples: 1})
	clock.Advance(3 * time.Hour)
	if v, ok := r.Rate(); v != 0 || ok {
		t.Errorf("Rate with exposure and no events = %g, %v; want 0, false", v, ok)
	}
	r.Observe()
	v1, ok := r.Rate()
	assertOK(t, "Rate", ok, true)
	clock.Advance(5 * time.Hour)
	v2, _ := r.Rate()
	if !(v1 > 0 && v2 > 0 && v2 < v1/16) {
		t.Errorf("Rate right after the event %g, 5 half-lives later %g: want positive and decayed by ≥ 2^5", v1, v2)
	}
}

func TestEventRateOutOfOrderAndRejected(t *testing.T) {
	clock := newFakeClock()
	start := clock.Now()
	r := mustEventRate(t, clock, DecayOptions{HalfLife: 10 * time.Second, MinSamples: 1})
	r.ObserveAt(start.Add(10 * time.Second))
	r.ObserveAt(start.Add(20 * time.Second))
	clock.Advance(20 * time.Second)
	meanBefore, _ := r.MeanInterval()
	scvBefore, _ := r.IntervalSCV()
	rateBefore, _ := r.Rate()

	// Before the window: rejected, nothing changes.
	if r.ObserveAt(start.Add(-time.Second)) {
		t.Errorf("event before the window was accepted")
	}
	if v, _ := r.Rate(); v != rateBefore || r.Count() != 2 || r.Rejected() != 1 {
		t.Errorf("rejected event changed state: rate %g (was %g), count %d, rejected %d", v, rateBefore, r.Count(), r.Rejected())
	}

	// Out of order (t0+15 after t0+20): counted with weight 2^−0.5 in the
	// rate, not in the intervals.
	if !r.ObserveAt(start.Add(15 * time.Second)) {
		t.Fatalf("out-of-order event rejected")
	}
	rate, _ := r.Rate()
	want := (0.5 + 1 + math.Pow(2, -0.5)) * math.Ln2 / (10 * (1 - 0.25))
	assertApprox(t, "Rate with out-of-order event", rate, want, 1e-12)
	mean, _ := r.MeanInterval()
	scv, _ := r.IntervalSCV()
	if mean != meanBefore || scv != scvBefore || r.Intervals() != 1 || r.OutOfOrder() != 1 || r.Count() != 3 {
		t.Errorf("out-of-order event changed intervals: mean %g→%g scv %g→%g, intervals %d, out-of-order %d",
			meanBefore, mean, scvBefore, scv, r.Intervals(), r.OutOfOrder())
	}

	// The next in-order event measures its interval from the latest (t0+20).
	r.ObserveAt(start.Add(26 * time.Second))
	if m, _ := r.MeanInterval(); !(m > 6 && m < 10) {
		t.Errorf("MeanInterval = %g, want between the intervals 6 and 10", m)
	}
}

func TestEventRateClockBehindEvents(t *testing.T) {
	clock := newFakeClock()
	r := mustEventRate(t, clock, DecayOptions{HalfLife: time.Minute})
	// An event stamped in the future (for example by another host's clock).
	r.ObserveAt(clock.Now().Add(30 * time.Second))
	v, _ := r.Rate()
	want := math.Ln2 / 60 / (1 - math.Pow(2, -0.5))
	assertApprox(t, "Rate evaluated at the latest event", v, want, 1e-12)
}

func TestEventRateBurst(t *testing.T) {
	clock := newFakeClock()
	r := mustEventRate(t, clock, DecayOptions{MinSamples: 2})
	clock.Advance(time.Second)
	for range 5 {
		r.Observe()
	}
	mean, ok := r.MeanInterval()
	scv, scvOK := r.IntervalSCV()
	if mean != 0 || !ok || scv != 0 || !scvOK {
		t.Errorf("simultaneous events: mean %g (%v), SCV %g (%v); want 0, true, 0, true", mean, ok, scv, scvOK)
	}
}

func TestEventRateOKThresholds(t *testing.T) {
	clock := newFakeClock()
	r := mustEventRate(t, clock, DecayOptions{MinSamples: 3})
	type flags struct{ rate, mean, scv bool }
	want := []flags{
		{false, false, false}, // 1 event, 0 intervals
		{false, false, false}, // 2 events, 1 interval
		{true, false, false},  // 3 events, 2 intervals
		{true, true, true},    // 4 events, 3 intervals
	}
	for i, w := range want {
		clock.Advance(time.Duration(i+1) * time.Second)
		r.Observe()
		_, rateOK := r.Rate()
		_, meanOK := r.MeanInterval()
		_, scvOK := r.IntervalSCV()
		if got := (flags{rateOK, meanOK, scvOK}); got != w {
			t.Errorf("after %d events: ok flags %+v, want %+v", i+1, got, w)
		}
	}
}

func TestEventRateSeed(t *testing.T) {
	clock := newFakeClock()
	now := clock.Now()
	windowStart := now.Add(-time.Hour)
	events := []time.Time{
		now.Add(-10 * time.Minute),
		now.Add(-40 * time.Minute),
		now.Add(-2 * time.Hour), // before the window: rejected
		now.Add(-30 * time.Minute),
		now.Add(-20 * time.Minute),
	}
	original := slices.Clone(events)

	seeded := mustEventRate(t, clock, DecayOptions{HalfLife: 15 * time.Minute, MinSamples: 2})
	if got := seeded.Seed(windowStart, events); got != 4 {
		t.Errorf("Seed accepted %d, want 4", got)
	}
	if !slices.Equal(events, original) {
		t.Errorf("Seed modified its argument")
	}
	if !seeded.WindowStart().Equal(windowStart) || seeded.Rejected() != 1 {
		t.Errorf("WindowStart %v, rejected %d; want %v, 1", seeded.WindowStart(), seeded.Rejected(), windowStart)
	}

	// The same events observed in order by an estimator started at windowStart.
	past := &fakeClock{now: windowStart}
	manual := mustEventRate(t, past, DecayOptions{HalfLife: 15 * time.Minute, MinSamples: 2})
	for _, m := range []int{40, 30, 20, 10} {
		manual.ObserveAt(now.Add(-time.Duration(m) * time.Minute))
	}
	past.now = now
	for name, pair := range map[string][2]func() (float64, bool){
		"Rate":         {seeded.Rate, manual.Rate},
		"MeanInterval": {seeded.MeanInterval, manual.MeanInterval},
		"IntervalSCV":  {seeded.IntervalSCV, manual.IntervalSCV},
	} {
		a, aok := pair[0]()
		b, bok := pair[1]()
		if a != b || aok != bok {
			t.Errorf("%s: seeded %g (%v), observed in order %g (%v)", name, a, aok, b, bok)
		}
	}
	// Four events 10 minutes apart: the mean interval is 10 minutes.
	mean, _ := seeded.MeanInterval()
	assertApprox(t, "seeded MeanInterval", mean, 600, 1e-9)
}
