package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 7)) }

func mustServiceTimes(t *testing.T, clock Clock, seed uint64, opts ReservoirOptions) *ServiceTimes {
	t.Helper()
	s, err := NewServiceTimes(clock, newRand(seed), opts)
	if err != nil {
		t.Fatalf("NewServiceTimes: %v", err)
	}
	return s
}

func TestNewServiceTimesOptions(t *testing.T) {
	tests := map[string]struct {
		clock        Clock
		rng          *rand.Rand
		opts         ReservoirOptions
		wantErr      bool
		wantCapacity int
	}{
		"defaults":             {clock: newFakeClock(), rng: newRand(1), wantCapacity: DefaultReservoirCapacity},
		"explicit capacity":    {clock: newFakeClock(), rng: newRand(1), opts: ReservoirOptions{Capacity: 3}, wantCapacity: 3},
		"nil clock":            {rng: newRand(1), wantErr: true},
		"nil rng":              {clock: newFakeClock(), wantErr: true},
		"negative capacity":    {clock: newFakeClock(), rng: newRand(1), opts: ReservoirOptions{Capacity: -1}, wantErr: true},
		"negative half-life":   {clock: newFakeClock(), rng: newRand(1), opts: ReservoirOptions{HalfLife: -time.Hour}, wantErr: true},
		"negative min samples": {clock: newFakeClock(), rng: newRand(1), opts: ReservoirOptions{MinSamples: -2}, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, err := NewServiceTimes(tc.clock, tc.rng, tc.opts)
			if tc.wantErr {
				if !errors.Is(err, ErrInvalidInput) || s != nil {
					t.Fatalf("got %v, %v; want nil, ErrInvalidInput", s, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Capacity() != tc.wantCapacity {
				t.Errorf("Capacity = %d, want %d", s.Capacity(), tc.wantCapacity)
			}
		})
	}
}

func TestServiceTimesHandValues(t *testing.T) {
	s := mustServiceTimes(t, newFakeClock(), 1, ReservoirOptions{Capacity: 10, MinSamples: 2})
	for _, v := range []float64{30, 10, 40, 20} {
		if !s.Observe(v) {
			t.Fatalf("Observe(%g) rejected", v)
		}
	}
	// Mean 25; s² = (25+225+225+25)/3 = 166.667; C_S² = 166.667/625 = 0.266667.
	mean, ok := s.Mean()
	assertApprox(t, "Mean", mean, 25, 1e-12)
	assertOK(t, "Mean", ok, true)
	scv, ok := s.SCV()
	assertApprox(t, "SCV", scv, (500.0/3)/625, 1e-12)
	assertOK(t, "SCV", ok, true)
	// Sorted 10 20 30 40; position (n−1)q: 0.5 → 1.5 → 25; 0.9 → 2.7 → 37.
	for q, want := range map[float64]float64{0: 10, 0.25: 17.5, 0.5: 25, 0.9: 37, 1: 40} {
		got, ok, err := s.Quantile(q)
		if err != nil || !ok {
			t.Fatalf("Quantile(%g): ok %v, err %v", q, ok, err)
		}
		assertApprox(t, "Quantile", got, want, 1e-12)
	}
	// An observation invalidates the cached order.
	s.Observe(0)
	if got, _, _ := s.Quantile(0); got != 0 {
		t.Errorf("Quantile(0) after observing 0 = %g, want 0", got)
	}
	if s.Len() != 5 || s.Count() != 5 {
		t.Errorf("Len %d, Count %d; want 5, 5", s.Len(), s.Count())
	}
	values := s.AppendValues(nil)
	slices.Sort(values)
	if !slices.Equal(values, []float64{0, 10, 20, 30, 40}) {
		t.Errorf("AppendValues = %v", values)
	}
}

func TestServiceTimesTooLittleHistory(t *testing.T) {
	s := mustServiceTimes(t, newFakeClock(), 1, ReservoirOptions{MinSamples: 3})
	if v, ok := s.Mean(); v != 0 || ok {
		t.Errorf("empty Mean = %g, %v", v, ok)
	}
	if v, ok, err := s.Quantile(0.5); v != 0 || ok || err != nil {
		t.Errorf("empty Quantile = %g, %v, %v", v, ok, err)
	}
	s.Observe(4)
	if v, ok := s.SCV(); v != 0 || ok {
		t.Errorf("SCV of one value = %g, %v; want 0, false", v, ok)
	}
	s.Observe(8)
	mean, ok := s.Mean()
	assertApprox(t, "Mean", mean, 6, 1e-12)
	assertOK(t, "Mean of 2 with minimum 3", ok, false)
	scv, ok := s.SCV()
	assertApprox(t, "SCV", scv, 8.0/36, 1e-12)
	assertOK(t, "SCV of 2 with minimum 3", ok, false)
	s.Observe(6)
	_, ok = s.Mean()
	assertOK(t, "Mean of 3", ok, true)
}

func TestServiceTimesRejectsInvalid(t *testing.T) {
	s := mustServiceTimes(t, newFakeClock(), 1, ReservoirOptions{MinSamples: 1})
	s.Observe(5)
	s.Observe(15)
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1), math.Inf(-1), -1e-300} {
		if s.Observe(bad) {
			t.Errorf("Observe(%g) accepted", bad)
		}
	}
	mean, _ := s.Mean()
	if mean != 10 || s.Len() != 2 || s.Count() != 2 || s.Rejected() != 5 {
		t.Errorf("after rejections: mean %g, len %d, count %d, rejected %d; want 10, 2, 2, 5", mean, s.Len(), s.Count(), s.Rejected())
	}
	for _, q := range []float64{-0.1, 1.1, math.NaN()} {
		if _, ok, err := s.Quantile(q); !errors.Is(err, ErrInvalidInput) || ok {
			t.Errorf("Quantile(%g): ok %v, err %v; want ErrInvalidInput", q, ok, err)
		}
	}
}

