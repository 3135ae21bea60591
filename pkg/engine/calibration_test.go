package engine

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kueue-waittime/kueue-waittime/pkg/calibration"
)

func TestPublishForPriority(t *testing.T) {
	cal := Calibration{Q50: 0.5, Q90: 0.25, Eps: 1, Priorities: map[int32]PriorityAdjustment{
		1000: {Q50: -0.5, Q90: -0.25, Applied: true},
		100:  {Q50: 2, Q90: 2, Applied: false},
	}}
	adjust := func(raw, q float64) float64 { return calibration.Adjust(raw, q, 1) }
	cases := map[string]struct {
		priority int32
		// want is the published mean (of a raw 12 s), P50 and P90 (of 10
		// and 20 s): the mean takes the P50's adjustment.
		want [3]float64
	}{
		"a priority whose calibrators apply uses its own adjustments": {priority: 1000, want: [3]float64{adjust(12, -0.5), adjust(10, -0.5), adjust(20, -0.25)}},
		"a priority with too few scores uses the ClusterQueue's":      {priority: 100, want: [3]float64{adjust(12, 0.5), adjust(10, 0.5), adjust(20, 0.25)}},
		"a priority never scored uses the ClusterQueue's":             {priority: 7, want: [3]float64{adjust(12, 0.5), adjust(10, 0.5), adjust(20, 0.25)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p50, p90 := cal.PublishFor(tc.priority, 10, 20)
			mean := cal.PublishMeanFor(tc.priority, 12)
			if diff := cmp.Diff(tc.want, [3]float64{mean, p50, p90}, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
				t.Errorf("published mean, P50, P90 (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestPublishMeanFor(t *testing.T) {
	cases := map[string]struct {
		cal  Calibration
		mean float64
		want float64
	}{
		"no adjustment yet: the mean as rolled": {cal: Calibration{Eps: 1}, mean: 12, want: 12},
		// (12 + 2)·2 − 2.
		"the P50's factor on the mean plus the scale floor": {cal: Calibration{Q50: math.Ln2, Q90: 5, Eps: 2}, mean: 12, want: 26},
		// (0.5 + 1)·e^(−3) − 1 < 0.
		"a shrinking adjustment never goes below zero": {cal: Calibration{Q50: -3, Eps: 1}, mean: 0.5, want: 0},
		"no forecast stays no forecast":                {cal: Calibration{Q50: math.Ln2, Eps: 1}, mean: math.NaN(), want: math.NaN()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.cal.PublishMeanFor(0, tc.mean)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(1e-12, 0), cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("published mean (-want,+got):\n%s", diff)
			}
		})
	}
}
