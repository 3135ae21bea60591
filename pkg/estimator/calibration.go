package estimator

import (
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
)

// currentCalibration is the calibration a refresh of the ClusterQueue
// with statistics s applies now, with scale floor eps (see
// queuestats.Queue.Calibration): its own, else the pooled one.
func (e *Estimator) currentCalibration(s *queueStats, eps float64) (c engine.Calibration, acts bool) {
	return s.Calibration(e.pooled50, e.pooled90, eps)
}

// observeCalibration feeds one scored workload of the given priority, of
// the ClusterQueue with statistics s, to the pooled calibrators and to s's
// (see queuestats.Queue.ObserveCalibration).
func (e *Estimator) observeCalibration(s *queueStats, at time.Time, cal engine.Calibration, priority int32, rawP50, rawP90, actual float64) {
	s.ObserveCalibration(e.pooled50, e.pooled90, at, cal, priority, rawP50, rawP90, actual)
}
