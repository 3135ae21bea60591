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
}

// publish returns the published P50 and P90 of raw ones (seconds): each
// adjusted, and P90 never below P50.
func (c quantileCalibration) publish(rawP50, rawP90 float64) (p50, p90 float64) {
	p50 = calibration.Adjust(rawP50, c.q50, c.eps)
	p90 = max(calibration.Adjust(rawP90, c.q90, c.eps), p50)
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
	return c
}

// observeCalibration feeds one scored workload to the calibrators: the
// roll's raw quantiles, the ones published under cal, and the wait that
// remained (seconds).
func (s *queueStats) observeCalibration(at time.Time, cal quantileCalibration, rawP50, rawP90, actual float64) {
	p50, p90 := cal.publish(rawP50, rawP90)
	s.cal50.Observe(at, rawP50, p50, actual, cal.eps)
	s.cal90.Observe(at, rawP90, p90, actual, cal.eps)
}
