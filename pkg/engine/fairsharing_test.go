package engine

import (
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
)

// TestRollAdmissionFairSharing: the roll passes the ClusterQueue's
// admission fair sharing and the workloads' LocalQueues to the forecast.
// One slot of 1 CPU, a prior of 20 s: the older workload, of a busy
// LocalQueue, waits behind the idle LocalQueue's with AFS, and is
// admitted first without.
func TestRollAdmissionFairSharing(t *testing.T) {
	afs := &forecast.AdmissionFairSharing{HalfLifeSeconds: 3600, SamplingIntervalSeconds: 300,
		LocalQueues: []forecast.LocalQueueUsage{{Consumed: 40, Weight: 1}, {Weight: 1}}}
	cases := map[string]struct {
		afs       *forecast.AdmissionFairSharing
		wantFirst string
	}{
		"without": {nil, "busy"},
		"with":    {afs, "idle"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q := Queue{
				Capacity:             cpuQueue(1000),
				Classes:              []capacity.Workload{cpuShape(1000)},
				Pending:              []Pending{{ID: "busy", LocalQueue: 1}, {ID: "idle", LocalQueue: 2}},
				AdmissionFairSharing: tc.afs,
			}
			r, err := testEngine(t, engineConfig{PriorMeanServiceSeconds: 20}).Roll(q, seed)
			if err != nil || r.ForecastErr != nil {
				t.Fatalf("Roll: %v, %v", err, r.ForecastErr)
			}
			first := map[bool]string{true: "busy", false: "idle"}[r.Estimates[0].ExpectedWait < r.Estimates[1].ExpectedWait]
			if diff := cmp.Diff(tc.wantFirst, first); diff != "" {
				t.Errorf("first admitted (-want +got):\n%s (waits %v, %v)", diff, r.Estimates[0].ExpectedWait, r.Estimates[1].ExpectedWait)
			}
		})
	}
}

// TestPendingSize: the LocalQueue fits in Pending's padding.
func TestPendingSize(t *testing.T) {
	if got := unsafe.Sizeof(Pending{}); got != 48 {
		t.Errorf("Pending is %d bytes, want 48", got)
	}
}
