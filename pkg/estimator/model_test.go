package estimator

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestPriorityModels(t *testing.T) {
	cases := map[string]struct {
		servers int
		rates   map[int32]float64
		want    []PriorityModel
	}{
		// M/M/4, E[S] 20 s: ρ_100 = 0.05·20/4 = 0.25, ρ_0 = 0.15·20/4 =
		// 0.75. Erlang C(4, 1) = 0.020408 and C(4, 3) = 0.509434 by hand,
		// W = C·E[S]/(k(1−ρ)).
		"two priorities, the lower one behind both loads": {
			servers: 4,
			rates:   map[int32]float64{0: 0.1, 100: 0.05},
			want: []PriorityModel{
				{Priority: 100, ArrivalRate: 0.05, Utilization: 0.25, Stable: true, MeanWait: 136054 * time.Microsecond},
				{Priority: 0, ArrivalRate: 0.1, Utilization: 0.75, Stable: true, MeanWait: 10188680 * time.Microsecond},
			},
		},
		"the low priority unstable, the high one not": {
			servers: 4,
			rates:   map[int32]float64{0: 0.2, 100: 0.05},
			want: []PriorityModel{
				{Priority: 100, ArrivalRate: 0.05, Utilization: 0.25, Stable: true, MeanWait: 136054 * time.Microsecond},
				{Priority: 0, ArrivalRate: 0.2, Utilization: 1.25},
			},
		},
		"one priority: no breakdown": {servers: 4, rates: map[int32]float64{0: 0.1}},
		"no servers: no breakdown":   {servers: 0, rates: map[int32]float64{0: 0.1, 1: 0.1}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := priorityModels(tc.servers, tc.rates, 20, 1)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(1e-5, 0),
				cmp.Comparer(func(a, b time.Duration) bool { return (a - b).Abs() < 10*time.Microsecond })); diff != "" {
				t.Errorf("priority models (-want,+got):\n%s", diff)
			}
		})
	}
}
