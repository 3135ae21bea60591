package estimator

import (
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/calibration"
	"github.com/kueue-waittime/kueue-waittime/pkg/stats"
)

// queueStats are the online statistics of one ClusterQueue. Guarded by the
// estimator's mutex.
type queueStats struct {
	arrivals    *stats.EventRate
	preemptions *stats.EventRate
	admissions  *stats.EventRate
	service     *stats.ServiceTimes
	waits       *stats.EMA
	// admissionLatency is an EMA of the delay between a completion that
	// frees quota while workloads are pending and the next admission.
	admissionLatency *stats.EMA
	freedAt          time.Time
	pending          int
	// p50Hits and p90Hits are the decayed realized coverage of the
	// ledger's first P50 and P90; cal50 and cal90 calibrate them.
	p50Hits, p90Hits *stats.DecayedMean
	cal50, cal90     *calibration.Quantile
}

// observeScore feeds a ledger score into the realized coverage.
func (s *queueStats) observeScore(sc Score, at time.Time) {
	if sc.P50.OK {
		s.p50Hits.ObserveAt(at, hit(sc.Actual <= sc.P50.Wait))
	}
	if sc.P90.OK {
		s.p90Hits.ObserveAt(at, hit(sc.Actual <= sc.P90.Wait))
	}
}

func hit(ok bool) float64 {
	if ok {
		return 1
	}
	return 0
}

func (e *Estimator) newQueueStats() *queueStats {
	decay := stats.DecayOptions{HalfLife: e.opts.halfLife, MinSamples: 2}
	// The options are validated by New, so these constructors cannot fail;
	// a failure would be a programming error caught by the unit tests.
	arrivals, _ := stats.NewEventRate(e.opts.clock, decay)
	preemptions, _ := stats.NewEventRate(e.opts.clock, stats.DecayOptions{HalfLife: e.opts.halfLife, MinSamples: 1})
	admissions, _ := stats.NewEventRate(e.opts.clock, decay)
	service, _ := stats.NewServiceTimes(e.opts.clock, e.rng, stats.ReservoirOptions{
		Capacity:   e.opts.serviceSampleSize,
		HalfLife:   e.opts.halfLife,
		MinSamples: e.opts.minServiceSamples,
	})
	waits, _ := stats.NewEMA(e.opts.emaAlpha)
	latency, _ := stats.NewEMA(stats.DefaultEMAAlpha)
	coverage := stats.DecayOptions{HalfLife: e.opts.halfLife, MinSamples: 1}
	p50Hits, _ := stats.NewDecayedMean(coverage)
	p90Hits, _ := stats.NewDecayedMean(coverage)
	cal50, cal90 := newQuantileCalibrators(e.opts.halfLife)
	return &queueStats{
		arrivals:         arrivals,
		preemptions:      preemptions,
		admissions:       admissions,
		service:          service,
		waits:            waits,
		admissionLatency: latency,
		p50Hits:          p50Hits,
		p90Hits:          p90Hits,
		cal50:            cal50,
		cal90:            cal90,
	}
}

// statsView is a copy of what a refresh needs, taken under the lock.
type statsView struct {
	arrivalRate, arrivalSCV  float64
	hasArrivals              bool
	preemptionRate           float64
	serviceSample            []float64
	serviceMean, serviceSCV  float64
	hasService               bool
	ema                      float64
	hasEMA                   bool
	admissionLatency         float64
	p50Coverage, p90Coverage float64
	hasCoverage              bool
	scored                   uint64
	calibration              quantileCalibration
	calibrated               bool
}

func (s *queueStats) view() statsView {
	var v statsView
	var ok1, ok2 bool
	v.arrivalRate, ok1 = s.arrivals.Rate()
	v.arrivalSCV, ok2 = s.arrivals.IntervalSCV()
	if !ok2 {
		// Too few intervals to measure variability: assume Poisson, as the
		// paper does.
		v.arrivalSCV = 1
	}
	v.hasArrivals = ok1
	v.preemptionRate, _ = s.preemptions.Rate()
	v.serviceMean, ok1 = s.service.Mean()
	v.serviceSCV, ok2 = s.service.SCV()
	v.hasService = ok1 && ok2
	if v.hasService {
		v.serviceSample = s.service.AppendValues(nil)
	}
	v.ema, v.hasEMA = s.waits.Value()
	v.admissionLatency, _ = s.admissionLatency.Value()
	var ok50, ok90 bool
	v.p50Coverage, ok50 = s.p50Hits.Value()
	v.p90Coverage, ok90 = s.p90Hits.Value()
	v.hasCoverage = ok50 && ok90
	v.scored = s.p90Hits.Count()
	return v
}
