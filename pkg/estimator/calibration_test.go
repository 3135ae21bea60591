package estimator

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kueue-waittime/kueue-waittime/pkg/calibration"
)

func TestPublishForPriority(t *testing.T) {
	cal := quantileCalibration{q50: 0.5, q90: 0.25, eps: 1, priorities: map[int32]priorityAdjustment{
		1000: {q50: -0.5, q90: -0.25, applied: true},
		100:  {q50: 2, q90: 2, applied: false},
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
			p50, p90 := cal.publishFor(tc.priority, 10, 20)
			if diff := cmp.Diff(tc.want, [2]float64{p50, p90}, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
				t.Errorf("published (-want,+got):\n%s", diff)
			}
		})
	}
}

// One ClusterQueue, two priorities that err in opposite directions: the
// high one waits a third of its raw forecast, the low one three times it.
// Once each has enough scores, each priority's adjustment has its own sign
// and the ClusterQueue's lies between them.
func TestEachPriorityIsCalibratedApart(t *testing.T) {
	env := newTestEnv(t, paperObjects())
	e := env.estimator(t)
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.statsFor("cq")
	at := t0
	for i := range 4 * calibration.DefaultMinScores {
		at = at.Add(time.Second)
		cal := s.currentCalibration(1)
		raw := 30.0 + float64(i%7)
		s.observeCalibration(at, cal, 1000, raw, 2*raw, raw/3)
		s.observeCalibration(at, cal, 0, raw, 2*raw, 3*raw)
	}
	cal := s.currentCalibration(1)
	high, low := cal.priorities[1000], cal.priorities[0]
	if !high.applied || !low.applied {
		t.Fatalf("priority calibrators not applied after %d scores each: %+v", 4*calibration.DefaultMinScores, cal.priorities)
	}
	if !(high.q50 < cal.q50 && cal.q50 < low.q50 && high.q50 < 0 && low.q50 > 0) {
		t.Errorf("P50 adjustments: high %v, ClusterQueue %v, low %v; want high < 0 < low and the ClusterQueue's between", high.q50, cal.q50, low.q50)
	}
	if p50, _ := cal.publishFor(0, 30, 60); p50 < 60 {
		t.Errorf("a low-priority raw P50 of 30 s is published as %v s; its waits are 3× the raw forecast", p50)
	}
}
