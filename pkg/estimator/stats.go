package estimator

import (
	"time"

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
	return &queueStats{
		arrivals:         arrivals,
		preemptions:      preemptions,
		admissions:       admissions,
		service:          service,
		waits:            waits,
		admissionLatency: latency,
	}
}

// statsView is a copy of what a refresh needs, taken under the lock.
type statsView struct {
	arrivalRate, arrivalSCV float64
	hasArrivals             bool
	preemptionRate          float64
	serviceSample           []float64
	serviceMean, serviceSCV float64
	hasService              bool
	ema                     float64
	hasEMA                  bool
	admissionLatency        float64
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
	return v
}
