package estimator

import (
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/calibration"
)

// quantileCalibration is how one refresh turned the roll's P50 and P90
// into the published ones: q50 and q90 are the adjustments of the
// ClusterQueue's conformal calibrators (0 while they have too few scores)
// and eps their scale floor, seconds (see calibration.Quantile).
type quantileCalibration struct {
	q50, q90, eps float64
	// priorities are the adjustments of the ClusterQueue's per-priority
	// calibrators at that moment; those with enough scores (applied) are
	// published in place of q50 and q90 for workloads of their priority.
	priorities map[int32]priorityAdjustment
}

// priorityAdjustment is one priority's calibrators' adjustments.
type priorityAdjustment struct {
	q50, q90 float64
	applied  bool
}

// publish returns the published P50 and P90 of raw ones (seconds) with the
// ClusterQueue's adjustments: each adjusted, and P90 never below P50.
func (c quantileCalibration) publish(rawP50, rawP90 float64) (p50, p90 float64) {
	return publishWith(c.q50, c.q90, c.eps, rawP50, rawP90)
}

// publishFor is publish for a workload of the given priority: with its
// priority's adjustments once they apply, else the ClusterQueue's. Kueue
// admits by priority first, so the waits of the priorities of one
// ClusterQueue err differently (the higher ones pass the others), and one
// adjustment for all cannot calibrate each.
func (c quantileCalibration) publishFor(priority int32, rawP50, rawP90 float64) (p50, p90 float64) {
	if a, ok := c.priorities[priority]; ok && a.applied {
		return publishWith(a.q50, a.q90, c.eps, rawP50, rawP90)
	}
	return c.publish(rawP50, rawP90)
}

func publishWith(q50, q90, eps, rawP50, rawP90 float64) (p50, p90 float64) {
	p50 = calibration.Adjust(rawP50, q50, eps)
	p90 = max(calibration.Adjust(rawP90, q90, eps), p50)
	return p50, p90
}

// calibrationScale is the scale floor ε of a ClusterQueue's conformity
// scores: a tenth of its mean service time, so that waits much shorter than
// a service count as about equal (and zero waits stay finite), at least a
// millisecond; a second when no mean service is known.
func calibrationScale(meanService float64) float64 {
	if !(meanService > 0) {
		return 1
	}
	return max(meanService/10, 0.001)
}

// newQuantileCalibrators returns the calibrators of a ClusterQueue's P50
// and P90, forgetting at the statistics half-life.
func newQuantileCalibrators(halfLife time.Duration) (p50, p90 *calibration.Quantile) {
	// The options are valid constants; New cannot fail with them.
	p50, _ = calibration.New(0.5, calibration.Options{HalfLife: halfLife})
	p90, _ = calibration.New(0.9, calibration.Options{HalfLife: halfLife})
	return p50, p90
}

// current is the calibration a refresh applies now, with scale floor eps.
func (s *queueStats) currentCalibration(eps float64) quantileCalibration {
	c := quantileCalibration{eps: eps}
	c.q50, _ = s.cal50.Adjustment()
	c.q90, _ = s.cal90.Adjustment()
	if len(s.byPriority) > 0 {
		c.priorities = make(map[int32]priorityAdjustment, len(s.byPriority))
		for p, pc := range s.byPriority {
			var a priorityAdjustment
			var ok50, ok90 bool
			a.q50, ok50 = pc.cal50.Adjustment()
			a.q90, ok90 = pc.cal90.Adjustment()
			a.applied = ok50 && ok90
			c.priorities[p] = a
		}
	}
	return c
}

// observeCalibration feeds one scored workload of the given priority to
// the ClusterQueue's calibrators and to its priority's: the roll's raw
// quantiles, the ones each would have published under cal, and the wait
// that remained (seconds). A priority beyond maxTrackedPriorities feeds
// the ClusterQueue's only.
func (s *queueStats) observeCalibration(at time.Time, cal quantileCalibration, priority int32, rawP50, rawP90, actual float64) {
	p50, p90 := cal.publish(rawP50, rawP90)
	s.cal50.Observe(at, rawP50, p50, actual, cal.eps)
	s.cal90.Observe(at, rawP90, p90, actual, cal.eps)
	pc := s.priority(priority)
	if pc == nil {
		return
	}
	a := cal.priorities[priority] // zero adjustments if it had none then
	p50, p90 = publishWith(a.q50, a.q90, cal.eps, rawP50, rawP90)
	pc.cal50.Observe(at, rawP50, p50, actual, cal.eps)
	pc.cal90.Observe(at, rawP90, p90, actual, cal.eps)
}
