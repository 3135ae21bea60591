package estimator

import (
	"testing"
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/calibration"
)

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
	high, low := cal.Priorities[1000], cal.Priorities[0]
	if !high.Applied || !low.Applied {
		t.Fatalf("priority calibrators not applied after %d scores each: %+v", 4*calibration.DefaultMinScores, cal.Priorities)
	}
	if !(high.Q50 < cal.Q50 && cal.Q50 < low.Q50 && high.Q50 < 0 && low.Q50 > 0) {
		t.Errorf("P50 adjustments: high %v, ClusterQueue %v, low %v; want high < 0 < low and the ClusterQueue's between", high.Q50, cal.Q50, low.Q50)
	}
	if p50, _ := cal.PublishFor(0, 30, 60); p50 < 60 {
		t.Errorf("a low-priority raw P50 of 30 s is published as %v s; its waits are 3× the raw forecast", p50)
	}
}
