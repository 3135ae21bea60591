package queuestats

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
	"github.com/kueue-waittime/kueue-waittime/pkg/estimates"
)

func TestModelOf(t *testing.T) {
	rolled := &engine.Rolled{UnfeasibleWorkloads: 1}
	cases := map[string]struct {
		v    View
		want estimates.QueueModel[string]
	}{
		"no statistics": {
			want: estimates.QueueModel[string]{ClusterQueue: "cq", At: t0, PendingWorkloads: 3, UnfeasibleWorkloads: 1},
		},
		"an EMA, coverage and a calibration": {
			v: func() View {
				v := View{EMA: 12, HasEMA: true, P50Coverage: 0.4, P90Coverage: 0.8, HasCoverage: true, Scored: 9, Calibrated: true}
				v.Calibration.Q50, v.Calibration.Q90 = math.Log(2), 0
				return v
			}(),
			want: estimates.QueueModel[string]{ClusterQueue: "cq", At: t0, PendingWorkloads: 3, UnfeasibleWorkloads: 1,
				EMAWait: 12 * time.Second, HasEMA: true, P50Coverage: 0.4, P90Coverage: 0.8, HasCoverage: true, ScoredWorkloads: 9,
				Calibrated: true, P50Adjustment: 2, P90Adjustment: 1},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ModelOf("cq", t0, tc.v, rolled, 3)); diff != "" {
				t.Errorf("ModelOf (-want,+got):\n%s", diff)
			}
		})
	}
}
