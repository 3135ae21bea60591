package accuracy

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScoreQuantileHandValues(t *testing.T) {
	// Wilson(4, 6) by hand: p̂ = 2/3, z²/n = 3.841459/6 = 0.640243,
	// centre = (0.666667 + 0.320122)/1.640243 = 0.601611,
	// half = 1.959964/1.640243 · √(0.222222/6 + 0.640243/24) = 0.301618,
	// so [0.299993, 0.903229].
	wilson46 := Interval{Low: 0.299993315138392, High: 0.9032285888942195, Defined: true}
	tests := map[string]struct {
		samples []Sample
		level   float64
		want    QuantileScore
		wantOK  bool
	}{
		// (q, a) = (10, 8) (5, 9) (3, 3) (7, 1) (12, 10) (4, 5):
		// losses 0.1·2, 0.9·4, 0, 0.1·6, 0.1·2, 0.9·1 = 0.2+3.6+0+0.6+0.2+0.9
		// = 5.5, mean 5.5/6; covered (a ≤ q): all but (5, 9) and (4, 5).
		"P90 worked example": {
			samples: handSamples(), level: 0.9, wantOK: true,
			want: QuantileScore{Level: 0.9, N: 6, PinballLoss: 5.5 / 6, Covered: 4, Coverage: 4.0 / 6, CoverageInterval: wilson46},
		},
		// At τ = 0.5 the pinball loss is half the MAE (2.5).
		"median is half the MAE": {
			samples: handSamples(), level: 0.5, wantOK: true,
			want: QuantileScore{Level: 0.5, N: 6, PinballLoss: 1.25, Covered: 4, Coverage: 4.0 / 6, CoverageInterval: wilson46},
		},
		// τ = 1: only under-prediction costs, (4 + 0 + 1)/6.
		"level one": {
			samples: handSamples(), level: 1, wantOK: true,
			want: QuantileScore{Level: 1, N: 6, PinballLoss: 5.0 / 6, Covered: 4, Coverage: 4.0 / 6, CoverageInterval: wilson46},
		},
		// Actual +Inf is clamped to 1e12: loss 0.9·(1e12 − 1)/2 per sample.
		"NaN dropped, Inf clamped": {
			samples: []Sample{{Predicted: 1, Actual: math.Inf(1)}, {Predicted: math.NaN(), Actual: 1}},
			level:   0.9, wantOK: true,
			want: QuantileScore{Level: 0.9, N: 1, Dropped: 1, PinballLoss: 0.9 * (1e12 - 1),
				CoverageInterval: Interval{Low: 0, High: z975 * z975 / (1 + z975*z975), Defined: true}},
		},
		"level above one": {samples: handSamples(), level: 1.1},
		"negative level":  {samples: handSamples(), level: -0.1},
		"NaN level":       {samples: handSamples(), level: math.NaN()},
		"no samples":      {samples: nil, level: 0.9, want: QuantileScore{Level: 0.9}},
		"all samples NaN": {samples: []Sample{{Predicted: math.NaN()}}, level: 0.9, want: QuantileScore{Level: 0.9, Dropped: 1}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, ok := ScoreQuantile(tc.samples, tc.level)
			if ok != tc.wantOK {
				t.Errorf("ScoreQuantile ok = %v, want %v", ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, got, approx); diff != "" {
				t.Errorf("ScoreQuantile (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWilsonHandValues(t *testing.T) {
	type result struct {
		Low, High float64
		OK        bool
	}
	// For k = 0 the interval is [0, z²/(n + z²)]: n = 10 gives
	// 3.841459/13.841459 = 0.277533.
	zero10 := 3.841458820694124 / 13.841458820694124
	tests := map[string]struct {
		k, n int
		want result
	}{
		"4 of 6":     {k: 4, n: 6, want: result{0.299993315138392, 0.9032285888942195, true}},
		"0 of 10":    {k: 0, n: 10, want: result{0, zero10, true}},
		"10 of 10":   {k: 10, n: 10, want: result{1 - zero10, 1, true}},
		"1 of 1":     {k: 1, n: 1, want: result{1 / (1 + 3.841458820694124), 1, true}},
		"no trials":  {k: 0, n: 0},
		"negative n": {k: 0, n: -4},
		"negative k": {k: -1, n: 5},
		"k above n":  {k: 6, n: 5},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			lo, hi, ok := Wilson(tc.k, tc.n)
			if diff := cmp.Diff(tc.want, result{lo, hi, ok}, approx); diff != "" {
				t.Errorf("Wilson(%d, %d) (-want +got):\n%s", tc.k, tc.n, diff)
			}
		})
	}
}
