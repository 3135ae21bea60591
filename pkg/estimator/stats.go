package estimator

import (
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/calibration"
	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
	"github.com/kueue-waittime/kueue-waittime/pkg/stats"
)

// queueStats are the online statistics of one ClusterQueue. Guarded by the
// estimator's mutex.
type queueStats struct {
	arrivals *stats.EventRate
	// byPriority split arrivals and calibration by workload priority. At
	// most maxTrackedPriorities per ClusterQueue: a further priority's
	// arrivals count in arrivals only, its scores in cal50 and cal90 only.
	byPriority map[int32]*priorityStats
	// windowStart is where the arrival window starts (creation, or the
	// earliest warm-started arrival): a priority first seen later is
	// measured over the same window, not from its first arrival.
	windowStart time.Time
	newPriority func() *priorityStats
	// newPriorityService makes a priority's service sample.
	newPriorityService func() *stats.ServiceTimes
	preemptions        *stats.EventRate
	admissions         *stats.EventRate
	service            *stats.ServiceTimes
	waits              *stats.EMA
	// admissionLatency is a bounded reservoir (admissionLatencySampleSize,
	// biased to recent values by the half-life) of the delays between a
	// completion that frees quota while workloads are pending and the
	// next admission: once it holds minOwnLatencySamples the roll draws
	// each admission's latency from it (see Estimator.latencyOf).
	admissionLatency *stats.ServiceTimes
	freedAt          time.Time
	// firstAttemptLatency is a reservoir like admissionLatency of the
	// delays from the arrival of a workload to its admission, for those
	// the scheduler admitted at its first attempt (never found
	// inadmissible, see triedBit) with no quota released in the
	// ClusterQueue or its cohort between their arrival and their admission
	// (see lastRelease, Estimator.lastReleaseFor): the roll times by it the
	// admission of a pending
	// workload that is untried and fits now (see
	// forecast.Queue.FirstAttemptLatencySample).
	firstAttemptLatency *stats.ServiceTimes
	// lastRelease is when a workload of the ClusterQueue last gave its
	// quota back (finished, or preempted). A workload that arrived before
	// it and is admitted untried may have waited for that quota behind
	// others, never popped by the scheduler: its arrival-to-admission
	// delay is a wait, not a first attempt's latency.
	lastRelease time.Time
	// preemptionDelay is an EMA of the delay between a preemption (the
	// victim's eviction seen) and the next admission, the preemptor's;
	// preemptionDelays holds the same delays in a reservoir.
	preemptionDelay  *stats.EMA
	preemptionDelays *stats.ServiceTimes
	preemptedAt      time.Time
	// preemptedPriority is the priority of the victim whose eviction set
	// preemptedAt.
	preemptedPriority int32
	// preemptionReaction is a reservoir of delays from a preemptor's
	// arrival (its sighting) to the sighting of its victim's eviction:
	// the scheduler's reaction to it, the preemption decision and the
	// eviction's write. It is measured at the preemptor's admission, the
	// next one after the eviction, when the admitted workload arrived
	// before the eviction and has a higher priority than its victim (a
	// victim admitted again does not count). Measured, it replaces the
	// admission latency as the roll's reaction to a preemptor, and the
	// preemption delay is counted from the eviction's sighting without
	// writeLag (see view).
	preemptionReaction *stats.ServiceTimes
	// writeLag is an EMA of the delay from the scheduler's hook on an
	// admission to the informer's sighting of it. The hook is called once
	// the admission's write returned, so this is the watch event's lag
	// behind a write, not the write itself, which the estimator does not
	// see (the scheduler does not report when it decided). The eviction
	// that starts a preemption is a write too, and preemptionDelay,
	// measured from its sighting, misses that lag.
	writeLag *stats.EMA
	// releaseDelay is an EMA of the delay from the sighting of one of this
	// ClusterQueue's workloads evicted by preemption to the sighting of its
	// quota's release (its job integration stopping it): how long a victim
	// here, of a reclaim or any other preemption, holds the quota it was
	// preempted for.
	releaseDelay *stats.EMA
	// quotablePending is how many Quotable workloads the last refresh found
	// pending: a completion starts an admission-latency measurement only
	// when one of them could take the quota it frees. An Unfeasible
	// workload never takes it, and counting one made the next admission,
	// whenever a workload arrived, a latency sample.
	quotablePending int
	// p50Hits and p90Hits are the decayed realized coverage of the
	// ledger's first P50 and P90; cal50 and cal90 calibrate them.
	p50Hits, p90Hits *stats.DecayedMean
	cal50, cal90     *calibration.Quantile
}

