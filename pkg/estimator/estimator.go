package estimator

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	"sigs.k8s.io/kueue/pkg/cache/queue/afs"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/features"
	utilqueue "sigs.k8s.io/kueue/pkg/util/queue"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/cohortview"
	"github.com/kueue-waittime/kueue-waittime/pkg/convert"
	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
	"github.com/kueue-waittime/kueue-waittime/pkg/estimates"
	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
	"github.com/kueue-waittime/kueue-waittime/pkg/ledger"
	"github.com/kueue-waittime/kueue-waittime/pkg/lockhold"
	"github.com/kueue-waittime/kueue-waittime/pkg/published"
	"github.com/kueue-waittime/kueue-waittime/pkg/queuestats"
	"github.com/kueue-waittime/kueue-waittime/pkg/refreshschedule"
	"github.com/kueue-waittime/kueue-waittime/pkg/tracker"
)

// SnapshotSource takes a snapshot of the scheduler cache; Kueue's
// *schdcache.Cache implements it. The estimator takes its own snapshot, off
// the scheduling path, and owns it.
type SnapshotSource interface {
	Snapshot(ctx context.Context, options ...schdcache.SnapshotOption) (*schdcache.Snapshot, error)
}

// treeSnapshotSource is a SnapshotSource that can also list its active
// ClusterQueues without copying them and snapshot the cohort trees of some
// alone, without what only the scheduler reads (TAS). Kueue's
// *schdcache.Cache implements it with the patch series ("cache/scheduler:
// snapshot only the cohort trees of some ClusterQueues"): a refresh then
// copies, under the cache's read lock, only the ClusterQueues it
// recomputes. With a source that does not, every refresh takes a whole
// Snapshot.
type treeSnapshotSource interface {
	VisitClusterQueues(visit func(cq kueue.ClusterQueueReference, root kueue.CohortReference, allocatableResourceGeneration int64))
	SnapshotClusterQueueTrees(ctx context.Context, clusterQueues sets.Set[kueue.ClusterQueueReference]) (*schdcache.Snapshot, error)
}

// QueueSource is the part of Kueue's queue manager (*qcache.Manager) the
// estimator reads: the ordered pending list that the visibility API serves,
// and where a LocalQueue points.
type QueueSource interface {
	PendingWorkloadsInfo(cq kueue.ClusterQueueReference) []*workload.Info
	ClusterQueueFromLocalQueue(lq utilqueue.LocalQueueReference) (kueue.ClusterQueueReference, bool)
}

// admissionFairSharingLedger is where a refresh reads the LocalQueues'
// admission fair sharing usage: Kueue's *afs.AfsUsageLedger, which its
// queue manager holds (qcache.Manager.AfsUsageLedger).
type admissionFairSharingLedger interface {
	Get(lq utilqueue.LocalQueueReference) (afs.UsageLedgerEntry, bool)
}

// Estimator estimates wait times for the pending workloads of a Kueue
// manager. Build it with [New]; it is safe for concurrent use.
type Estimator struct {
	opts      options
	snapshots SnapshotSource
	queues    QueueSource
	engine    *engine.Engine

	mu  sync.Mutex
	rng *rand.Rand
	// state is what the event handlers learned since the estimator
	// started and what a refresh reads of it (see tracker.State): the
	// statistics, the prediction ledger's pending lines, what changed
	// since the last refresh, the events seen before warming and the
	// arrivals parked in unknown LocalQueues. Guarded by mu.
	state *trackerState

	// topology holds why TAS can never place some pending workloads
	// (convert.UnplaceableByTopology); the scheduler's hook and the event handlers
	// write it without taking e.mu, and a refresh reads it without a lock.
	// Entries leave at admission and deletion, and when an attempt finds
	// the workload placeable: bounded by the pending workloads that TAS
	// cannot place.
	topology engine.Verdicts[workload.Reference]

	// afsLedger is the queue manager's admission fair sharing ledger
	// (qcache.Manager.AfsUsageLedger), nil when the queue source is not
	// Kueue's queue manager.
	afsLedger admissionFairSharingLedger
	// localQueueWeights are the LocalQueues' spec.fairSharing.weight, from
	// the LocalQueue informer (see LocalQueueEventHandler). Guarded by mu.
	localQueueWeights map[utilqueue.LocalQueueReference]float64

	results atomic.Pointer[Results]
	dirty   atomic.Bool
	panics  atomic.Int64
	// refreshHolds times the holds of e.mu by the current (or last)
	// refresh (see lockForRefresh).
	refreshHolds *lockhold.Timer
}

