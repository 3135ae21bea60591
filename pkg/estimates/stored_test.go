package estimates

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
)

type clusterQueueName string

func TestStoredEstimateReadsBackAsPublished(t *testing.T) {
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	stamp := &Stamp[clusterQueueName]{ClusterQueue: "cq", At: at}
	cases := map[string]struct {
		in      WorkloadEstimate[clusterQueueName]
		reason  string
		want    WorkloadEstimate[clusterQueueName]
		wantDue time.Time
	}{
		"a forecast, to the millisecond": {
			in: WorkloadEstimate[clusterQueueName]{ClusterQueue: "cq", Admissibility: capacity.Quotable, Method: engine.MethodForecast, HasWait: true,
				ExpectedWait: 1500*time.Millisecond + 400*time.Microsecond, P50: time.Second, P90: 3 * time.Second, EstimatedAt: at},
			want: WorkloadEstimate[clusterQueueName]{ClusterQueue: "cq", Admissibility: capacity.Quotable, Method: engine.MethodForecast, HasWait: true,
				ExpectedWait: 1500 * time.Millisecond, P50: time.Second, P90: 3 * time.Second, EstimatedAt: at,
				EstimatedAdmission: at.Add(1500 * time.Millisecond)},
			wantDue: at.Add(time.Second),
		},
		"Unfeasible, with its reason": {
			in:     WorkloadEstimate[clusterQueueName]{ClusterQueue: "cq", Admissibility: capacity.Unfeasible, Method: engine.MethodNone, EstimatedAt: at},
			reason: "flavor default: cpu 20 > potential 2",
			want: WorkloadEstimate[clusterQueueName]{ClusterQueue: "cq", Admissibility: capacity.Unfeasible, Method: engine.MethodNone, EstimatedAt: at,
				Reason: "flavor default: cpu 20 > potential 2"},
		},
		"a wait too long to keep saturates beyond the horizon": {
			in: WorkloadEstimate[clusterQueueName]{ClusterQueue: "cq", Admissibility: capacity.Quotable, Method: engine.MethodAPriori, HasWait: true,
				ExpectedWait: 60 * 24 * time.Hour, EstimatedAt: at},
			want: WorkloadEstimate[clusterQueueName]{ClusterQueue: "cq", Admissibility: capacity.Quotable, Method: engine.MethodAPriori, HasWait: true,
				ExpectedWait: math.MaxUint32 * time.Millisecond, EstimatedAt: at, BeyondHorizon: true,
				EstimatedAdmission: at.Add(math.MaxUint32 * time.Millisecond)},
			wantDue: at,
		},
		"the longest duration saturates too, not wrapping around": {
			in: WorkloadEstimate[clusterQueueName]{ClusterQueue: "cq", Admissibility: capacity.Quotable, Method: engine.MethodAPriori, HasWait: true,
				ExpectedWait: math.MaxInt64, P50: math.MaxInt64 - time.Millisecond/4, P90: math.MaxInt64, EstimatedAt: at},
			want: WorkloadEstimate[clusterQueueName]{ClusterQueue: "cq", Admissibility: capacity.Quotable, Method: engine.MethodAPriori, HasWait: true,
				ExpectedWait: math.MaxUint32 * time.Millisecond, P50: math.MaxUint32 * time.Millisecond, P90: math.MaxUint32 * time.Millisecond,
				EstimatedAt: at, BeyondHorizon: true, EstimatedAdmission: at.Add(math.MaxUint32 * time.Millisecond)},
			wantDue: at.Add(math.MaxUint32 * time.Millisecond),
		},
		"an unknown method reads back as none": {
			in:   WorkloadEstimate[clusterQueueName]{ClusterQueue: "cq", Admissibility: capacity.Quotable, Method: "Guess", EstimatedAt: at},
			want: WorkloadEstimate[clusterQueueName]{ClusterQueue: "cq", Admissibility: capacity.Quotable, Method: engine.MethodNone, EstimatedAt: at},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := Store(tc.in, stamp)
			if diff := cmp.Diff(tc.want, s.Estimate(tc.reason)); diff != "" {
				t.Errorf("Estimate (-want,+got):\n%s", diff)
			}
			due, ok := s.Due()
			if diff := cmp.Diff(tc.wantDue, due); diff != "" || ok == tc.wantDue.IsZero() {
				t.Errorf("Due = %v, %v (-want,+got):\n%s", due, ok, diff)
			}
		})
	}
}
