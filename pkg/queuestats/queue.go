package queuestats

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/calibration"
	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
	"github.com/kueue-waittime/kueue-waittime/pkg/stats"
)

// Queue holds the online statistics of one ClusterQueue. The caller
// guards it (the estimator, by its mutex).
type Queue struct {
	Arrivals *stats.EventRate
	// byPriority split arrivals and calibration by workload priority. At
	// most maxTrackedPriorities per ClusterQueue: a further priority's
	// arrivals count in arrivals only, its scores in cal50 and cal90 only.
	byPriority map[int32]*Priority
	// windowStart is where the arrival window starts (creation, or the
	// earliest warm-started arrival): a priority first seen later is
	// measured over the same window, not from its first arrival.
	windowStart time.Time
	newPriority func() (*Priority, error)
	// newPriorityService makes a priority's (or a shape's) service sample.
	newPriorityService func() (*stats.ServiceTimes, error)
	Preemptions        *stats.EventRate
	Admissions         *stats.EventRate
	Service            *stats.ServiceTimes
	Waits              *stats.EMA
	// AdmissionLatency is a bounded reservoir (admissionLatencySampleSize,
	// biased to recent values by the half-life) of the delays between a
	// completion that frees quota while workloads are pending and the
	// next admission: once it holds minOwnLatencySamples the roll draws
	// each admission's latency from it (see the estimator's latencyOf).
	AdmissionLatency *stats.ServiceTimes
	FreedAt          time.Time
	// FirstAttemptLatency is a reservoir like admissionLatency of the
	// delays from the arrival of a workload to its admission, for those
	// the scheduler admitted at its first attempt (never found
	// inadmissible, see triedBit) with no quota released in the
	// ClusterQueue or its cohort between their arrival and their admission
	// (see LastRelease, and Queues.lastReleaseFor): the roll times by it the
	// admission of a pending
	// workload that is untried and fits now (see
	// forecast.Queue.FirstAttemptLatencySample).
	FirstAttemptLatency *stats.ServiceTimes
	// LastRelease is when a workload of the ClusterQueue last gave its
	// quota back (finished, or preempted). A workload that arrived before
	// it and is admitted untried may have waited for that quota behind
	// others, never popped by the scheduler: its arrival-to-admission
	// delay is a wait, not a first attempt's latency.
	LastRelease time.Time
	// PreemptionDelay is an EMA of the delay between a preemption (the
	// victim's eviction seen) and the next admission, the preemptor's;
	// preemptionDelays holds the same delays in a reservoir.
	PreemptionDelay  *stats.EMA
	PreemptionDelays *stats.ServiceTimes
	PreemptedAt      time.Time
	// PreemptedPriority is the priority of the victim whose eviction set
	// preemptedAt.
	PreemptedPriority int32
	// PreemptionReaction is a reservoir of delays from a preemptor's
	// arrival (its sighting) to the sighting of its victim's eviction:
	// the scheduler's reaction to it, the preemption decision and the
	// eviction's write. It is measured at the preemptor's admission, the
	// next one after the eviction, when the admitted workload arrived
	// before the eviction and has a higher priority than its victim (a
	// victim admitted again does not count). Measured, it replaces the
	// admission latency as the roll's reaction to a preemptor, and the
	// preemption delay is counted from the eviction's sighting without
	// writeLag (see View).
	PreemptionReaction *stats.ServiceTimes
	// WriteLag is an EMA of the delay from the scheduler's hook on an
	// admission to the informer's sighting of it. The hook is called once
	// the admission's write returned, so this is the watch event's lag
	// behind a write, not the write itself, which the estimator does not
	// see (the scheduler does not report when it decided). The eviction
	// that starts a preemption is a write too, and preemptionDelay,
	// measured from its sighting, misses that lag.
	WriteLag *stats.EMA
	// ReleaseDelay is an EMA of the delay from the sighting of one of this
	// ClusterQueue's workloads evicted by preemption to the sighting of its
	// quota's release (its job integration stopping it): how long a victim
	// here, of a reclaim or any other preemption, holds the quota it was
	// preempted for.
	ReleaseDelay *stats.EMA
	// QuotablePending is how many Quotable workloads the last refresh found
	// pending: a completion starts an admission-latency measurement only
	// when one of them could take the quota it frees. An Unfeasible
	// workload never takes it, and counting one made the next admission,
	// whenever a workload arrived, a latency sample.
	QuotablePending int
	// P50Hits and P90Hits are the decayed realized coverage of the
	// ledger's first P50 and P90; cal50 and cal90 calibrate them.
	P50Hits, P90Hits *stats.DecayedMean
	cal50, cal90     *calibration.Quantile
}