func TestServiceTimesNeverExceedsCapacity(t *testing.T) {
	for _, halfLife := range []time.Duration{0, time.Minute} {
		clock := newFakeClock()
		s := mustServiceTimes(t, clock, 3, ReservoirOptions{Capacity: 64, HalfLife: halfLife})
		for i := range 10_000 {
			clock.Advance(time.Second)
			s.Observe(float64(i))
			if s.Len() > 64 {
				t.Fatalf("half-life %v: Len = %d after %d observations, capacity 64", halfLife, s.Len(), i+1)
			}
		}
		if s.Len() != 64 || s.Count() != 10_000 {
			t.Errorf("half-life %v: Len %d, Count %d; want 64, 10000", halfLife, s.Len(), s.Count())
		}
	}
}

// With no decay every observation ends up in the sample with probability
// capacity/n (Algorithm R).
func TestServiceTimesUniformInclusion(t *testing.T) {
	const capacity, n, runs = 10, 100, 20_000
	rng := newRand(42)
	clock := newFakeClock()
	included := make([]int, n)
	for range runs {
		s, err := NewServiceTimes(clock, rng, ReservoirOptions{Capacity: capacity})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			s.Observe(float64(i))
		}
		for _, v := range s.AppendValues(nil) {
			included[int(v)]++
		}
	}
	// Expected 2000 per index, σ = √(20000·0.1·0.9) ≈ 42; allow 6σ.
	for i, c := range included {
		if math.Abs(float64(c)-runs*capacity/n) > 255 {
			t.Errorf("value %d included %d times in %d runs, want about %d", i, c, runs, runs*capacity/n)
		}
	}
}