// priorityStats are the statistics of one priority of a ClusterQueue: its
// arrival rate, for the roll to bring in the higher-priority work that will
// pass a pending workload, and the calibrators of its quantiles (Kueue
// admits by priority first, so each priority errs its own way).
type priorityStats struct {
	arrivals *stats.EventRate
	// shapes are the demand shapes of the priority's admissions (at most
	// maxShapesPerPriority), which split its arrival rate by shape;
	// newShapeRate makes a shape's admission rate.
	shapes       []*admittedShape
	newShapeRate func() *stats.EventRate
	cal50, cal90 *calibration.Quantile
	// service is the priority's own sample of service times (at most
	// priorityServiceSampleSize), made at its first completion.
	service *stats.ServiceTimes
}

// priorityServiceSampleSize bounds the service sample of one priority of a
// ClusterQueue, and of one of its demand shapes (2 KiB of samples with the
// reservoir's sorted copy; at most maxTrackedPriorities ×
// (1 + maxShapesPerPriority) samples per ClusterQueue). The roll uses a
// priority's own sample once it holds engine.BootstrapServiceBelow, a
// shape's once it holds the minimum number of service samples
// (WithMinServiceSamples).
const priorityServiceSampleSize = 128

// admissionLatencySampleSize bounds the reservoir of measured admission
// latencies of one ClusterQueue (512 B of samples, twice: the reservoir
// keeps a sorted copy).
const admissionLatencySampleSize = 32

// maxTrackedPriorities bounds the per-priority statistics of one
// ClusterQueue (Kueue clusters use a handful of priority classes).
const maxTrackedPriorities = 16

// observeAdmittedShape counts an admission at t of a workload of the given
// priority and demand shape (admittedDemand).
func (s *queueStats) observeAdmittedShape(t time.Time, priority int32, key string, demand capacity.Workload) {
	if ps := s.priority(priority); ps != nil {
		ps.observeAdmittedShape(t, s.windowStart, key, demand)
	}
}

// observeArrival counts an arrival of the given priority at t.
func (s *queueStats) observeArrival(t time.Time, priority int32) {
	s.arrivals.ObserveAt(t)
	if ps := s.priority(priority); ps != nil {
		ps.arrivals.ObserveAt(t)
	}
}

// seedArrivals warm-starts the arrival rates from arrivals already known,
// complete from windowStart on.
func (s *queueStats) seedArrivals(windowStart time.Time, all []time.Time, byPriority map[int32][]time.Time) {
	if !windowStart.IsZero() && windowStart.Before(s.windowStart) {
		s.windowStart = windowStart
	}
	s.arrivals.Seed(windowStart, all)
	for _, ps := range s.byPriority {
		ps.arrivals.Seed(s.windowStart, nil)
	}
	for p, times := range byPriority {
		if ps := s.priority(p); ps != nil {
			ps.arrivals.Seed(s.windowStart, times)
		}
	}
}

// priority returns the statistics of a priority, created on first use
// with its arrival rate over the queue's arrival window; nil beyond
// maxTrackedPriorities.
func (s *queueStats) priority(priority int32) *priorityStats {
	if ps, ok := s.byPriority[priority]; ok {
		return ps
	}
	if len(s.byPriority) >= maxTrackedPriorities {
		return nil
	}
	ps := s.newPriority()
	ps.arrivals.Seed(s.windowStart, nil)
	if s.byPriority == nil {
		s.byPriority = make(map[int32]*priorityStats)
	}
	s.byPriority[priority] = ps
	return ps
}

// observeService records the service time of a workload of the given
// priority and demand shape (admittedDemand's key; "" when unknown) that
// completed at end: in the ClusterQueue's sample, in the priority's own,
// and in its shape's.
func (s *queueStats) observeService(priority int32, shapeKey string, end time.Time, seconds float64) {
	s.service.ObserveAt(end, seconds)
	if ps := s.priority(priority); ps != nil {
		ps.serviceSample(s).ObserveAt(end, seconds)
		if shapeKey != "" {
			ps.observeShapeService(s, shapeKey, end, seconds)
		}
	}
}

