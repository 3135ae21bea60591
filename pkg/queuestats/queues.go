package queuestats

import (
	"fmt"
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/cohortview"
	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
	"github.com/kueue-waittime/kueue-waittime/pkg/stats"
)

// cycleBusyAlpha smooths the scheduler's busy time per cycle: about the
// last ten cycles count.
const cycleBusyAlpha = 0.1

// Queues holds the statistics of every ClusterQueue (named by Q), what
// they pool ([Shared]), the cohort (named by C) each ClusterQueue is in
// with the last release of quota in each cohort, and the scheduler's busy
// time per cycle. The caller guards it (the estimator, by its mutex).
type Queues[Q, C comparable] struct {
	cfg    Config
	shared *Shared
	// perQueue holds each ClusterQueue's statistics, made at first use.
	perQueue map[Q]*Queue
	// cohortOf is each known ClusterQueue's cohort (its spec's; none is
	// not kept).
	cohortOf map[Q]C
	// cohortReleases holds, per cohort, when a workload of one of its
	// ClusterQueues last gave its quota back (see Queue.LastRelease).
	cohortReleases map[C]time.Time
	// cycleBusy is an EMA of how long the scheduler was busy between the
	// start of one cycle and the moment the next began waiting for heads;
	// lastCycleStart is when the last cycle obtained its heads.
	cycleBusy      *stats.EMA
	lastCycleStart time.Time
}

// statsInvariant reports a constructor's error where NewConfig validated
// the configuration it was given, so none can happen. It panics with the
// error, naming the broken invariant; every entry point of the estimator
// recovers from a panic, so a bug here costs the event that found it,
// never the scheduler.
func statsInvariant(err error) {
	if err != nil {
		panic(fmt.Sprintf("estimator: a statistic of a configuration New validated could not be made: %v", err))
	}
}

// NewQueues returns the statistics of no ClusterQueue yet, made with c
// (which NewConfig validated), and what they pool.
func NewQueues[Q, C comparable](c Config) (*Queues[Q, C], error) {
	shared, err := c.NewShared()
	if err != nil {
		return nil, err
	}
	cycleBusy, err := stats.NewEMA(cycleBusyAlpha)
	if err != nil {
		return nil, err
	}
	return &Queues[Q, C]{cfg: c, shared: shared, perQueue: make(map[Q]*Queue), cohortOf: make(map[Q]C),
		cohortReleases: make(map[C]time.Time), cycleBusy: cycleBusy}, nil
}

// Shared is what every ClusterQueue's statistics pool.
func (qs *Queues[Q, C]) Shared() *Shared { return qs.shared }

// Of returns the statistics of ClusterQueue cq, making them.
func (qs *Queues[Q, C]) Of(cq Q) *Queue {
	s, ok := qs.perQueue[cq]
	if !ok {
		var err error
		s, err = qs.cfg.NewQueue()
		statsInvariant(err)
		qs.perQueue[cq] = s
	}
	return s
}

// SetCohort records that ClusterQueue cq is in cohort (the zero C: none).
// The release time kept for the cohort it leaves is dropped once no known
// ClusterQueue is in that one, so that the map does not grow with every
// cohort name ever used.
func (qs *Queues[Q, C]) SetCohort(cq Q, cohort C) {
	previous := qs.cohortOf[cq]
	qs.cohortOf[cq] = cohort
	if previous != cohort {
		qs.forgetCohortIfEmpty(previous)
	}
}

// Forget drops a deleted ClusterQueue's statistics and its cohort's
// release time once no known ClusterQueue is in that cohort.
func (qs *Queues[Q, C]) Forget(cq Q) {
	cohort := qs.cohortOf[cq]
	delete(qs.cohortOf, cq)
	delete(qs.perQueue, cq)
	qs.forgetCohortIfEmpty(cohort)
}

// forgetCohortIfEmpty drops the release time kept for cohort (see
// NoteRelease) once no known ClusterQueue is in it. O(ClusterQueues), on
// a ClusterQueue's deletion or change of cohort only.
func (qs *Queues[Q, C]) forgetCohortIfEmpty(cohort C) {
	var none C
	if cohort == none {
		return
	}
	if _, kept := qs.cohortReleases[cohort]; !kept {
		return
	}
	for _, c := range qs.cohortOf {
		if c == cohort {
			return
		}
	}
	delete(qs.cohortReleases, cohort)
}

