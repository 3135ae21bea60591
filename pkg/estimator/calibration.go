package estimator

import (
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/calibration"
	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
)

// newQuantileCalibrators returns the calibrators of a ClusterQueue's P50
// and P90, forgetting at the statistics half-life.
func newQuantileCalibrators(halfLife time.Duration) (p50, p90 *calibration.Quantile) {
	// The options are valid constants; New cannot fail with them.
	p50, _ = calibration.New(0.5, calibration.Options{HalfLife: halfLife})
	p90, _ = calibration.New(0.9, calibration.Options{HalfLife: halfLife})
	return p50, p90
}

// currentCalibration is the calibration a refresh applies now, with scale
// floor eps.
func (s *queueStats) currentCalibration(eps float64) engine.Calibration {
	c := engine.Calibration{Eps: eps}
	c.Q50, _ = s.cal50.Adjustment()
	c.Q90, _ = s.cal90.Adjustment()
	if len(s.byPriority) > 0 {
		c.Priorities = make(map[int32]engine.PriorityAdjustment, len(s.byPriority))
		for p, pc := range s.byPriority {
			var a engine.PriorityAdjustment
			var ok50, ok90 bool
			a.Q50, ok50 = pc.cal50.Adjustment()
			a.Q90, ok90 = pc.cal90.Adjustment()
			a.Applied = ok50 && ok90
			c.Priorities[p] = a
		}
	}
	return c
}

// observeCalibration feeds one scored workload of the given priority to
// the ClusterQueue's calibrators and to its priority's: the roll's raw
// quantiles, the ones each would have published under cal, and the wait
// that remained (seconds). A priority beyond maxTrackedPriorities feeds
// the ClusterQueue's only.
func (s *queueStats) observeCalibration(at time.Time, cal engine.Calibration, priority int32, rawP50, rawP90, actual float64) {
	p50, p90 := cal.Publish(rawP50, rawP90)
	s.cal50.Observe(at, rawP50, p50, actual, cal.Eps)
	s.cal90.Observe(at, rawP90, p90, actual, cal.Eps)
	pc := s.priority(priority)
	if pc == nil {
		return
	}
	// Zero adjustments if it had none then.
	p50, p90 = cal.PublishWith(cal.Priorities[priority], rawP50, rawP90)
	pc.cal50.Observe(at, rawP50, p50, actual, cal.Eps)
	pc.cal90.Observe(at, rawP90, p90, actual, cal.Eps)
}