// lockForRefresh takes e.mu for the refresh goroutine. Every hold of e.mu
// in a refresh goes through it, so that RefreshReport.LongestLockHold
// bounds what a refresh kept the scheduler waiting for this lock; release
// it with Unlock, deferred, so that a panic releases it too.
func (e *Estimator) lockForRefresh() lockhold.Hold { return e.refreshHolds.Lock() }

// forRefresh runs f on the state under e.mu for the refresh goroutine
// (see lockForRefresh).
func (e *Estimator) forRefresh(f func(s *trackerState)) {
	defer e.lockForRefresh().Unlock()
	f(e.state)
}

// update runs f on the state under e.mu for an event handler and asks for
// a refresh, whether f returns or panics.
func (e *Estimator) update(f func(s *trackerState)) {
	defer e.dirty.Store(true)
	e.mu.Lock()
	defer e.mu.Unlock()
	f(e.state)
}

// New returns an Estimator reading Kueue's scheduler cache and queue
// manager, or an error for an invalid option.
func New(snapshots SnapshotSource, queues QueueSource, opts ...Option) (*Estimator, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if o.MaxStaleness == 0 {
		o.MaxStaleness = refreshschedule.MaxStalenessFor(o.RefreshPeriod)
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	if snapshots == nil || queues == nil {
		return nil, fmt.Errorf("estimator: a snapshot source and a queue source are required")
	}
	if o.rng == nil {
		seed := uint64(o.clock.Now().UnixNano())
		o.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	}
	eng, err := o.NewEngine()
	if err != nil {
		return nil, fmt.Errorf("estimator: %w", err)
	}
	perQueue, err := queuestats.NewQueuesFor[kueue.ClusterQueueReference, kueue.CohortReference, workload.Reference](o.Settings, o.clock, o.rng)
	if err != nil {
		return nil, fmt.Errorf("estimator: %w", err)
	}
	e := &Estimator{
		opts:      o,
		snapshots: snapshots,
		queues:    queues,
		engine:    eng,
		rng:       o.rng,
		state:     tracker.New[kueue.ClusterQueueReference, kueue.CohortReference, workload.Reference, utilqueue.LocalQueueReference, queueSpec](perQueue, o.log),
	}
	if m, ok := queues.(*qcache.Manager); ok && m.AfsUsageLedger != nil {
		e.afsLedger = m.AfsUsageLedger
	}
	e.refreshHolds = lockhold.New(&e.mu, o.clock)
	e.dirty.Store(true)
	return e, nil
}

// Results returns the latest published results (nil before the first
// refresh; a nil *Results answers every lookup with "not found"). It never
// blocks.
func (e *Estimator) Results() *Results {
	if e == nil {
		return nil
	}
	return e.results.Load()
}

// Panics is how many panics the estimator recovered from.
func (e *Estimator) Panics() int64 { return e.panics.Load() }

// recoverPanic turns a panic in an entry point into a log line and a count:
// an estimator bug must never take the scheduler down.
func (e *Estimator) recoverPanic(where string) {
	if r := recover(); r != nil {
		e.panics.Add(1)
		e.opts.log.Error(fmt.Errorf("panic: %v", r), "Wait time estimator recovered from a panic", "in", where, "stack", string(debug.Stack()))
	}
}

// recoverPanicAsError is recoverPanic for an entry point that returns an
// error: the panic becomes that error.
func (e *Estimator) recoverPanicAsError(where string, err *error) {
	if r := recover(); r != nil {
		e.panics.Add(1)
		e.opts.log.Error(fmt.Errorf("panic: %v", r), "Wait time estimator recovered from a panic", "in", where, "stack", string(debug.Stack()))
		*err = fmt.Errorf("estimator: panic in %s: %v", where, r)
	}
}

// Classify partitions a workload the scheduler could not admit (paper
// Def. 3) against the ClusterQueue snapshot of the cycle: Quotable if some
// flavor of every resource group can hold its demand within nominal quota
// plus maximum borrowing, Unfeasible (with the reason) otherwise. An
// invalid demand or quota, or a nil snapshot, is reported as Quotable with
// no reason: nothing proves it can never fit.
func (e *Estimator) Classify(info *workload.Info, cqs *schdcache.ClusterQueueSnapshot) (adm Admissibility, reason string) {
	adm = Quotable
	if e == nil || info == nil || cqs == nil {
		return adm, ""
	}
	defer e.recoverPanic("Classify")
	scratch := classifyScratches.Get().(*classifyScratch)
	defer classifyScratches.Put(scratch)
	convert.CapacityInto(&scratch.capacity, cqs)
	scratch.converter.Into(&scratch.demand, convert.DemandOf(info))
	c := capacity.Verdict(&scratch.capacity, scratch.demand)
	if c.Admissibility == capacity.Unfeasible {
		return Unfeasible, c.Reason
	}
	return Quotable, ""
}

// InadmissibleCondition returns the reason and message of the
// QuotaReserved=False condition the scheduler writes for a workload it could
// not admit, given the reason and message Kueue computed. Only outcomes about
// quota are touched: reason WaitingForQuota, ExceedsMaxQuota or
// TopologyPlacementFailed, or no reason, which Kueue v0.19.2 gives a
// workload no flavor could hold (NoFit) when
// UnadmittedWorkloadsObservability is disabled. Any other outcome (an
// inactive ClusterQueue, a namespace the LocalQueue does not accept,
// admission or preemption gates, preempted workloads still terminating) has
// a reason of its own and comes back unchanged.
//
// A workload whose quota fits is also Unfeasible when Topology-Aware
// Scheduling can never place it (convert.UnplaceableByTopology), checked when
// Kueue's message says a topology did not fit or an earlier attempt found
// it unplaceable; the verdict is kept for the refresh, which publishes it,
// until the workload is admitted or deleted or an attempt finds room.
//
// With the UnadmittedWorkloadsObservability feature gate enabled (KEP-10852),
// Kueue's own reasons carry the classification and the message is left as
// Kueue wrote it: an Unfeasible workload gets ExceedsMaxQuota, the reason
// Kueue gives a demand above the ClusterQueue's maximum capacity, and a
// Quotable one, or one Unfeasible by its topology (for which Kueue has
// TopologyPlacementFailed), keeps Kueue's reason (an ExceedsMaxQuota Kueue
// computed is never taken back). With that gate disabled, Kueue writes the reason
// "Pending" for every such outcome, so the classification is appended to the
// message instead. Either way the result depends only on the quota
// configuration, the nodes and the workload, never on time, so it never
// causes a status write of its own. A nil estimator or snapshot returns its inputs.
func (e *Estimator) InadmissibleCondition(reason, msg string, info *workload.Info, cqs *schdcache.ClusterQueueSnapshot) (string, string) {
	if e == nil || cqs == nil || !convert.IsAboutQuota(reason) {
		return reason, msg
	}
	adm, why := e.Classify(info, cqs)
	byTopology := false
	if adm == Quotable && info != nil {
		byTopology, why = e.checkTopology(msg, info, cqs)
		if byTopology {
			adm = Unfeasible
		}
	}
	if features.Enabled(features.UnadmittedWorkloadsObservability) {
		// Kueue gives a topology that can never fit a reason of its own
		// (TopologyPlacementFailed) in the flavor attempts it then records.
		if adm == Unfeasible && !byTopology && reason != kueue.WorkloadQuotaReservedReasonTopologyPlacementFailed {
			return kueue.WorkloadQuotaReservedReasonExceedsMaxQuota, msg
		}
		return reason, msg
	}
	return reason, estimates.ConditionMessage(msg, adm, why)
}

// checkTopology finds, for a workload whose quota fits, whether TAS can
// never place it (convert.UnplaceableByTopology) and records the verdict for the
// refresh: when Kueue's message says a topology did not fit, or when an
// earlier attempt found it unplaceable (nodes may have come since).
func (e *Estimator) checkTopology(msg string, info *workload.Info, cqs *schdcache.ClusterQueueSnapshot) (bool, string) {
	verdicts := e.topology.Load()
	if len(verdicts) == 0 && !convert.IsAboutTopology(msg) {
		// No verdict held, none to look up: no key to build.
		return false, ""
	}
	key := workload.Key(info.Obj)
	if _, known := verdicts[key]; !known && !convert.IsAboutTopology(msg) {
		return false, ""
	}
	why := convert.UnplaceableByTopology(info, cqs)
	e.topology.Set(key, why)
	if why != "" {
		e.opts.log.V(3).Info("Topology can never place the workload", "workload", key, "clusterQueue", cqs.Name, "reason", why)
	}
	return why != "", why
}

// ObserveCycle records a scheduling cycle that began waiting for heads at
// waitStart and obtained them at start. Kueue pops at most one head per
// ClusterQueue per cycle, so two admissions into one ClusterQueue are at
// least a busy cycle apart: the time from the previous cycle's start to
// waitStart, which is the previous cycle's work plus the loop's backoff
// (at most milliseconds), and not the time spent blocked waiting for heads.
// That spacing, smoothed, caps the forecast's admission rate. Out-of-order
// or zero times are ignored.
func (e *Estimator) ObserveCycle(waitStart, start time.Time) {
	if e == nil {
		return
	}
	defer e.recoverPanic("ObserveCycle")
	e.mu.Lock()
	defer e.mu.Unlock()
	e.state.Stats.ObserveCycle(waitStart, start)
}

// ObserveAdmission records that the scheduler reserved quota for wl (the
// object as written, with its admission) at now: the wait feeds the EMA
// baseline, the admission the throughput and latency statistics, and the
// workload's line in the prediction ledger is scored and reported.
//
// Every replica also records admissions from the Workload informer's
// updates (see the event handler), so that replicas which do not schedule
// measure the same statistics; whichever of the two comes first is
// recorded, the other is ignored.
func (e *Estimator) ObserveAdmission(wl *kueue.Workload, now time.Time) {
	if e == nil || wl == nil || wl.Status.Admission == nil {
		return
	}
	defer e.recoverPanic("ObserveAdmission")
	e.topology.Set(workload.Key(wl), "")
	var score Score
	var outcome ledger.Outcome
	e.update(func(*trackerState) { score, outcome = e.recordAdmission(wl, now, false) })
	e.reportAdmission(wl.Status.Admission.ClusterQueue, score, outcome)
}

// reportAdmission tells the metrics reporter how an admission was scored.
// It takes no lock.
func (e *Estimator) reportAdmission(cq kueue.ClusterQueueReference, score Score, outcome ledger.Outcome) {
	switch outcome {
	case ledger.Unscored:
		if e.opts.reporter != nil {
			e.opts.reporter.ReportUnscored(cq, AdmittedBeforeEstimate)
		}
	case ledger.Scored:
		e.opts.log.V(3).Info("Wait time predictions scored at admission", "workload", score.Workload, "clusterQueue", cq,
			"method", score.Method, "estimatedAt", score.EstimatedAt, "actual", score.Actual,
			"forecast", score.Forecast.Wait, "ema", score.EMA.Wait, "paper", score.Paper.Wait)
		if e.opts.reporter != nil {
			e.opts.reporter.ReportScore(score)
		}
	}
}

// recordAdmission records the admission of wl at now, seen by the
// Workload informer's update if informer, else by the scheduler's hook,
// and scores its ledger line, once per admission (see tracker.State.Admit).
// The caller holds e.mu.
func (e *Estimator) recordAdmission(wl *kueue.Workload, now time.Time, informer bool) (Score, ledger.Outcome) {
	return e.state.Admit(admitted{Key: workload.Key(wl), ClusterQueue: wl.Status.Admission.ClusterQueue, Priority: convert.PriorityOf(wl),
		Created: wl.CreationTimestamp.Time, QueuedSince: convert.QueuedSince(wl), At: now, Informer: informer})
}

// Start runs the refresh loop until ctx is done: every refresh period, if
// anything was observed since the last refresh, some results are as old as
// the maximum staleness, or an admission their P50s predicted is overdue
// (see needsRefresh), it recomputes the model and forecasts of every
// ClusterQueue this concerns, with its cohort tree (see recomputeSet), and
// publishes them with the others' results unchanged. It first warm-starts from the reader
// given by [WithWarmStart], if any; without one the event handlers count
// from now. It implements controller-runtime's manager.Runnable.
func (e *Estimator) Start(ctx context.Context) error {
	e.warmStart(ctx)
	refreshschedule.Run(ctx, e.opts.clock, e.opts.RefreshPeriod, e.opts.MaxStaleness, e.opts.RefreshMillicores,
		func(now time.Time) bool {
			return published.NeedsRefresh(e.dirty.Load(), now, e.Results(), e.opts.MaxStaleness)
		},
		func() { e.refresh(ctx, false) })
	return nil
}

// warmStart runs WarmStart with the reader given by WithWarmStart, if any.
// Whatever happens there, an error or a recovered panic, the estimator
// comes out warmed: its statistics then start empty and fill from events,
// rather than every event being dropped for ever.
func (e *Estimator) warmStart(ctx context.Context) {
	defer e.markWarmed()
	if e.opts.warmStartFrom == nil {
		return
	}
	if err := e.WarmStart(ctx, e.opts.warmStartFrom); err != nil {
		e.opts.log.Error(err, "Wait time estimator could not warm start; starting without history")
	}
}

func (e *Estimator) markWarmed() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.state.Early.Warmed() {
		e.state.Replay(nil)
	}
}

