package ledger

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
)

// workloadName and clusterQueueName stand for the caller's string types of
// a workload's and a ClusterQueue's name.
type (
	workloadName     string
	clusterQueueName string
)

// t0 is when the workloads of the tests queue.
var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func TestScoreOf(t *testing.T) {
	at := t0.Add(10 * time.Second)
	nan := math.NaN()
	stamp := func(ema, paper, whitt float64) *Stamp[clusterQueueName] {
		return &Stamp[clusterQueueName]{ClusterQueue: "cq", At: at.UnixNano(), Method: engine.MethodForecast, EMA: ema, Paper: paper, Whitt: whitt}
	}
	key := workloadName("ns/w")
	tests := map[string]struct {
		line     Line[clusterQueueName]
		since    time.Time
		admitted time.Time
		want     Score[workloadName, clusterQueueName]
		wantOK   bool
	}{
		"no estimate published": {
			line: Line[clusterQueueName]{}, since: t0, admitted: at,
		},
		// Queued at t0, first estimated 10 s later, admitted 6 s after
		// that. The baselines predicted whole waits of 15 s (EMA: 5 s
		// remain) and 8 s (paper: already overdue, so 0 remain).
		"baselines turn into what remained": {
			line:  Line[clusterQueueName]{Stamp: stamp(15, 8, nan), Mean: 4, P50: 3, P90: 9},
			since: t0, admitted: at.Add(6 * time.Second), wantOK: true,
			want: Score[workloadName, clusterQueueName]{
				Workload: key, ClusterQueue: "cq", Priority: 7, Method: engine.MethodForecast,
				EstimatedAt: at, Waited: 10 * time.Second, Actual: 6 * time.Second,
				Forecast: Prediction{Wait: 4 * time.Second, OK: true},
				P50:      Prediction{Wait: 3 * time.Second, OK: true},
				P90:      Prediction{Wait: 9 * time.Second, OK: true},
				RawP50:   Prediction{Wait: 3 * time.Second, OK: true},
				RawP90:   Prediction{Wait: 9 * time.Second, OK: true},
				EMA:      Prediction{Wait: 5 * time.Second, OK: true},
				Paper:    Prediction{Wait: 0, OK: true},
			},
		},
		// Calibrated at its stamp: the published quantiles are the
		// roll's scaled by e^q (ε = 1 s: (3 + 1)·e^ln2 − 1 = 7,
		// (9 + 1)·e^ln1.5 − 1 = 14); the raw ones stay as rolled.
		"calibrated quantiles beside the raw ones": {
			line: Line[clusterQueueName]{Stamp: &Stamp[clusterQueueName]{ClusterQueue: "cq", At: at.UnixNano(), Method: engine.MethodForecast, EMA: nan, Paper: nan, Whitt: nan,
				Calibration: engine.Calibration{Q50: math.Ln2, Q90: math.Log(1.5), Eps: 1}}, Mean: 4, P50: 3, P90: 9},
			since: t0, admitted: at.Add(6 * time.Second), wantOK: true,
			want: Score[workloadName, clusterQueueName]{
				Workload: key, ClusterQueue: "cq", Priority: 7, Method: engine.MethodForecast,
				EstimatedAt: at, Waited: 10 * time.Second, Actual: 6 * time.Second,
				Forecast:         Prediction{Wait: 4 * time.Second, OK: true},
				P50:              Prediction{Wait: 7 * time.Second, OK: true},
				P90:              Prediction{Wait: 14 * time.Second, OK: true},
				RawP50:           Prediction{Wait: 3 * time.Second, OK: true},
				RawP90:           Prediction{Wait: 9 * time.Second, OK: true},
				CalibrationScale: 1,
			},
		},
		"no forecast, baselines only": {
			line:  Line[clusterQueueName]{Stamp: stamp(2, nan, nan), Mean: float32(nan), P50: float32(nan), P90: float32(nan)},
			since: at, admitted: at.Add(time.Second), wantOK: true,
			want: Score[workloadName, clusterQueueName]{
				Workload: key, ClusterQueue: "cq", Priority: 7, Method: engine.MethodNone,
				EstimatedAt: at, Actual: time.Second,
				EMA: Prediction{Wait: 2 * time.Second, OK: true},
			},
		},
		// Clocks disagree by a little: neither wait goes negative.
		"queued after the estimate, admitted before it": {
			line:  Line[clusterQueueName]{Stamp: stamp(1, 1, 1), Mean: 0, P50: 0, P90: 0},
			since: at.Add(time.Second), admitted: at.Add(-time.Millisecond), wantOK: true,
			want: Score[workloadName, clusterQueueName]{
				Workload: key, ClusterQueue: "cq", Priority: 7, Method: engine.MethodForecast, EstimatedAt: at,
				Forecast: Prediction{OK: true}, P50: Prediction{OK: true}, P90: Prediction{OK: true},
				RawP50: Prediction{OK: true}, RawP90: Prediction{OK: true},
				EMA: Prediction{Wait: time.Second, OK: true}, Paper: Prediction{Wait: time.Second, OK: true},
				Whitt: Prediction{Wait: time.Second, OK: true},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, ok := scoreOf(tc.line, key, clusterQueueName("cq"), 7, tc.since, tc.admitted)
			if ok != tc.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("score (-want,+got):\n%s", diff)
			}
		})
	}
}
