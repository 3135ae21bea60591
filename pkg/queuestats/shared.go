package queuestats

import (
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/calibration"
	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
	"github.com/kueue-waittime/kueue-waittime/pkg/stats"
)

// MinOwnLatencySamples is how many admission latencies a ClusterQueue
// measures before its roll draws from its own: the latency is mostly the
// scheduler's (its cycle, the requeue, the admission's write), which every
// ClusterQueue shares, and one or two samples of a quiet ClusterQueue (or
// none: a latency of 0) say less about it than the others' recent ones.
const MinOwnLatencySamples = 8

// sharedLatencySampleSize bounds the reservoirs of latencies of every
// ClusterQueue.
const sharedLatencySampleSize = 64

// Shared is what the statistics of every ClusterQueue pool: the measured
// admission latencies (see Queue.AdmissionLatency) and first-attempt
// latencies (see Queue.FirstAttemptLatency), each in a reservoir of at
// most sharedLatencySampleSize, which a ClusterQueue that measured fewer
// than MinOwnLatencySamples of its own rolls with; and the calibrators of
// the P50 and the P90, with whose adjustment a ClusterQueue publishes
// until its own calibrators have enough scores (see engine.Calibration).
// The caller guards it with its Queues.
type Shared struct {
	AdmissionLatency    *stats.ServiceTimes
	FirstAttemptLatency *stats.ServiceTimes
	pooled50, pooled90  *calibration.Quantile
}

// newShared makes the pooled statistics of the ClusterQueues of c.
func (c config) newShared() (*Shared, error) {
	latencies := func() (*stats.ServiceTimes, error) {
		return stats.NewServiceTimes(c.Clock, c.Rand, stats.ReservoirOptions{
			Capacity: sharedLatencySampleSize, HalfLife: c.HalfLife, MinSamples: 1,
		})
	}
	admission, err := latencies()
	if err != nil {
		return nil, err
	}
	firstAttempt, err := latencies()
	if err != nil {
		return nil, err
	}
	pooled50, pooled90, err := NewQuantileCalibrators(c.HalfLife)
	if err != nil {
		return nil, err
	}
	return &Shared{AdmissionLatency: admission, FirstAttemptLatency: firstAttempt, pooled50: pooled50, pooled90: pooled90}, nil
}

// latencyReservoirOf is the reservoir of admission latencies a
// ClusterQueue with statistics s rolls with: its own once it holds
// MinOwnLatencySamples, else every ClusterQueue's (which holds its own).
func (sh *Shared) latencyReservoirOf(s *Queue) *stats.ServiceTimes {
	if s.AdmissionLatency.Len() < MinOwnLatencySamples {
		return sh.AdmissionLatency
	}
	return s.AdmissionLatency
}

// FirstAttemptReservoirOf is the same of first-attempt latencies.
func (sh *Shared) FirstAttemptReservoirOf(s *Queue) *stats.ServiceTimes {
	if s.FirstAttemptLatency.Len() < MinOwnLatencySamples {
		return sh.FirstAttemptLatency
	}
	return s.FirstAttemptLatency
}

// Latency returns the mean admission latency a ClusterQueue with
// statistics s rolls with and the sample it draws from (see
// latencyReservoirOf); 0 and none when nothing was measured anywhere.
func (sh *Shared) Latency(s *Queue) (float64, []float64) {
	r := sh.latencyReservoirOf(s)
	mean, ok := r.Mean()
	if !ok {
		return 0, nil
	}
	return mean, r.AppendValues(nil)
}

// ObserveAdmissionLatency records an admission latency of the
// ClusterQueue with statistics s, in its reservoir and the pool's.
func (sh *Shared) ObserveAdmissionLatency(s *Queue, at time.Time, seconds float64) {
	s.AdmissionLatency.ObserveAt(at, seconds)
	sh.AdmissionLatency.ObserveAt(at, seconds)
}

// ObserveFirstAttemptLatency records a first-attempt latency of the
// ClusterQueue with statistics s, in its reservoir and the pool's.
func (sh *Shared) ObserveFirstAttemptLatency(s *Queue, at time.Time, seconds float64) {
	s.FirstAttemptLatency.ObserveAt(at, seconds)
	sh.FirstAttemptLatency.ObserveAt(at, seconds)
}

// View is the view of s a roll gets: its own statistics, with the
// admission latency of Latency and the first-attempt latencies of
// FirstAttemptReservoirOf.
func (sh *Shared) View(s *Queue) View {
	v := s.View()
	v.AdmissionLatency, v.AdmissionLatencySample = sh.Latency(s)
	v.FirstAttemptLatencySample = sh.FirstAttemptReservoirOf(s).AppendValues(nil)
	return v
}

// Calibration is the calibration a refresh of the ClusterQueue with
// statistics s applies now, with scale floor eps (see Queue.Calibration):
// its own, else the pooled one.
func (sh *Shared) Calibration(s *Queue, eps float64) (c engine.Calibration, acts bool) {
	return s.Calibration(sh.pooled50, sh.pooled90, eps)
}

// ObserveCalibration feeds one scored workload of the given priority, of
// the ClusterQueue with statistics s, to the pooled calibrators and to s's
// (see Queue.ObserveCalibration).
func (sh *Shared) ObserveCalibration(s *Queue, at time.Time, cal engine.Calibration, priority int32, rawP50, rawP90, actual float64) {
	s.ObserveCalibration(sh.pooled50, sh.pooled90, at, cal, priority, rawP50, rawP90, actual)
}
