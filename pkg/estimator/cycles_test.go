package estimator

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestCycleWindowKeepsTheLastCyclesAndSharesOneCopyUntilTheNext(t *testing.T) {
	cases := map[string]struct {
		observed   int // cycles of busy time 1, 2, …, observed seconds
		wantMean   float64
		wantValues []float64
	}{
		"empty": {},
		"one cycle": {
			observed: 1, wantMean: 1, wantValues: []float64{1},
		},
		"filling": {
			observed: 3, wantMean: 2, wantValues: []float64{1, 2, 3},
		},
		"full": {
			observed: cycleWindowSize, wantMean: float64(cycleWindowSize+1) / 2,
			wantValues: seconds(1, cycleWindowSize),
		},
		"the oldest give way": {
			observed: cycleWindowSize + 10, wantMean: float64(cycleWindowSize+21) / 2,
			wantValues: seconds(11, cycleWindowSize+10),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var w cycleWindow
			for i := 1; i <= tc.observed; i++ {
				w.observe(float64(i))
			}
			mean, values := w.sample()
			sorted := cmpopts.SortSlices(func(a, b float64) bool { return a < b })
			if diff := cmp.Diff(tc.wantValues, values, sorted, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("values (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantMean, mean, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("mean (-want,+got):\n%s", diff)
			}
			if tc.observed == 0 {
				return
			}
			if _, again := w.sample(); &again[0] != &values[0] {
				t.Error("a second read without a new cycle copied the window again")
			}
			kept := append([]float64(nil), values...)
			w.observe(1000)
			if diff := cmp.Diff(kept, values); diff != "" {
				t.Errorf("a new cycle changed the values already handed out (-before,+after):\n%s", diff)
			}
			if mean, _ := w.sample(); mean <= tc.wantMean {
				t.Errorf("mean after a 1000 s cycle = %v, want above %v", mean, tc.wantMean)
			}
		})
	}
}

// seconds is from, from+1, …, to.
func seconds(from, to int) []float64 {
	out := make([]float64, 0, to-from+1)
	for i := from; i <= to; i++ {
		out = append(out, float64(i))
	}
	return out
}