// NoteRelease records that a workload of cq gave its quota back at now: in
// cq's statistics, and in its cohort's, since Kueue lends freed quota to
// any ClusterQueue of the cohort, directly (borrowing) or by preemption
// (reclaim). Only the direct parent cohort is kept; a release elsewhere in
// a hierarchical cohort tree is not seen by the others.
func (qs *Queues[Q, C]) NoteRelease(cq Q, now time.Time) {
	qs.Of(cq).LastRelease = now
	var none C
	if c := qs.cohortOf[cq]; c != none {
		qs.cohortReleases[c] = now
	}
}

// lastReleaseFor is the later of the last release of quota in cq (its
// statistics s) and in its cohort (see NoteRelease): a workload of cq
// that arrived before it and was admitted untried may have waited for
// that quota.
func (qs *Queues[Q, C]) lastReleaseFor(cq Q, s *Queue) time.Time {
	last := s.LastRelease
	var none C
	if c := qs.cohortOf[cq]; c != none {
		if t := qs.cohortReleases[c]; t.After(last) {
			last = t
		}
	}
	return last
}

// ObserveAdmission updates the statistics of cq, and what they pool, for
// admission a (see Shared.ObserveAdmission), with the last release of
// quota in cq or its cohort as a.LastRelease.
func (qs *Queues[Q, C]) ObserveAdmission(cq Q, a Admission) {
	s := qs.Of(cq)
	a.LastRelease = qs.lastReleaseFor(cq, s)
	qs.shared.ObserveAdmission(s, a)
}

// ObserveCycle records a scheduling cycle that began waiting for heads at
// waitStart and obtained them at start: the time from the previous
// cycle's start to waitStart feeds the busy time per cycle. Out-of-order
// or zero times are ignored.
func (qs *Queues[Q, C]) ObserveCycle(waitStart, start time.Time) {
	if !qs.lastCycleStart.IsZero() && !waitStart.Before(qs.lastCycleStart) {
		qs.cycleBusy.Observe(waitStart.Sub(qs.lastCycleStart).Seconds())
	}
	if start.After(qs.lastCycleStart) {
		qs.lastCycleStart = start
	}
}

// ViewOf is the copy of cq's statistics a refresh hands the engine (see
// Shared.View), with the calibration it applies (see Shared.Calibration,
// scaled by the mean service time, priorMeanService seconds when cq has
// no service statistics yet) and the scheduler's busy time per cycle (0
// before any was measured).
func (qs *Queues[Q, C]) ViewOf(cq Q, priorMeanService float64) (v View, cyclePeriod float64) {
	s := qs.Of(cq)
	v = qs.shared.View(s)
	meanService := priorMeanService
	if v.HasService {
		meanService = v.ServiceMean
	}
	v.Calibration, v.Calibrated = qs.shared.Calibration(s, engine.CalibrationScale(meanService))
	cyclePeriod, _ = qs.cycleBusy.Value()
	return v, cyclePeriod
}

// ReclaimDelaysOf returns what a reclaim by lender takes from the holders
// of its lent quota, which run in the ClusterQueues of holders (see
// cohortview.Delays).
func (qs *Queues[Q, C]) ReclaimDelaysOf(lender Q, holders []cohortview.Source[Q]) cohortview.Delays[Q] {
	var d cohortview.Delays[Q]
	s := qs.Of(lender)
	d.Decision, _ = qs.shared.LatencyReservoirOf(s).Mean()
	d.WriteLag, _ = s.WriteLag.Value()
	for _, src := range holders {
		if _, done := d.Release[src.ClusterQueue]; done {
			continue
		}
		if hs, ok := qs.perQueue[src.ClusterQueue]; ok {
			if r, ok := hs.ReleaseDelay.Value(); ok {
				if d.Release == nil {
					d.Release = make(map[Q]float64)
				}
				d.Release[src.ClusterQueue] = r
			}
		}
	}
	return d
}
