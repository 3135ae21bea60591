package stats

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestDecayedMean(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	type obs struct {
		after time.Duration
		x     float64
	}
	type result struct {
		Value    float64
		OK       bool
		Weight   float64
		Rejected uint64
	}
	tests := map[string]struct {
		minSamples int
		obs        []obs
		want       result
	}{
		"empty": {minSamples: 1, want: result{}},
		"one hit": {minSamples: 1, obs: []obs{{0, 1}},
			want: result{Value: 1, OK: true, Weight: 1}},
		"below the minimum": {minSamples: 3, obs: []obs{{0, 1}, {0, 0}},
			want: result{Weight: 2}},
		// Same instant: the plain mean, 2 hits of 4.
		"no decay at one instant": {minSamples: 1, obs: []obs{{0, 1}, {0, 0}, {0, 1}, {0, 0}},
			want: result{Value: 0.5, OK: true, Weight: 4}},
		// A miss one half-life (1h) after a hit: weights ½ and 1, so
		// (½·1 + 1·0)/(½ + 1) = 1/3.
		"one half-life apart": {minSamples: 1, obs: []obs{{0, 1}, {time.Hour, 0}},
			want: result{Value: 1.0 / 3, OK: true, Weight: 1.5}},
		// Out of order: the hit is half a life older than the latest miss.
		"out of order": {minSamples: 1, obs: []obs{{time.Hour, 0}, {0, 1}},
			want: result{Value: 1.0 / 3, OK: true, Weight: 1.5}},
		"rejects NaN and Inf": {minSamples: 1, obs: []obs{{0, 1}, {0, math.NaN()}, {0, math.Inf(1)}},
			want: result{Value: 1, OK: true, Weight: 1, Rejected: 2}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m, err := NewDecayedMean(DecayOptions{HalfLife: time.Hour, MinSamples: tc.minSamples})
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range tc.obs {
				m.ObserveAt(t0.Add(o.after), o.x)
			}
			v, ok := m.Value()
			got := result{Value: v, OK: ok, Weight: m.Weight(), Rejected: m.Rejected()}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewDecayedMeanRejectsNegativeOptions(t *testing.T) {
	for name, opts := range map[string]DecayOptions{
		"half-life":   {HalfLife: -time.Second},
		"min samples": {MinSamples: -1},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := NewDecayedMean(opts); !errors.Is(err, ErrInvalidInput) {
				t.Errorf("err = %v, want ErrInvalidInput", err)
			}
		})
	}
}

// A long run of hits at rate p settles near p however long the half-life
// compared to the spacing.
func TestDecayedMeanTracksARate(t *testing.T) {
	m, err := NewDecayedMean(DecayOptions{HalfLife: time.Minute, MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	for i := range 10_000 {
		x := 0.0
		if i%10 != 0 { // 9 hits in 10
			x = 1
		}
		m.ObserveAt(t0.Add(time.Duration(i)*time.Second), x)
	}
	if v, ok := m.Value(); !ok || math.Abs(v-0.9) > 0.02 {
		t.Errorf("Value = %v, %v; want 0.9 ± 0.02", v, ok)
	}
}
