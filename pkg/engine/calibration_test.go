package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kueue-waittime/kueue-waittime/pkg/calibration"
)

func TestPublishForPriority(t *testing.T) {
	cal := Calibration{Q50: 0.5, Q90: 0.25, Eps: 1, Priorities: map[int32]Adjustment{
		1000: {Q50: -0.5, Q90: -0.25, Applied: true},
		100:  {Q50: 2, Q90: 2, Applied: false},
	}}
	adjust := func(raw, q float64) float64 { return calibration.Adjust(raw, q, 1) }
	cases := map[string]struct {
		priority int32
		want     [2]float64
	}{
		"a priority whose calibrators apply uses its own adjustments": {priority: 1000, want: [2]float64{adjust(10, -0.5), adjust(20, -0.25)}},
		"a priority with too few scores uses the ClusterQueue's":      {priority: 100, want: [2]float64{adjust(10, 0.5), adjust(20, 0.25)}},
		"a priority never scored uses the ClusterQueue's":             {priority: 7, want: [2]float64{adjust(10, 0.5), adjust(20, 0.25)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p50, p90 := cal.PublishFor(tc.priority, 10, 20)
			if diff := cmp.Diff(tc.want, [2]float64{p50, p90}, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
				t.Errorf("published (-want,+got):\n%s", diff)
			}
		})
	}
}
