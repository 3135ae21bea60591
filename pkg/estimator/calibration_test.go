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
		cal, _ := e.state.Stats.Shared().Calibration(s, 1)
		raw := 30.0 + float64(i%7)
		e.state.Stats.Shared().ObserveCalibration(s, at, cal, 1000, raw, 2*raw, raw/3)
		e.state.Stats.Shared().ObserveCalibration(s, at, cal, 0, raw, 2*raw, 3*raw)
	}
	cal, _ := e.state.Stats.Shared().Calibration(s, 1)
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

// A ClusterQueue whose own calibrators have too few scores publishes with
// the pooled calibrators' adjustment, once these have enough, and with its
// own once it has enough: a first ClusterQueue whose waits are three times
// the raw forecast teaches the pool to lengthen, and a second one, whose
// waits are a third of it, shortens its own quantiles after its own
// minimum of scores.
func TestClusterQueueIsCalibratedByThePoolUntilItHasEnoughScores(t *testing.T) {
	env := newTestEnv(t, paperObjects())
	e := env.estimator(t)
	e.mu.Lock()
	defer e.mu.Unlock()
	long, short := e.statsFor("long"), e.statsFor("short")
	at := t0
	observe := func(s *queueStats, n int, ratio float64) {
		for i := range n {
			at = at.Add(time.Second)
			raw := 30.0 + float64(i%7)
			cal, _ := e.state.Stats.Shared().Calibration(s, 1)
			e.state.Stats.Shared().ObserveCalibration(s, at, cal, 0, raw, 2*raw, ratio*raw)
		}
	}

	if cal, _ := e.state.Stats.Shared().Calibration(short, 1); cal.Pooled.Applied || cal.Q50 != 0 || cal.Q90 != 0 {
		t.Fatalf("with no scores anywhere: %+v, want no adjustment", cal)
	}
	observe(long, calibration.DefaultMinScores-1, 3)
	if cal, _ := e.state.Stats.Shared().Calibration(short, 1); cal.Pooled.Applied || cal.Q50 != 0 {
		t.Fatalf("with %d pooled scores: %+v, want no adjustment yet", calibration.DefaultMinScores-1, cal)
	}
	observe(long, 1, 3)
	cal, _ := e.state.Stats.Shared().Calibration(short, 1)
	if !cal.Pooled.Applied || cal.Q50 != cal.Pooled.Q50 || cal.Q90 != cal.Pooled.Q90 || !(cal.Q50 > 0) {
		t.Fatalf("a ClusterQueue with no scores of its own: %+v, want the pool's positive adjustment", cal)
	}
	if p50, _ := cal.Publish(30, 60); p50 < 60 {
		t.Errorf("a raw P50 of 30 s is published as %v s; the pool's waits are 3× the raw forecast", p50)
	}

	observe(short, calibration.DefaultMinScores-1, 1.0/3)
	if cal, _ := e.state.Stats.Shared().Calibration(short, 1); cal.Q50 != cal.Pooled.Q50 {
		t.Fatalf("with %d scores of its own: Q50 %v, want the pool's %v", calibration.DefaultMinScores-1, cal.Q50, cal.Pooled.Q50)
	}
	observe(short, 1, 1.0/3)
	cal, _ = e.state.Stats.Shared().Calibration(short, 1)
	if !(cal.Q50 < 0 && cal.Q90 < 0) {
		t.Errorf("with %d scores of its own, all a third of the raw forecast: Q50 %v, Q90 %v, want both below 0 (its own)", calibration.DefaultMinScores, cal.Q50, cal.Q90)
	}
	if !(cal.Pooled.Applied && cal.Pooled.Q50 > cal.Q50) {
		t.Errorf("pool %+v after both ClusterQueues' scores, want it applied and above the short one's %v", cal.Pooled, cal.Q50)
	}
}