// NeedLeaderElection tells controller-runtime to run the refresh loop on
// every replica: the visibility API is served by all of them.
func (e *Estimator) NeedLeaderElection() bool { return false }

// Refresh recomputes every ClusterQueue's model and forecasts and publishes
// them now. Tests and benchmarks may call it directly; the refresh loop
// (Start) recomputes only the ClusterQueues whose inputs changed.
func (e *Estimator) Refresh(ctx context.Context) { e.refresh(ctx, true) }

// refresh publishes new results. Unless all is set it recomputes only the
// ClusterQueues whose inputs changed (see recomputeSet) and reuses the
// published parts of the others, the same values; every part carries the
// time it was computed at.
func (e *Estimator) refresh(ctx context.Context, all bool) {
	defer e.recoverPanic("Refresh")
	e.dirty.Store(false)
	e.refreshHolds.Reset()
	start := e.opts.clock.Now()
	e.resolveParkedArrivals(start)
	var changed map[kueue.ClusterQueueReference]struct{}
	var changedAll bool
	e.forRefresh(func(s *trackerState) { changed, changedAll = s.Changes.Take() })
	done := false
	defer func() {
		if !done {
			// The snapshot failed or a panic cut the refresh short: what
			// changed is still to be recomputed.
			defer e.dirty.Store(true)
			e.forRefresh(func(s *trackerState) { s.Changes.MarkAll() })
		}
	}()
	prev := e.Results()
	cqs, places, recompute, err := e.snapshotToRecompute(ctx, start, prev, changed, all || changedAll)
	if err != nil {
		e.opts.log.V(4).Info("Wait time estimator could not take a snapshot", "err", err)
		return
	}
	e.keepUnchangedCohortMembers(start, cqs, prev, recompute)
	next, outputs := published.Next(start, prev, places, recompute)
	writer := ledger.NewWriter(&e.state.Book, func() func() { return e.lockForRefresh().Unlock })
	// After a panic too: what it took from e.state.Book goes back.
	defer writer.Restore()
	scratch := refreshScratches.Get().(*refreshScratch)
	for name, out := range outputs {
		e.refreshQueue(start, cqs[name], out, writer, scratch)
	}
	refreshScratches.Put(scratch)
	writer.Restore()
	next.Seal()
	e.results.Store(next)
	done = true
	e.relistUnpublished(start, outputs)
	if r := e.opts.reporter; r != nil {
		for _, out := range outputs {
			r.ReportQueueModel(out.Model)
		}
		for name := range prev.Queues() {
			if next.Part(name) == nil {
				r.ClearQueueModel(name)
			}
		}
		r.ReportRefresh(RefreshReport{PublishedAt: next.Oldest(), Duration: e.opts.clock.Since(start), MaxStaleness: e.opts.MaxStaleness,
			LongestLockHold: e.refreshHolds.Longest()})
	}
	e.opts.log.V(4).Info("Wait time estimates refreshed", "clusterQueues", next.Len(), "recomputed", len(outputs),
		"pendingWorkloads", next.PendingCount(), "duration", e.opts.clock.Since(start),
		"longestLockHold", e.refreshHolds.Longest())
}