func TestServiceTimesLargeSampleLooksUniform(t *testing.T) {
	const n = 100_000
	s := mustServiceTimes(t, newFakeClock(), 5, ReservoirOptions{})
	for i := range n {
		s.Observe(float64(i))
	}
	// A uniform sample of 512 from [0, 1e5): mean σ = 28,868/√512 ≈ 1,276.
	mean, _ := s.Mean()
	if math.Abs(mean-n/2) > 5_000 {
		t.Errorf("sample mean %g, want %d ± 5000", mean, n/2)
	}
	quarters := make([]int, 4)
	for _, v := range s.AppendValues(nil) {
		quarters[int(v)*4/n]++
	}
	// 128 per quarter, σ ≈ 9.8.
	for i, c := range quarters {
		if c < 90 || c > 166 {
			t.Errorf("quarter %d holds %d of 512, want about 128", i, c)
		}
	}
	// The median of the sample is near n/2.
	median, _, _ := s.Quantile(0.5)
	if math.Abs(median-n/2) > 8_000 {
		t.Errorf("sample median %g, want about %d", median, n/2)
	}
}

func TestServiceTimesHalfLifeFollowsChange(t *testing.T) {
	run := func(halfLife time.Duration) float64 {
		clock := newFakeClock()
		s := mustServiceTimes(t, clock, 9, ReservoirOptions{Capacity: 64, HalfLife: halfLife})
		for range 2000 {
			clock.Advance(time.Second)
			s.Observe(10)
		}
		for range 2000 {
			clock.Advance(time.Second)
			s.Observe(100)
		}
		mean, _ := s.Mean()
		return mean
	}
	// Uniform: about half the sample is old (mean ≈ 55). With h = 100 s the
	// old values survive 2000 s with probability 2^−20 each.
	if uniform := run(0); uniform > 80 || uniform < 30 {
		t.Errorf("uniform-sample mean %g, want about 55", uniform)
	}
	if recent := run(100 * time.Second); recent < 99 {
		t.Errorf("decayed-sample mean %g, want about 100", recent)
	}
}

func TestServiceTimesOutOfOrderWithHalfLife(t *testing.T) {
	clock := newFakeClock()
	s := mustServiceTimes(t, clock, 1, ReservoirOptions{Capacity: 2, HalfLife: time.Minute, MinSamples: 1})
	now := clock.Now()
	s.ObserveAt(now, 5)
	s.ObserveAt(now.Add(-time.Hour), 7) // late report
	s.ObserveAt(now.Add(time.Second), 9)
	if s.Len() != 2 || s.Count() != 3 {
		t.Fatalf("Len %d, Count %d; want 2, 3", s.Len(), s.Count())
	}
	mean, ok := s.Mean()
	if !ok || math.IsNaN(mean) || mean < 5 || mean > 9 {
		t.Errorf("Mean = %g, %v; want within [5, 9]", mean, ok)
	}
}

func TestServiceTimesSeed(t *testing.T) {
	clock := newFakeClock()
	now := clock.Now()
	spans := []Span{
		{Start: now.Add(-100 * time.Second), End: now.Add(-40 * time.Second)}, // 60 s
		{Start: now.Add(-50 * time.Second), End: now.Add(-30 * time.Second)},  // 20 s
		{Start: now.Add(-10 * time.Second), End: now.Add(-20 * time.Second)},  // negative: rejected
		{Start: now.Add(-90 * time.Second), End: now.Add(-50 * time.Second)},  // 40 s
	}
	original := slices.Clone(spans)
	s := mustServiceTimes(t, clock, 1, ReservoirOptions{MinSamples: 3})
	if got := s.Seed(spans); got != 3 {
		t.Errorf("Seed accepted %d, want 3", got)
	}
	if !slices.Equal(spans, original) {
		t.Errorf("Seed modified its argument")
	}
	mean, ok := s.Mean()
	assertApprox(t, "Mean", mean, 40, 1e-12)
	assertOK(t, "Mean", ok, true)
	if s.Rejected() != 1 {
		t.Errorf("Rejected = %d, want 1", s.Rejected())
	}
}