// Priority are the statistics of one priority of a ClusterQueue: its
// arrival rate, for the roll to bring in the higher-priority work that will
// pass a pending workload, and the calibrators of its quantiles (Kueue
// admits by priority first, so each priority errs its own way).
type Priority struct {
	arrivals *stats.EventRate
	// shapes are the demand shapes of the priority's admissions (at most
	// maxShapesPerPriority), which split its arrival rate by shape;
	// newShapeRate makes a shape's admission rate.
	shapes       []*admittedShape
	newShapeRate func() (*stats.EventRate, error)
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

// ObserveAdmittedShape counts an admission at t of a workload of the given
// priority and demand shape (admittedDemand).
func (s *Queue) ObserveAdmittedShape(t time.Time, priority int32, key string, demand capacity.Workload) {
	if ps := s.Priority(priority); ps != nil {
		ps.observeAdmittedShape(t, s.windowStart, key, demand)
	}
}

// ObserveArrival counts an arrival of the given priority at t.
func (s *Queue) ObserveArrival(t time.Time, priority int32) {
	s.Arrivals.ObserveAt(t)
	if ps := s.Priority(priority); ps != nil {
		ps.arrivals.ObserveAt(t)
	}
}

// SeedArrivals warm-starts the arrival rates from arrivals already known,
// complete from windowStart on.
func (s *Queue) SeedArrivals(windowStart time.Time, all []time.Time, byPriority map[int32][]time.Time) {
	if !windowStart.IsZero() && windowStart.Before(s.windowStart) {
		s.windowStart = windowStart
	}
	s.Arrivals.Seed(windowStart, all)
	for _, ps := range s.byPriority {
		ps.arrivals.Seed(s.windowStart, nil)
	}
	for p, times := range byPriority {
		if ps := s.Priority(p); ps != nil {
			ps.arrivals.Seed(s.windowStart, times)
		}
	}
}

// Priority returns the statistics of a priority, created on first use
// with its arrival rate over the queue's arrival window; nil beyond
// maxTrackedPriorities, and nil (untracked, as beyond the bound) should
// they fail to be made, which the validated configuration rules out.
func (s *Queue) Priority(priority int32) *Priority {
	if ps, ok := s.byPriority[priority]; ok {
		return ps
	}
	if len(s.byPriority) >= maxTrackedPriorities {
		return nil
	}
	ps, err := s.newPriority()
	if err != nil {
		return nil
	}
	ps.arrivals.Seed(s.windowStart, nil)
	if s.byPriority == nil {
		s.byPriority = make(map[int32]*Priority)
	}
	s.byPriority[priority] = ps
	return ps
}

// ObserveService records the service time of a workload of the given
// priority and demand shape (admittedDemand's key; "" when unknown) that
// completed at end: in the ClusterQueue's sample, in the priority's own,
// and in its shape's.
func (s *Queue) ObserveService(priority int32, shapeKey string, end time.Time, seconds float64) {
	s.Service.ObserveAt(end, seconds)
	if ps := s.Priority(priority); ps != nil {
		if service := ps.serviceSample(s); service != nil {
			service.ObserveAt(end, seconds)
		}
		if shapeKey != "" {
			ps.observeShapeService(s, shapeKey, end, seconds)
		}
	}
}

// SeedPriorityService warm-starts the service sample of a priority with
// spans sorted by their end; nothing when the priority is not tracked.
func (s *Queue) SeedPriorityService(priority int32, spans []stats.Span) {
	if ps := s.Priority(priority); ps != nil {
		if service := ps.serviceSample(s); service != nil {
			service.Seed(spans)
		}
	}
}

// serviceSample returns the priority's service sample, made on first use;
// nil (no sample, the priority's service then counts in the ClusterQueue's
// only) should it fail to be made, which the validated configuration rules
// out.
func (ps *Priority) serviceSample(s *Queue) *stats.ServiceTimes {
	if ps.service == nil {
		service, err := s.newPriorityService()
		if err != nil {
			return nil
		}
		ps.service = service
	}
	return ps.service
}

// config is what every ClusterQueue's statistics are made with: the
// clock, the random source of the reservoirs and the options that size and
// age them. newConfig validates it once, in NewQueuesFor, by making one of
// each statistic; the constructors depend on nothing else, so making them
// with the same configuration afterwards cannot fail.
type config struct {
	Clock             stats.Clock
	Rand              *rand.Rand
	HalfLife          time.Duration
	ServiceSampleSize int
	MinServiceSamples int
	EMAAlpha          float64
}

// newConfig returns c once every statistic made from it could be made
// (a ClusterQueue's, with one priority, its service sample and a shape's
// rate), or the first error a constructor returned.
func newConfig(c config) (config, error) {
	if c.Clock == nil || c.Rand == nil {
		return config{}, errors.New("statistics: a clock and a random source are required")
	}
	s, err := c.newQueue()
	if err != nil {
		return config{}, err
	}
	if _, err := s.newPriority(); err != nil {
		return config{}, err
	}
	if _, err := s.newPriorityService(); err != nil {
		return config{}, err
	}
	if _, err := c.newShapeRate(); err != nil {
		return config{}, err
	}
	return c, nil
}

func (c config) decay() stats.DecayOptions {
	return stats.DecayOptions{HalfLife: c.HalfLife, MinSamples: 2}
}

// delays is a reservoir of measured delays (latencies, reactions) of one
// ClusterQueue.
func (c config) delays() (*stats.ServiceTimes, error) {
	return stats.NewServiceTimes(c.Clock, c.Rand, stats.ReservoirOptions{
		Capacity:   admissionLatencySampleSize,
		HalfLife:   c.HalfLife,
		MinSamples: 1,
	})
}

// newShapeRate makes the admission rate of a demand shape.
func (c config) newShapeRate() (*stats.EventRate, error) {
	return stats.NewEventRate(c.Clock, c.decay())
}

// newQueue makes the statistics of one ClusterQueue, its window
// starting now.
func (c config) newQueue() (*Queue, error) {
	var errs []error
	keep := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	delays := func() *stats.ServiceTimes {
		r, err := c.delays()
		keep(err)
		return r
	}
	arrivals, err := stats.NewEventRate(c.Clock, c.decay())
	keep(err)
	preemptions, err := stats.NewEventRate(c.Clock, stats.DecayOptions{HalfLife: c.HalfLife, MinSamples: 1})
	keep(err)
	admissions, err := stats.NewEventRate(c.Clock, c.decay())
	keep(err)
	service, err := stats.NewServiceTimes(c.Clock, c.Rand, stats.ReservoirOptions{
		Capacity:   c.ServiceSampleSize,
		HalfLife:   c.HalfLife,
		MinSamples: c.MinServiceSamples,
	})
	keep(err)
	waits, err := stats.NewEMA(c.EMAAlpha)
	keep(err)
	latency, firstAttempt := delays(), delays()
	preemptionDelay, err := stats.NewEMA(stats.DefaultEMAAlpha)
	keep(err)
	preemptionDelays, preemptionReaction := delays(), delays()
	writeLag, err := stats.NewEMA(stats.DefaultEMAAlpha)
	keep(err)
	releaseDelay, err := stats.NewEMA(stats.DefaultEMAAlpha)
	keep(err)
	coverage := stats.DecayOptions{HalfLife: c.HalfLife, MinSamples: 1}
	p50Hits, err := stats.NewDecayedMean(coverage)
	keep(err)
	p90Hits, err := stats.NewDecayedMean(coverage)
	keep(err)
	cal50, cal90, err := NewQuantileCalibrators(c.HalfLife)
	keep(err)
	if len(errs) > 0 {
		return nil, fmt.Errorf("statistics: %w", errors.Join(errs...))
	}
	return &Queue{
		Arrivals:    arrivals,
		windowStart: c.Clock.Now(),
		newPriority: func() (*Priority, error) {
			ps := &Priority{newShapeRate: c.newShapeRate}
			var err, calErr error
			ps.arrivals, err = stats.NewEventRate(c.Clock, c.decay())
			ps.cal50, ps.cal90, calErr = NewQuantileCalibrators(c.HalfLife)
			if err := errors.Join(err, calErr); err != nil {
				return nil, fmt.Errorf("statistics of a priority: %w", err)
			}
			return ps, nil
		},
		newPriorityService: func() (*stats.ServiceTimes, error) {
			return stats.NewServiceTimes(c.Clock, c.Rand, stats.ReservoirOptions{
				Capacity:   min(c.ServiceSampleSize, priorityServiceSampleSize),
				HalfLife:   c.HalfLife,
				MinSamples: c.MinServiceSamples,
			})
		},
		Preemptions:         preemptions,
		Admissions:          admissions,
		Service:             service,
		Waits:               waits,
		AdmissionLatency:    latency,
		FirstAttemptLatency: firstAttempt,
		PreemptionDelay:     preemptionDelay,
		PreemptionDelays:    preemptionDelays,
		PreemptionReaction:  preemptionReaction,
		WriteLag:            writeLag,
		ReleaseDelay:        releaseDelay,
		P50Hits:             p50Hits,
		P90Hits:             p90Hits,
		cal50:               cal50,
		cal90:               cal90,
	}, nil
}

// View is a copy of what a refresh needs, taken under the lock: what
// the engine rolls with, and what only the published model reports.
type View struct {
	engine.Stats
	EMA                      float64
	HasEMA                   bool
	P50Coverage, P90Coverage float64
	HasCoverage              bool
	Scored                   uint64
	Calibrated               bool
}

func (s *Queue) View() View {
	var v View
	var ok1, ok2 bool
	v.ArrivalRate, ok1 = s.Arrivals.Rate()
	v.ArrivalSCV, ok2 = s.Arrivals.IntervalSCV()
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
	v.PreemptionRate, _ = s.Preemptions.Rate()
	v.ServiceMean, ok1 = s.Service.Mean()
	v.ServiceSCV, ok2 = s.Service.SCV()
	v.HasService = ok1 && ok2
	if v.HasService {
		v.ServiceSample = s.Service.AppendValues(nil)
	}
	v.EMA, v.HasEMA = s.Waits.Value()
	// The admission latency is the estimator's choice (see latencyOf).
	// A preemptor waits from the decision: the eviction's write (of which
	// only the sighting's lag, writeLag, is measured), then what
	// preemptionDelay measured from its sighting. With measured
	// reactions, which run from the preemptor's arrival to that sighting,
	// the eviction's write and lag are in the reaction already, and each
	// preemption of the roll draws its delay from the measured ones.
	// Unmeasured (0), the roll's default applies.
	if delay, ok := s.PreemptionDelay.Value(); ok {
		lag, _ := s.WriteLag.Value()
		v.PreemptionDelay = delay + lag
		if s.PreemptionReaction.Len() > 0 {
			v.PreemptionReactionSample = s.PreemptionReaction.AppendValues(nil)
			v.PreemptionDelaySample = s.PreemptionDelays.AppendValues(nil)
			v.PreemptionDelay = delay
		}
	}
	var ok50, ok90 bool
	v.P50Coverage, ok50 = s.P50Hits.Value()
	v.P90Coverage, ok90 = s.P90Hits.Value()
	v.HasCoverage = ok50 && ok90
	v.Scored = s.P90Hits.Count()
	return v
}

// Seeds are what a warm start read of the workloads of one ClusterQueue
// (the informer's cache after a restart) for Queue.Seed: arrivals (in
// all and by priority), the waits of admitted workloads, the service of
// finished ones and preemptions. The zero value holds nothing.
type Seeds struct {
	arrivals, preemptions []time.Time
	arrivalsByPriority    map[int32][]time.Time
	serviceByPriority     map[int32][]stats.Span
	service, waits        []stats.Span
	earliest              time.Time
}

// AddArrival records a workload of the given priority created at created.
func (sd *Seeds) AddArrival(created time.Time, priority int32) {
	sd.arrivals = append(sd.arrivals, created)
	if sd.arrivalsByPriority == nil {
		sd.arrivalsByPriority = make(map[int32][]time.Time)
	}
	sd.arrivalsByPriority[priority] = append(sd.arrivalsByPriority[priority], created)
	if sd.earliest.IsZero() || created.Before(sd.earliest) {
		sd.earliest = created
	}
}

// AddWait records the wait of an admitted workload.
func (sd *Seeds) AddWait(wait stats.Span) { sd.waits = append(sd.waits, wait) }

// AddService records the service of a finished workload of the given
// priority.
func (sd *Seeds) AddService(priority int32, service stats.Span) {
	sd.service = append(sd.service, service)
	if sd.serviceByPriority == nil {
		sd.serviceByPriority = make(map[int32][]stats.Span)
	}
	sd.serviceByPriority[priority] = append(sd.serviceByPriority[priority], service)
}

// AddPreemption records an eviction by preemption at at.
func (sd *Seeds) AddPreemption(at time.Time) { sd.preemptions = append(sd.preemptions, at) }

// Seed seeds s with sd, its window starting at the earliest arrival.
func (s *Queue) Seed(sd *Seeds) {
	s.SeedArrivals(sd.earliest, sd.arrivals, sd.arrivalsByPriority)
	s.Preemptions.Seed(sd.earliest, sd.preemptions)
	slices.SortFunc(sd.service, func(a, b stats.Span) int { return a.End.Compare(b.End) })
	s.Service.Seed(sd.service)
	// In priority order: the reservoirs share the caller's random source.
	for _, prio := range slices.Sorted(maps.Keys(sd.serviceByPriority)) {
		spans := sd.serviceByPriority[prio]
		if s.Priority(prio) != nil {
			slices.SortFunc(spans, func(a, b stats.Span) int { return a.End.Compare(b.End) })
			s.SeedPriorityService(prio, spans)
		}
	}
	slices.SortFunc(sd.waits, func(a, b stats.Span) int { return a.End.Compare(b.End) })
	s.Waits.Seed(sd.waits)
}