// relistUnpublished marks again as changed the ClusterQueue of every
// workload seen arriving that the refresh at now recomputed without
// publishing it, so that the next refresh looks again (see
// published.Relist).
func (e *Estimator) relistUnpublished(now time.Time, recomputed map[kueue.ClusterQueueReference]*queueResults) {
	e.forRefresh(func(s *trackerState) {
		pending := func(name workloadName) bool {
			_, ok := s.Book.Pending.Get(name)
			return ok
		}
		if published.Relist(s.Changes, now, recomputed, pending, e.opts.MaxStaleness) {
			e.dirty.Store(true)
		}
	})
}

// placesOf returns the place of every ClusterQueue of a snapshot.
func placesOf(cqs map[kueue.ClusterQueueReference]*schdcache.ClusterQueueSnapshot) map[kueue.ClusterQueueReference]queuePlace {
	places := make(map[kueue.ClusterQueueReference]queuePlace, len(cqs))
	for name, cqs := range cqs {
		places[name] = queuePlace{Root: rootOf(cqs), Generation: cqs.AllocatableResourceGeneration}
	}
	return places
}

// snapshotToRecompute chooses the ClusterQueues a refresh at now recomputes
// (see recomputeSet) and snapshots them. It returns the snapshot's
// ClusterQueues (every one of recompute is there), the places of every
// active ClusterQueue and the recompute set.
//
// From a treeSnapshotSource it lists the ClusterQueues first and then
// snapshots the cohort trees of those to recompute alone. A ClusterQueue
// listed but missing from that snapshot (deleted or deactivated between
// the two) is left out of this refresh, as a whole snapshot would leave it
// out, and marked changed for the next one; one added between them waits
// for the next refresh, which its event brings.
func (e *Estimator) snapshotToRecompute(ctx context.Context, now time.Time, prev *Results, changed map[kueue.ClusterQueueReference]struct{}, all bool) (
	map[kueue.ClusterQueueReference]*schdcache.ClusterQueueSnapshot, map[kueue.ClusterQueueReference]queuePlace, map[kueue.ClusterQueueReference]recomputeCause, error) {
	trees, partial := e.snapshots.(treeSnapshotSource)
	if !partial {
		snap, err := e.snapshots.Snapshot(ctx)
		if err != nil {
			return nil, nil, nil, err
		}
		places := placesOf(snap.ClusterQueues())
		return snap.ClusterQueues(), places, published.RecomputeSet(now, places, prev, changed, all, e.opts.MaxStaleness), nil
	}
	places := make(map[kueue.ClusterQueueReference]queuePlace, prev.Len())
	trees.VisitClusterQueues(func(cq kueue.ClusterQueueReference, root kueue.CohortReference, generation int64) {
		places[cq] = queuePlace{Root: root, Generation: generation}
	})
	recompute := published.RecomputeSet(now, places, prev, changed, all, e.opts.MaxStaleness)
	if len(recompute) == 0 {
		return nil, places, recompute, nil
	}
	snap, err := trees.SnapshotClusterQueueTrees(ctx, sets.KeySet(recompute))
	if err != nil {
		return nil, nil, nil, err
	}
	cqs := snap.ClusterQueues()
	if missing := published.DropMissing(recompute, places, cqs); len(missing) > 0 {
		defer e.dirty.Store(true)
		e.forRefresh(func(s *trackerState) {
			for _, name := range missing {
				s.Changes.Mark(name)
			}
		})
	}
	return cqs, places, recompute, nil
}

