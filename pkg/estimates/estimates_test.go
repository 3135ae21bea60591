package estimates

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
)

func TestEstimateOfARoll(t *testing.T) {
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	wait := engine.Wait{HasWait: true, Method: engine.MethodForecast, ExpectedWait: 2 * time.Second, P50: time.Second, P90: 3 * time.Second}
	cases := map[string]struct {
		r    engine.Estimate
		want WorkloadEstimate[clusterQueueName]
	}{
		"Quotable with a wait": {
			r: engine.Estimate{Wait: wait},
			want: WorkloadEstimate[clusterQueueName]{ClusterQueue: "cq", Admissibility: capacity.Quotable, Method: engine.MethodForecast, HasWait: true,
				ExpectedWait: 2 * time.Second, P50: time.Second, P90: 3 * time.Second, EstimatedAt: at, EstimatedAdmission: at.Add(2 * time.Second)},
		},
		"Quotable without a wait": {
			want: WorkloadEstimate[clusterQueueName]{ClusterQueue: "cq", Admissibility: capacity.Quotable, Method: engine.MethodNone, EstimatedAt: at},
		},
		"Unfeasible": {
			r: engine.Estimate{Unfeasible: true, Reason: "too big", Wait: wait},
			want: WorkloadEstimate[clusterQueueName]{ClusterQueue: "cq", Admissibility: capacity.Unfeasible, Reason: "too big",
				Method: engine.MethodNone, EstimatedAt: at},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, EstimateOf[clusterQueueName]("cq", at, tc.r)); diff != "" {
				t.Errorf("EstimateOf (-want,+got):\n%s", diff)
			}
			m := QueueModel[clusterQueueName]{ClusterQueue: "cq", At: at}
			m.HasRates, m.Stable, m.Utilization = true, true, 0.5
			got := WhatIfOf(m, 7, engine.WhatIf{Position: 3, Estimate: tc.r})
			want := WhatIfEstimate[clusterQueueName]{WorkloadEstimate: tc.want, Priority: 7, Position: 3,
				QueueHasRates: true, QueueStable: true, QueueUtilization: 0.5}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("WhatIfOf (-want,+got):\n%s", diff)
			}
		})
	}
}
