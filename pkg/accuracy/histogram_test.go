package accuracy

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHistogramQuantileHandValues(t *testing.T) {
	inf := math.Inf(1)
	bounds := []float64{1, 2, 5, inf}
	counts := []float64{2, 6, 9, 10}
	type result struct {
		V  float64
		OK bool
	}
	tests := map[string]struct {
		q      float64
		bounds []float64
		counts []float64
		want   result
	}{
		// rank = 0.5·10 = 5 falls in (1, 2] holding 6 − 2 = 4, the 3rd of
		// them: 1 + (2 − 1)·(5 − 2)/4 = 1.75.
		"median": {q: 0.5, bounds: bounds, counts: counts, want: result{1.75, true}},
		// rank 1 in the first bucket, whose lower bound is 0: 0 + 1·1/2.
		"first bucket from 0": {q: 0.1, bounds: bounds, counts: counts, want: result{0.5, true}},
		// rank 9 = count of (2, 5]: its upper bound.
		"upper bound reached": {q: 0.9, bounds: bounds, counts: counts, want: result{5, true}},
		"+Inf bucket":         {q: 0.95, bounds: bounds, counts: counts, want: result{5, true}},
		"q = 1":               {q: 1, bounds: bounds, counts: counts, want: result{5, true}},
		"q = 0":               {q: 0, bounds: bounds, counts: counts, want: result{0, true}},
		"q = 0, empty first":  {q: 0, bounds: bounds, counts: []float64{0, 6, 9, 10}, want: result{0, true}},
		// Counts 2, 1 are raised to 2, 2: rank 5 in (2, 5] holding 7:
		// 2 + 3·3/7.
		"non-monotone counts": {q: 0.5, bounds: bounds, counts: []float64{2, 1, 9, 10}, want: result{2 + 9.0/7, true}},
		"non-positive first":  {q: 0.1, bounds: []float64{-1, 0, 1, inf}, counts: []float64{1, 2, 3, 4}, want: result{-1, true}},
		// rank 3 in (−4, −2] holding 4, the 1st of them: −4 + 2·1/4.
		"negative bounds":       {q: 0.5, bounds: []float64{-4, -2, inf}, counts: []float64{2, 6, 6}, want: result{-3.5, true}},
		"only +Inf and one":     {q: 0.5, bounds: []float64{3, inf}, counts: []float64{0, 4}, want: result{3, true}},
		"empty histogram":       {q: 0.5, bounds: bounds, counts: []float64{0, 0, 0, 0}},
		"no +Inf bucket":        {q: 0.5, bounds: []float64{1, 2, 5}, counts: []float64{2, 6, 9}},
		"one bucket":            {q: 0.5, bounds: []float64{inf}, counts: []float64{3}},
		"lengths differ":        {q: 0.5, bounds: bounds, counts: counts[:3]},
		"bounds not increasing": {q: 0.5, bounds: []float64{2, 1, inf}, counts: []float64{1, 2, 3}},
		"repeated bound":        {q: 0.5, bounds: []float64{1, 1, inf}, counts: []float64{1, 2, 3}},
		"-Inf bound":            {q: 0.5, bounds: []float64{math.Inf(-1), 1, inf}, counts: []float64{1, 2, 3}},
		"NaN bound":             {q: 0.5, bounds: []float64{math.NaN(), 1, inf}, counts: []float64{1, 2, 3}},
		"NaN count":             {q: 0.5, bounds: bounds, counts: []float64{2, math.NaN(), 9, 10}},
		"negative count":        {q: 0.5, bounds: bounds, counts: []float64{-2, 6, 9, 10}},
		"infinite count":        {q: 0.5, bounds: bounds, counts: []float64{2, 6, 9, inf}},
		"q above 1":             {q: 1.5, bounds: bounds, counts: counts},
		"q negative":            {q: -0.5, bounds: bounds, counts: counts},
		"q NaN":                 {q: math.NaN(), bounds: bounds, counts: counts},
		"bounds near MaxFloat64": {q: 0.5, bounds: []float64{-math.MaxFloat64, math.MaxFloat64, inf},
			counts: []float64{0, 2, 2}, want: result{0, true}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			v, ok := HistogramQuantile(tc.q, tc.bounds, tc.counts)
			if diff := cmp.Diff(tc.want, result{v, ok}, approx); diff != "" {
				t.Errorf("HistogramQuantile (-want +got):\n%s", diff)
			}
		})
	}
}

// With observations spread uniformly inside the buckets the interpolation
// is exact: 1000 observations at (i+0.5)/100, i < 1000, in buckets of width
// 1 have every quantile q·10 recovered to within half a spacing.
func TestHistogramQuantileRecoversUniformData(t *testing.T) {
	bounds := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, math.Inf(1)}
	counts := make([]float64, len(bounds))
	for i := range 1000 {
		x := (float64(i) + 0.5) / 100
		for b, ub := range bounds {
			if x <= ub {
				counts[b]++
			}
		}
	}
	prev := math.Inf(-1)
	for i := 0; i <= 100; i++ {
		q := float64(i) / 100
		v, ok := HistogramQuantile(q, bounds, counts)
		if !ok || math.Abs(v-10*q) > 0.005+1e-12 {
			t.Errorf("HistogramQuantile(%g) = %g, %v; want %g", q, v, ok, 10*q)
		}
		if v < prev {
			t.Errorf("HistogramQuantile decreases at q = %g: %g after %g", q, v, prev)
		}
		prev = v
	}
}