// The refresh's choice of what to recompute and what to reuse is
// [published]'s, with Kueue's names.
type (
	queuePlace     = published.Place[kueue.CohortReference]
	recomputeCause = published.Cause
)

const (
	ownInputs    = published.OwnInputs
	cohortInputs = published.CohortInputs
)

// rootOf is the root of the cohort tree of a ClusterQueue, "" for none.
func rootOf(cqs *schdcache.ClusterQueueSnapshot) kueue.CohortReference {
	if !cqs.HasParent() {
		return ""
	}
	return cqs.Parent().Root().Name
}

// refreshQueue converts one ClusterQueue's state to the engine's terms,
// rolls it, publishes its model and forecasts into out, and gives the ledger
// the first estimate of each workload.
func (e *Estimator) refreshQueue(now time.Time, cqs *schdcache.ClusterQueueSnapshot, out *queueResults, writer *ledgerWriter, scratch *refreshScratch) {
	defer e.recoverPanic("refreshQueue")
	pending := e.queues.PendingWorkloadsInfo(cqs.Name)
	out.Reserve(len(pending))
	names, pendingIn := scratch.Take(len(pending))
	defer scratch.drop()

	classes := convert.NewClasses()
	unplaceable := engine.UnplaceableIndex[workload.Reference]{Verdicts: e.topology.Load()}
	examined := 0
	inCohort := cqs.HasParent()
	for i, info := range pending {
		names[i] = nameOf(info.Obj)
		pendingIn = append(pendingIn, engine.Pending{ID: info.Obj.Name, Class: classes.Of(convert.DemandOf(info)),
			MaxExecutionSeconds: convert.MaxExecutionSeconds(info.Obj), Priority: convert.PriorityOf(info.Obj),
			Unplaceable: unplaceableOf(&unplaceable, info.Obj)})
		if scratch.Examines(examined, inCohort) && !convert.RefusedQuota(info.Obj) {
			examined++
			if scratch.nominal.Fits(cqs, info) {
				scratch.Untried = append(scratch.Untried, engine.Candidate{Index: i, Created: info.Obj.CreationTimestamp.Time})
			}
		}
	}
	// A copy of what the roll needs of the state (see tracker.State.Inputs).
	var in queueInputs
	e.forRefresh(func(s *trackerState) {
		in = s.Inputs(now, cqs.Name, maps.Keys(cqs.Workloads), len(cqs.Workloads), names, scratch.Untried, writer, e.opts.PriorMeanService.Seconds(), e.rng)
	})
	for _, c := range scratch.Untried {
		pendingIn[c.Index].Untried, pendingIn[c.Index].WaitedSeconds = c.Untried, c.Waited
	}
	var localQueues localQueueIndex
	rollsAFS := e.rollsAdmissionFairSharing(in.Spec)
	if rollsAFS {
		for i, info := range pending {
			pendingIn[i].LocalQueue = localQueues.of(info.Obj)
		}
	}
	view := in.View
	cohort := cohortViewOf(cqs, in.Spec, now)
	capModel := cohort.Capacity
	queue := engine.Queue{
		Capacity:           capModel,
		Running:            make([]engine.Running, 0, len(cqs.Workloads)),
		Pending:            pendingIn,
		Policy:             convert.PolicyOf(in.Spec.strategy),
		WithinClusterQueue: convert.PreemptionOf(in.Spec.withinClusterQueue),
		CyclePeriodSeconds: in.CyclePeriod,
		Stats:              view.Stats,
	}
	for _, info := range cqs.Workloads {
		r := engine.Running{Class: classes.Of(convert.DemandOf(info)), Usage: scratch.runningUsages().Of(info),
			MaxExecutionSeconds: convert.MaxExecutionSeconds(info.Obj), Priority: convert.PriorityOf(info.Obj)}
		at, ok := in.Admitted[workload.Key(info.Obj)]
		if !ok {
			at, ok = convert.AdmissionTime(info.Obj)
		}
		if ok {
			r.AgeSeconds = max(now.Sub(at).Seconds(), 0)
		}
		if rollsAFS {
			r.LocalQueue = localQueues.of(info.Obj)
		}
		queue.Running = append(queue.Running, r)
	}
	if rollsAFS {
		queue.AdmissionFairSharing = e.admissionFairSharingOf(now, localQueues.keys)
	}
	queue.Classes, queue.Unplaceable = classes.Shapes, unplaceable.Reasons.List
	queue.Lent, queue.LentHolders = cohort.Lent, cohort.Holders
	if cohort.Reclaim != cohortview.NoReclaim && len(cohort.Holders) > 0 {
		top := int32(math.MinInt32)
		for _, p := range queue.Pending {
			top = max(top, p.Priority)
		}
		var delays cohortview.Delays[kueue.ClusterQueueReference]
		e.forRefresh(func(s *trackerState) { delays = s.Stats.ReclaimDelaysOf(cqs.Name, cohort.Sources) })
		queue.LentHolders = cohort.ReclaimedHolders(top, delays)
	}

	rolled, err := e.engine.Roll(queue, in.Seed)
	defer rolled.Release()
	// The Quotable workloads pending (queuestats.Queue.QuotablePending);
	// with no roll to tell, all of them count.
	quotable := len(pending) - rolled.UnfeasibleWorkloads
	if err != nil {
		quotable = len(pending)
	}
	e.forRefresh(func(s *trackerState) { s.Stats.Of(cqs.Name).QuotablePending = quotable })
	if err != nil {
		e.opts.log.V(4).Info("Cannot roll the ClusterQueue", "clusterQueue", cqs.Name, "err", err)
		return
	}
	if rolled.ModelErr != nil {
		e.opts.log.V(4).Info("Cannot compute all of the queue model", "clusterQueue", cqs.Name, "err", rolled.ModelErr)
	}
	if rolled.ForecastErr != nil {
		e.opts.log.V(4).Info("Wait time forecast failed", "clusterQueue", cqs.Name, "err", rolled.ForecastErr)
	}
	model := queuestats.ModelOf(cqs.Name, now, view, &rolled, len(pending))
	use := e.featureUse(cqs, in.Spec.admissionScope)
	use.AdmissionFairSharingRolled = rollsAFS
	model.UnmodelledOrdering, model.Features = use.UnmodelledOrdering(), estimates.Features(use)
	published.Fill(out, model, &rolled, view.Calibration, names, writer)
	if cqs.HasParent() {
		out.Cohort = cohort
	}
}