// serviceSample returns the priority's service sample, made on first use.
func (ps *priorityStats) serviceSample(s *queueStats) *stats.ServiceTimes {
	if ps.service == nil {
		ps.service = s.newPriorityService()
	}
	return ps.service
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
	// delays is a reservoir of measured delays (latencies, reactions).
	delays := func() *stats.ServiceTimes {
		r, _ := stats.NewServiceTimes(e.opts.clock, e.rng, stats.ReservoirOptions{
			Capacity:   admissionLatencySampleSize,
			HalfLife:   e.opts.halfLife,
			MinSamples: 1,
		})
		return r
	}
	latency, firstAttempt := delays(), delays()
	preemptionDelay, _ := stats.NewEMA(stats.DefaultEMAAlpha)
	preemptionDelays, preemptionReaction := delays(), delays()
	writeLag, _ := stats.NewEMA(stats.DefaultEMAAlpha)
	releaseDelay, _ := stats.NewEMA(stats.DefaultEMAAlpha)
	coverage := stats.DecayOptions{HalfLife: e.opts.halfLife, MinSamples: 1}
	p50Hits, _ := stats.NewDecayedMean(coverage)
	p90Hits, _ := stats.NewDecayedMean(coverage)
	cal50, cal90 := newQuantileCalibrators(e.opts.halfLife)
	return &queueStats{
		arrivals:    arrivals,
		windowStart: e.opts.clock.Now(),
		newPriority: func() *priorityStats {
			ps := &priorityStats{newShapeRate: func() *stats.EventRate {
				r, _ := stats.NewEventRate(e.opts.clock, decay)
				return r
			}}
			ps.arrivals, _ = stats.NewEventRate(e.opts.clock, decay)
			ps.cal50, ps.cal90 = newQuantileCalibrators(e.opts.halfLife)
			return ps
		},
		newPriorityService: func() *stats.ServiceTimes {
			st, _ := stats.NewServiceTimes(e.opts.clock, e.rng, stats.ReservoirOptions{
				Capacity:   min(e.opts.serviceSampleSize, priorityServiceSampleSize),
				HalfLife:   e.opts.halfLife,
				MinSamples: e.opts.minServiceSamples,
			})
			return st
		},
		preemptions:         preemptions,
		admissions:          admissions,
		service:             service,
		waits:               waits,
		admissionLatency:    latency,
		firstAttemptLatency: firstAttempt,
		preemptionDelay:     preemptionDelay,
		preemptionDelays:    preemptionDelays,
		preemptionReaction:  preemptionReaction,
		writeLag:            writeLag,
		releaseDelay:        releaseDelay,
		p50Hits:             p50Hits,
		p90Hits:             p90Hits,
		cal50:               cal50,
		cal90:               cal90,
	}
}

// statsView is a copy of what a refresh needs, taken under the lock: what
// the engine rolls with, and what only the published model reports.
type statsView struct {
	engine.Stats
	ema                      float64
	hasEMA                   bool
	p50Coverage, p90Coverage float64
	hasCoverage              bool
	scored                   uint64
	calibrated               bool
}

func (s *queueStats) view() statsView {
	var v statsView
	var ok1, ok2 bool
	v.ArrivalRate, ok1 = s.arrivals.Rate()
	v.ArrivalSCV, ok2 = s.arrivals.IntervalSCV()
	if !ok2 {
		// Too few intervals to measure variability: assume Poisson, as the
		// paper does.
		v.ArrivalSCV = 1
	}
	v.HasArrivals = ok1
	for p, ps := range s.byPriority {
		if rate, ok := ps.arrivals.Rate(); ok && rate > 0 {
			if v.PriorityRates == nil {
				v.PriorityRates = make(map[int32]float64, len(s.byPriority))
				v.PriorityWindows = make(map[int32]float64, len(s.byPriority))
			}
			v.PriorityRates[p] = rate
			v.PriorityWindows[p] = ps.arrivals.Exposure()
			v.ShapeArrivals = append(v.ShapeArrivals, ps.shapeArrivals(p, rate, v.PriorityWindows[p])...)
		}
		if len(s.byPriority) > 1 && ps.service != nil && ps.service.Len() >= engine.BootstrapServiceBelow {
			if v.PriorityService == nil {
				v.PriorityService = make(map[int32][]float64, len(s.byPriority))
			}
			v.PriorityService[p] = ps.service.AppendValues(nil)
		}
		v.ShapeService = append(v.ShapeService, ps.shapeService(p)...)
	}
	v.PreemptionRate, _ = s.preemptions.Rate()
	v.ServiceMean, ok1 = s.service.Mean()
	v.ServiceSCV, ok2 = s.service.SCV()
	v.HasService = ok1 && ok2
	if v.HasService {
		v.ServiceSample = s.service.AppendValues(nil)
	}
	v.ema, v.hasEMA = s.waits.Value()
	// The admission latency is the estimator's choice (see latencyOf).
	// A preemptor waits from the decision: the eviction's write (of which
	// only the sighting's lag, writeLag, is measured), then what
	// preemptionDelay measured from its sighting. With measured
	// reactions, which run from the preemptor's arrival to that sighting,
	// the eviction's write and lag are in the reaction already, and each
	// preemption of the roll draws its delay from the measured ones.
	// Unmeasured (0), the roll's default applies.
	if delay, ok := s.preemptionDelay.Value(); ok {
		lag, _ := s.writeLag.Value()
		v.PreemptionDelay = delay + lag
		if s.preemptionReaction.Len() > 0 {
			v.PreemptionReactionSample = s.preemptionReaction.AppendValues(nil)
			v.PreemptionDelaySample = s.preemptionDelays.AppendValues(nil)
			v.PreemptionDelay = delay
		}
	}
	var ok50, ok90 bool
	v.p50Coverage, ok50 = s.p50Hits.Value()
	v.p90Coverage, ok90 = s.p90Hits.Value()
	v.hasCoverage = ok50 && ok90
	v.scored = s.p90Hits.Count()
	return v
}
