package queuestats

import (
	"fmt"
	"iter"
	"math/rand/v2"
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
// with the last release of quota in each cohort, the scheduler's busy
// time per cycle, and when each running workload (keyed by W) was seen
// admitted and, evicted by preemption, seen evicted. The caller guards it
// (the estimator, by its mutex).
type Queues[Q, C, W comparable] struct {
	cfg    config
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
	// AdmittedAt is when each workload was seen getting its quota
	// reservation, in Unix nanoseconds (the clock's resolution, where API
	// timestamps have one second's, which matters for short waits and
	// service times). Entries leave at release, finish and deletion:
	// bounded by the running workloads.
	AdmittedAt map[W]int64
	// evictedAt is when a workload evicted by preemption was seen evicted,
	// until its quota's release is seen (it measures the release delay of
	// its ClusterQueue), it finishes or it is deleted: bounded by the
	// workloads being evicted.
	evictedAt map[W]int64
}

// statsInvariant reports a constructor's error where newConfig validated
// the configuration it was given, so none can happen. It panics with the
// error, naming the broken invariant; every entry point of the estimator
// recovers from a panic, so a bug here costs the event that found it,
// never the scheduler.
func statsInvariant(err error) {
	if err != nil {
		panic(fmt.Sprintf("estimator: a statistic of a configuration New validated could not be made: %v", err))
	}
}

// newQueues returns the statistics of no ClusterQueue yet, made with c
// (which newConfig validated), and what they pool.
func newQueues[Q, C, W comparable](c config) (*Queues[Q, C, W], error) {
	shared, err := c.newShared()
	if err != nil {
		return nil, err
	}
	cycleBusy, err := stats.NewEMA(cycleBusyAlpha)
	if err != nil {
		return nil, err
	}
	return &Queues[Q, C, W]{cfg: c, shared: shared, perQueue: make(map[Q]*Queue), cohortOf: make(map[Q]C),
		cohortReleases: make(map[C]time.Time), cycleBusy: cycleBusy, AdmittedAt: make(map[W]int64), evictedAt: make(map[W]int64)}, nil
}

// NewQueuesFor returns the statistics of no ClusterQueue yet, configured
// by s (the half-life of their rates, the service sample's size and the
// samples it needs, the EMA's α), reading clock and drawing from r (see
// newConfig).
func NewQueuesFor[Q, C, W comparable](s engine.Settings, clock stats.Clock, r *rand.Rand) (*Queues[Q, C, W], error) {
	c, err := newConfig(config{Clock: clock, Rand: r, HalfLife: s.HalfLife, ServiceSampleSize: s.ServiceSampleSize,
		MinServiceSamples: s.MinServiceSamples, EMAAlpha: s.EMAAlpha})
	if err != nil {
		return nil, err
	}
	return newQueues[Q, C, W](c)
}

// Shared is what every ClusterQueue's statistics pool.
func (qs *Queues[Q, C, W]) Shared() *Shared { return qs.shared }

// Of returns the statistics of ClusterQueue cq, making them.
func (qs *Queues[Q, C, W]) Of(cq Q) *Queue {
	s, ok := qs.perQueue[cq]
	if !ok {
		var err error
		s, err = qs.cfg.newQueue()
		statsInvariant(err)
		qs.perQueue[cq] = s
	}
	return s
}

// SetCohort records that ClusterQueue cq is in cohort (the zero C: none).
// The release time kept for the cohort it leaves is dropped once no known
// ClusterQueue is in that one, so that the map does not grow with every
// cohort name ever used.
func (qs *Queues[Q, C, W]) SetCohort(cq Q, cohort C) {
	previous := qs.cohortOf[cq]
	qs.cohortOf[cq] = cohort
	if previous != cohort {
		qs.forgetCohortIfEmpty(previous)
	}
}

// Forget drops a deleted ClusterQueue's statistics and its cohort's
// release time once no known ClusterQueue is in that cohort.
func (qs *Queues[Q, C, W]) Forget(cq Q) {
	cohort := qs.cohortOf[cq]
	delete(qs.cohortOf, cq)
	delete(qs.perQueue, cq)
	qs.forgetCohortIfEmpty(cohort)
}

// forgetCohortIfEmpty drops the release time kept for cohort (see
// noteRelease) once no known ClusterQueue is in it. O(ClusterQueues), on
// a ClusterQueue's deletion or change of cohort only.
func (qs *Queues[Q, C, W]) forgetCohortIfEmpty(cohort C) {
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

// noteRelease records that a workload of cq gave its quota back at now: in
// cq's statistics, and in its cohort's, since Kueue lends freed quota to
// any ClusterQueue of the cohort, directly (borrowing) or by preemption
// (reclaim). Only the direct parent cohort is kept; a release elsewhere in
// a hierarchical cohort tree is not seen by the others.
func (qs *Queues[Q, C, W]) noteRelease(cq Q, now time.Time) {
	qs.Of(cq).LastRelease = now
	var none C
	if c := qs.cohortOf[cq]; c != none {
		qs.cohortReleases[c] = now
	}
}

// lastReleaseFor is the later of the last release of quota in cq (its
// statistics s) and in its cohort (see noteRelease): a workload of cq
// that arrived before it and was admitted untried may have waited for
// that quota.
func (qs *Queues[Q, C, W]) lastReleaseFor(cq Q, s *Queue) time.Time {
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
// admission a (see Shared.observeAdmission), with the last release of
// quota in cq or its cohort as a.LastRelease.
func (qs *Queues[Q, C, W]) ObserveAdmission(cq Q, a Admission) {
	s := qs.Of(cq)
	a.LastRelease = qs.lastReleaseFor(cq, s)
	qs.shared.observeAdmission(s, a)
}

// ObserveCycle records a scheduling cycle that began waiting for heads at
// waitStart and obtained them at start: the time from the previous
// cycle's start to waitStart feeds the busy time per cycle. Out-of-order
// or zero times are ignored.
func (qs *Queues[Q, C, W]) ObserveCycle(waitStart, start time.Time) {
	if !qs.lastCycleStart.IsZero() && !waitStart.Before(qs.lastCycleStart) {
		qs.cycleBusy.Observe(waitStart.Sub(qs.lastCycleStart).Seconds())
	}
	if start.After(qs.lastCycleStart) {
		qs.lastCycleStart = start
	}
}

// RollView is the view a refresh rolls ClusterQueue cq with
// (Shared.View), with the calibration that applies now
// (Shared.Calibration) at the scale of its mean service time: the
// observed one, else priorMeanService (seconds).
func (qs *Queues[Q, C, W]) RollView(cq Q, priorMeanService float64) View {
	s := qs.Of(cq)
	v := qs.shared.View(s)
	mean := priorMeanService
	if v.HasService {
		mean = v.ServiceMean
	}
	v.Calibration, v.Calibrated = qs.shared.Calibration(s, engine.CalibrationScale(mean))
	return v
}

// AdmittedTimes returns when each workload keys yields was seen admitted
// (AdmittedAt), for those that were; n is about how many keys yields.
func (qs *Queues[Q, C, W]) AdmittedTimes(keys iter.Seq[W], n int) map[W]time.Time {
	out := make(map[W]time.Time, n)
	for key := range keys {
		if at, ok := qs.AdmittedAt[key]; ok {
			out[key] = time.Unix(0, at).UTC()
		}
	}
	return out
}

// CyclePeriod is the scheduler's busy time per cycle, an EMA (0 before
// any was measured).
func (qs *Queues[Q, C, W]) CyclePeriod() float64 {
	v, _ := qs.cycleBusy.Value()
	return v
}

// ReclaimDelaysOf returns what a reclaim by lender takes from the holders
// of its lent quota, which run in the ClusterQueues of holders (see
// cohortview.Delays).
func (qs *Queues[Q, C, W]) ReclaimDelaysOf(lender Q, holders []cohortview.Source[Q]) cohortview.Delays[Q] {
	var d cohortview.Delays[Q]
	s := qs.Of(lender)
	d.Decision, _ = qs.shared.latencyReservoirOf(s).Mean()
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

// Admit records that workload key of cq was seen admitted at now, by the
// Workload informer's update if informer, else by the scheduler's hook;
// it says whether that admission was recorded already (by the other). The
// informer's later sighting, which every replica has at about the same
// moment, replaces the scheduler's earlier one, and their difference is
// the watch event's lag behind the write (cq's WriteLag).
func (qs *Queues[Q, C, W]) Admit(key W, cq Q, now time.Time, informer bool) (already bool) {
	if at, ok := qs.AdmittedAt[key]; ok {
		if informer && now.UnixNano() > at {
			qs.Of(cq).WriteLag.Observe(time.Duration(now.UnixNano() - at).Seconds())
			qs.AdmittedAt[key] = now.UnixNano()
		}
		return true
	}
	qs.AdmittedAt[key] = now.UnixNano()
	return false
}

// Release records that workload key of cq gave its quota back at now
// without finishing (evicted, deactivated): a later admission is a new
// one. The delay from its eviction by preemption, if seen, feeds cq's
// ReleaseDelay.
func (qs *Queues[Q, C, W]) Release(key W, cq Q, now time.Time) {
	delete(qs.AdmittedAt, key)
	qs.noteRelease(cq, now)
	if at, ok := qs.evictedAt[key]; ok {
		if d := now.UnixNano() - at; d >= 0 {
			qs.Of(cq).ReleaseDelay.Observe(time.Duration(d).Seconds())
		}
		delete(qs.evictedAt, key)
	}
}

// End is how a running workload's run ended, as one update of it says:
// Finished (with its Priority, the ShapeKey of its admission and its
// service Span as its conditions give it, if HasSpan), or Preempted
// (evicted at EvictedAt, its quota Released in the same update or not,
// by a workload of its own ClusterQueue if InClusterQueue), or both.
type End struct {
	Finished, Preempted bool
	Priority            int32
	ShapeKey            string
	Span                stats.Span
	HasSpan             bool
	EvictedAt           time.Time
	Released            bool
	InClusterQueue      bool
}

// End records the end end of workload key's run in cq, seen at now: cq's
// quota is released; a finish feeds the service time, from the admission
// seen here when both ends were (clock resolution instead of the
// conditions' whole seconds), and returns the span it observed; a
// preemption feeds the preemptions and the release delay (0 when released
// with the eviction) and, by a workload of cq, the next admission's
// preemption delay; a finish alone with Quotable workloads pending frees
// quota for the admission latency.
func (qs *Queues[Q, C, W]) End(key W, cq Q, now time.Time, end End) (service stats.Span, observed bool) {
	s := qs.Of(cq)
	qs.noteRelease(cq, now)
	if end.Finished {
		service, observed = end.Span, end.HasSpan
		if at, seen := qs.AdmittedAt[key]; seen && !now.Before(time.Unix(0, at)) {
			service, observed = stats.Span{Start: time.Unix(0, at).UTC(), End: now}, true
		}
		if observed {
			s.ObserveService(end.Priority, end.ShapeKey, service.End, service.Seconds())
		}
	}
	delete(qs.AdmittedAt, key)
	if end.Finished {
		delete(qs.evictedAt, key)
	}
	if !end.Preempted {
		if s.QuotablePending > 0 && s.FreedAt.IsZero() {
			s.FreedAt = now
		}
		return service, observed
	}
	s.Preemptions.ObserveAt(end.EvictedAt)
	if end.Released {
		// Evicted and released in one update: the quota came back with
		// the eviction.
		s.ReleaseDelay.Observe(0)
	} else {
		qs.evictedAt[key] = now.UnixNano()
	}
	// The next admission is the preemptor's when it is of this
	// ClusterQueue: its delay is measured apart from the admission
	// latency after completions. A victim of a reclaim or of fair sharing
	// was preempted by another ClusterQueue's workload, and this one's
	// next admission may come much later.
	if s.PreemptedAt.IsZero() && end.InClusterQueue {
		s.PreemptedAt, s.PreemptedPriority = now, end.Priority
	}
	return service, observed
}

// ForgetWorkload forgets a deleted workload's sightings; it says whether
// it was seen admitted.
func (qs *Queues[Q, C, W]) ForgetWorkload(key W) (admitted bool) {
	_, admitted = qs.AdmittedAt[key]
	delete(qs.AdmittedAt, key)
	delete(qs.evictedAt, key)
	return admitted
}