// refreshScratch is the engine.Scratch of refreshQueue, with what
// converting Kueue's workloads needs beside it.
type refreshScratch struct {
	engine.Scratch[workloadName]
	nominal convert.NominalFit
	// usages hands out the running workloads' usages of the ClusterQueue
	// being refreshed; made at its first use (runningUsages).
	usages *convert.RunningUsages
}

// runningUsages returns the scratch's RunningUsages, making it.
func (s *refreshScratch) runningUsages() *convert.RunningUsages {
	if s.usages == nil {
		s.usages = convert.NewRunningUsages()
	}
	return s.usages
}

// refreshScratches recycles refreshScratch values between refreshes (a
// refresh takes one for all its ClusterQueues).
var refreshScratches = sync.Pool{New: func() any { return new(refreshScratch) }}

// drop drops what the last take returned (see engine.Scratch.Drop) and
// the running workloads' usages handed out.
func (s *refreshScratch) drop() {
	s.Scratch.Drop()
	if s.usages != nil {
		s.usages.Reset()
	}
}

// classifyScratch is what Estimator.Classify converts a snapshot and a
// workload into, kept in classifyScratches between calls: the scheduler
// classifies every head it could not admit in every cycle, and converting
// into fresh values allocated about ten objects a head.
type classifyScratch struct {
	capacity  capacity.ClusterQueue
	demand    capacity.Workload
	converter *convert.Converter
}

