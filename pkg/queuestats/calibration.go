package queuestats

import (
	"errors"
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/calibration"
	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
)

// NewQuantileCalibrators returns the calibrators of a P50 and a P90 (a
// ClusterQueue's, a priority's or the pool's), forgetting at the statistics
// half-life.
func NewQuantileCalibrators(halfLife time.Duration) (p50, p90 *calibration.Quantile, err error) {
	p50, err50 := calibration.New(0.5, calibration.Options{HalfLife: halfLife})
	p90, err90 := calibration.New(0.9, calibration.Options{HalfLife: halfLife})
	if err := errors.Join(err50, err90); err != nil {
		return nil, nil, err
	}
	return p50, p90, nil
}

// Calibration is the calibration a refresh of the ClusterQueue with
// statistics s applies now, given the calibrators pooled over every
// ClusterQueue, with scale floor eps: its own
// calibrators' adjustments once they have enough scores, else the pooled
// ones' once these have (see engine.Calibration); acts says that either
// applies.
func (s *Queue) Calibration(pooled50, pooled90 *calibration.Quantile, eps float64) (c engine.Calibration, acts bool) {
	c.Eps = eps
	var ok50, ok90 bool
	c.Pooled.Q50, ok50 = pooled50.Adjustment()
	c.Pooled.Q90, ok90 = pooled90.Adjustment()
	c.Pooled.Applied = ok50 && ok90
	q50, own50 := s.cal50.Adjustment()
	q90, own90 := s.cal90.Adjustment()
	switch {
	case own50 && own90:
		c.Q50, c.Q90, acts = q50, q90, true
	case c.Pooled.Applied:
		c.Q50, c.Q90, acts = c.Pooled.Q50, c.Pooled.Q90, true
	}
	if len(s.byPriority) > 0 {
		c.Priorities = make(map[int32]engine.Adjustment, len(s.byPriority))
		for p, pc := range s.byPriority {
			var a engine.Adjustment
			a.Q50, ok50 = pc.cal50.Adjustment()
			a.Q90, ok90 = pc.cal90.Adjustment()
			a.Applied = ok50 && ok90
			c.Priorities[p] = a
		}
	}
	return c, acts
}

// ObserveCalibration feeds one scored workload of the given priority, of
// the ClusterQueue with statistics s, to the pooled calibrators, to the
// ClusterQueue's and to its priority's: the roll's raw quantiles, the ones
// each would have published under cal, and the wait that remained
// (seconds). A priority beyond maxTrackedPriorities feeds the others only.
func (s *Queue) ObserveCalibration(pooled50, pooled90 *calibration.Quantile, at time.Time, cal engine.Calibration, priority int32, rawP50, rawP90, actual float64) {
	p50, p90 := cal.PublishWith(cal.Pooled, rawP50, rawP90)
	pooled50.Observe(at, rawP50, p50, actual, cal.Eps)
	pooled90.Observe(at, rawP90, p90, actual, cal.Eps)
	p50, p90 = cal.Publish(rawP50, rawP90)
	s.cal50.Observe(at, rawP50, p50, actual, cal.Eps)
	s.cal90.Observe(at, rawP90, p90, actual, cal.Eps)
	pc := s.Priority(priority)
	if pc == nil {
		return
	}
	// Zero adjustments if it had none then.
	p50, p90 = cal.PublishWith(cal.Priorities[priority], rawP50, rawP90)
	pc.cal50.Observe(at, rawP50, p50, actual, cal.Eps)
	pc.cal90.Observe(at, rawP90, p90, actual, cal.Eps)
}