var classifyScratches = sync.Pool{New: func() any { return &classifyScratch{converter: convert.NewConverter()} }}

// unplaceableOf is a pending workload's engine.Pending.Unplaceable from
// the topology verdicts the refresh of its ClusterQueue loaded (see
// engine.UnplaceableIndex); it builds the workload's key only when some
// verdict is held.
func unplaceableOf(u *engine.UnplaceableIndex[workload.Reference], wl *kueue.Workload) uint16 {
	if !u.Any() {
		return 0
	}
	return u.Of(workload.Key(wl))
}

// rollsAdmissionFairSharing tells whether the roll of a ClusterQueue with
// spec orders it as Kueue's admission fair sharing does: the manager's
// admission fair sharing is on with its usage given
// (WithAdmissionFairSharingUsage), the queue manager holds the LocalQueues'
// usage (qcache.Manager.AfsUsageLedger) and the ClusterQueue's
// admissionScope is UsageBasedAdmissionFairSharing.
func (e *Estimator) rollsAdmissionFairSharing(spec queueSpec) bool {
	return e.opts.AdmissionFairSharing && e.opts.AdmissionFairSharingUsage && e.afsLedger != nil && spec.admissionScope
}

// localQueueIndex numbers the LocalQueues the workloads of one refreshed
// ClusterQueue name, from 1, in the order first seen (see
// forecast.AdmissionFairSharing.LocalQueues); its zero value is empty.
type localQueueIndex struct {
	index map[utilqueue.LocalQueueReference]int32
	keys  []utilqueue.LocalQueueReference
}

// of is the number of wl's LocalQueue, numbering it if new.
func (x *localQueueIndex) of(wl *kueue.Workload) int32 {
	key := utilqueue.KeyFromWorkload(wl)
	if i, ok := x.index[key]; ok {
		return i
	}
	if x.index == nil {
		x.index = make(map[utilqueue.LocalQueueReference]int32)
	}
	x.keys = append(x.keys, key)
	x.index[key] = int32(len(x.keys))
	return int32(len(x.keys))
}

// admissionFairSharingOf is the admission fair sharing state, at now, of
// the LocalQueues keys (numbered from 1 in that order): each one's
// weighted consumed resources and pending entry penalties and the time
// since they were updated, from Kueue's ledger, and its weight, from the
// LocalQueue informer (1 for a LocalQueue not seen, as Kueue counts a
// missing one).
func (e *Estimator) admissionFairSharingOf(now time.Time, keys []utilqueue.LocalQueueReference) *forecast.AdmissionFairSharing {
	a := &forecast.AdmissionFairSharing{
		HalfLifeSeconds:         e.opts.AdmissionFairSharingHalfLife.Seconds(),
		SamplingIntervalSeconds: e.opts.AdmissionFairSharingSamplingInterval.Seconds(),
		ResourceWeights:         e.opts.AdmissionFairSharingResourceWeights,
		LocalQueues:             make([]forecast.LocalQueueUsage, len(keys)),
	}
	e.forRefresh(func(*trackerState) {
		for i, key := range keys {
			w, ok := e.localQueueWeights[key]
			if !ok {
				w = 1
			}
			a.LocalQueues[i].Weight = w
		}
	})
	for i, key := range keys {
		if entry, ok := e.afsLedger.Get(key); ok {
			a.LocalQueues[i].Consumed = convert.WeightedUsage(entry.Resources, entry.PendingPenalty(), a.ResourceWeights)
			a.LocalQueues[i].SinceUpdateSeconds = max(now.Sub(entry.LastUpdate).Seconds(), 0)
		}
	}
	return a
}
