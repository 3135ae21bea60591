package estimator

import (
	"iter"
	"time"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
	"github.com/kueue-waittime/kueue-waittime/pkg/estimates"
	"github.com/kueue-waittime/kueue-waittime/pkg/positions"
)

// Admissibility is the paper's partition (Def. 3) of a pending workload:
// [capacity.Admissibility], the one type of it. A published estimate is
// Quotable or Unfeasible, never Invalid.
type Admissibility = capacity.Admissibility

// The partition's two verdicts, as [capacity.Admissibility] defines them.
const (
	// Quotable: for every resource group the workload's demand fits some
	// flavor's potential capacity (nominal + maximum borrowable); it waits a
	// finite time while the queue is stable.
	Quotable = capacity.Quotable
	// Unfeasible: it can never be admitted without reconfiguration.
	Unfeasible = capacity.Unfeasible
)

// Method says how a [WorkloadEstimate]'s wait was computed: the engine's
// one enumeration of methods.
type Method = engine.Method

// The methods, as [engine.Method] defines them.
const (
	MethodForecast  = engine.MethodForecast
	MethodAPriori   = engine.MethodAPriori
	MethodImmediate = engine.MethodImmediate
	MethodNone      = engine.MethodNone
)

// LoadModel and PriorityModel are the engine's a-priori figures (see
// [QueueModel]).
type (
	LoadModel     = engine.LoadModel
	PriorityModel = engine.PriorityModel
)

// What the estimator publishes is [estimates]'s, with Kueue's names of
// ClusterQueues.
type (
	// WorkloadEstimate is what the estimator publishes for one pending
	// workload (see [estimates.WorkloadEstimate]).
	WorkloadEstimate = estimates.WorkloadEstimate[kueue.ClusterQueueReference]
	// QueueModel is the a-priori queueing model of one ClusterQueue with
	// the statistics it was computed from (see [estimates.QueueModel]).
	QueueModel = estimates.QueueModel[kueue.ClusterQueueReference]
	// RefreshReport describes one refresh that published results (see
	// [estimates.RefreshReport]).
	RefreshReport = estimates.RefreshReport
	// Ordering is an admission order of the manager's.
	Ordering = estimates.Ordering

	storedEstimate = estimates.Stored[kueue.ClusterQueueReference]
	estimateStamp  = estimates.Stamp[kueue.ClusterQueueReference]
)

// The orderings, as [estimates.Ordering] defines them.
const (
	OrderingFairSharing          = estimates.OrderingFairSharing
	OrderingAdmissionFairSharing = estimates.OrderingAdmissionFairSharing
)

// Results is one published set of estimates. It is immutable; a nil
// *Results is valid and empty.
//
// Each ClusterQueue's part (its model and the estimates of its pending
// workloads) is a queueResults of its own, which the next Results reuses,
// the very same value, when nothing that ClusterQueue's results depend on
// changed (see Estimator.refresh).
type Results struct {
	at time.Time
	// oldest is the earliest At of its ClusterQueues' models (at when it has
	// none): the age of every estimate in it is at most now − oldest.
	oldest time.Time
	// queues holds each ClusterQueue's part at the slot slots gives it; a
	// ClusterQueue keeps its slot from one Results to the next. A nil entry
	// is a free slot.
	queues  []*queueResults
	slots   map[kueue.ClusterQueueReference]uint32
	pending int
	// firstDue is the earliest admission instant a P50 of these results
	// predicts (the estimate's time plus its P50); zero if none does. Once
	// it has passed with the workload still pending, the results are
	// stale even if nothing was observed: see needsRefresh.
	firstDue time.Time
}

// queueResults is what one refresh of one ClusterQueue published: its model
// and its pending workloads' estimates. It is immutable once published.
type queueResults struct {
	model QueueModel
	// hasModel is false for a part that holds only estimates (NewResults
	// builds such parts).
	hasModel  bool
	estimates []storedEstimate
	// index finds each pending workload's estimate in estimates by the
	// workload's namespace and name: a table of positions of its own
	// (see positions.Table), reused with the part, is what a refresh that
	// recomputes a few ClusterQueues leaves alone (an index of every
	// pending workload would be copied whole). names holds, by position,
	// the workload's name, the object's own string: the index holds no
	// string built for it.
	index positions.Table
	names []string
	// namespaceOf holds, by position, the index of the workload's
	// namespace in namespaces (a ClusterQueue's pending workloads come
	// from few namespaces); namespaceIndex finds it while adding.
	namespaceOf    []uint32
	namespaces     []string
	namespaceIndex map[string]uint32
	// reasons holds the reason of each Unfeasible estimate, by position.
	reasons map[int32]string
	// firstDue is the earliest admission instant one of its P50s predicts
	// (zero if none does).
	firstDue time.Time
	// root is the root of the cohort tree the ClusterQueue was in ("" for
	// none) and generation its AllocatableResourceGeneration in the
	// snapshot the results were computed from: a change of either is a
	// change of its inputs that no event reports.
	root       kueue.CohortReference
	generation int64
	// whatIf is the state the forecasts were rolled from, kept for what-if
	// forecasts (see Estimator.WhatIf); nil for parts NewResults builds.
	whatIf *engine.Scene
	// cohort is what the roll took from the ClusterQueue's cohort tree
	// (zero without a cohort), for keepUnchangedCohortMembers.
	cohort cohortView
}

// newQueueResults returns an empty part for about n pending workloads.
func newQueueResults(n int) *queueResults {
	q := &queueResults{namespaceIndex: map[string]uint32{}}
	q.size(n)
	return q
}

// reserve makes room in an empty part for n pending workloads: sized by
// the last refresh's count instead, the index of 10⁵ positions would be
// built twice over whenever one more workload arrived.
func (q *queueResults) reserve(n int) {
	if len(q.estimates) > 0 || cap(q.estimates) >= n {
		return
	}
	q.size(n)
}

// size allocates an empty part's slices and index for n workloads.
func (q *queueResults) size(n int) {
	q.estimates = make([]storedEstimate, 0, n)
	q.names = make([]string, 0, n)
	q.namespaceOf = make([]uint32, 0, n)
	q.index.Reset(n)
}

// add records the estimate of a pending workload (each key once) at the
// next position and, for an Unfeasible one, its reason.
func (q *queueResults) add(name workloadName, e storedEstimate, reason string) {
	i := int32(len(q.estimates))
	ns, ok := q.namespaceIndex[name.Namespace]
	if !ok {
		ns = uint32(len(q.namespaces))
		q.namespaces = append(q.namespaces, name.Namespace)
		q.namespaceIndex[name.Namespace] = ns
	}
	q.namespaceOf = append(q.namespaceOf, ns)
	q.names = append(q.names, name.Name)
	positions.Insert(&q.index, q, i)
	q.estimates = append(q.estimates, e)
	if due, ok := e.Due(); ok && (q.firstDue.IsZero() || due.Before(q.firstDue)) {
		q.firstDue = due
	}
	if reason != "" {
		if q.reasons == nil {
			q.reasons = make(map[int32]string)
		}
		q.reasons[i] = reason
	}
}

// estimate returns the estimate of a pending workload, if the part has it.
func (q *queueResults) estimate(key workload.Reference) (WorkloadEstimate, bool) {
	if q == nil {
		return WorkloadEstimate{}, false
	}
	i, ok := q.position(nameFromReference(key))
	if !ok {
		return WorkloadEstimate{}, false
	}
	return q.estimates[i].Estimate(q.reasons[i]), true
}

// position returns where the estimate of the workload named name is.
func (q *queueResults) position(name workloadName) (int32, bool) {
	i, ok := positions.Find(&q.index, q, name)
	return i, ok
}

// NameAt is the name of the workload at position i.
func (q *queueResults) NameAt(i int32) workloadName {
	return workloadName{Namespace: q.namespaces[q.namespaceOf[i]], Name: q.names[i]}
}

// allNames yields the name of every workload the part holds an estimate of,
// in the order they were added.
func (q *queueResults) allNames() iter.Seq[workloadName] {
	return func(yield func(workloadName) bool) {
		for i := range q.names {
			if !yield(q.NameAt(int32(i))) {
				return
			}
		}
	}
}

// newResults returns results holding nothing, at at.
func newResults(at time.Time) *Results {
	return &Results{at: at, oldest: at, slots: map[kueue.ClusterQueueReference]uint32{}}
}

// seal computes what Results derives from its parts: the pending count,
// the oldest model and the first due admission.
func (r *Results) seal() {
	r.pending, r.firstDue, r.oldest = 0, time.Time{}, r.at
	for _, q := range r.queues {
		if q == nil {
			continue
		}
		r.pending += len(q.estimates)
		if !q.firstDue.IsZero() && (r.firstDue.IsZero() || q.firstDue.Before(r.firstDue)) {
			r.firstDue = q.firstDue
		}
		if !q.model.At.IsZero() && q.model.At.Before(r.oldest) {
			r.oldest = q.model.At
		}
	}
}

// part returns the part of a ClusterQueue, nil if none.
func (r *Results) part(cq kueue.ClusterQueueReference) *queueResults {
	if r == nil {
		return nil
	}
	slot, ok := r.slots[cq]
	if !ok {
		return nil
	}
	return r.queues[slot]
}

// NewResults returns results holding the given estimates and models, as
// the estimator publishes them. The estimator builds its own; this is for
// the readers' tests (the visibility storage and metrics). As in published
// results, waits are kept to the millisecond, an estimate with a wait is
// admitted at EstimatedAt +
// ExpectedWait, whatever its EstimatedAdmission says, its Admissibility is
// Unfeasible or else Quotable, and a Method other than the constants reads
// back as MethodNone.
func NewResults(at time.Time, workloads map[workload.Reference]WorkloadEstimate, queues map[kueue.ClusterQueueReference]QueueModel) *Results {
	r := newResults(at)
	part := func(cq kueue.ClusterQueueReference) *queueResults {
		slot, ok := r.slots[cq]
		if !ok {
			slot = uint32(len(r.queues))
			r.slots[cq] = slot
			r.queues = append(r.queues, newQueueResults(0))
		}
		return r.queues[slot]
	}
	for cq, m := range queues {
		q := part(cq)
		q.model, q.hasModel = m, true
	}
	stamps := map[estimateStamp]*estimateStamp{}
	for k, e := range workloads {
		key := estimateStamp{ClusterQueue: e.ClusterQueue, At: e.EstimatedAt}
		stamp, ok := stamps[key]
		if !ok {
			stamp = &key
			stamps[key] = stamp
		}
		part(e.ClusterQueue).add(nameFromReference(k), estimates.Store(e, stamp), e.Reason)
	}
	r.seal()
	return r
}

// At is when the results were computed (the zero time for none).
func (r *Results) At() time.Time {
	if r == nil {
		return time.Time{}
	}
	return r.at
}

// WorkloadIn returns the estimate of a pending workload of a ClusterQueue:
// a lookup in that ClusterQueue's part. The visibility endpoints, which
// list a ClusterQueue's pending workloads, read estimates through it.
func (r *Results) WorkloadIn(cq kueue.ClusterQueueReference, key workload.Reference) (WorkloadEstimate, bool) {
	return r.part(cq).estimate(key)
}

// Workload returns the estimate of a pending workload of any ClusterQueue.
// It looks in every ClusterQueue's part, O(ClusterQueues): a reader that
// knows the workload's ClusterQueue uses WorkloadIn.
func (r *Results) Workload(key workload.Reference) (WorkloadEstimate, bool) {
	if r == nil {
		return WorkloadEstimate{}, false
	}
	for _, q := range r.queues {
		if est, ok := q.estimate(key); ok {
			return est, true
		}
	}
	return WorkloadEstimate{}, false
}

// pendingCount is how many pending workloads have an estimate.
func (r *Results) pendingCount() int {
	if r == nil {
		return 0
	}
	return r.pending
}

// Queue returns the model of a ClusterQueue.
func (r *Results) Queue(cq kueue.ClusterQueueReference) (QueueModel, bool) {
	q := r.part(cq)
	if q == nil || !q.hasModel {
		return QueueModel{}, false
	}
	return q.model, true
}

// Queues iterates over every ClusterQueue's model, in no particular order.
func (r *Results) Queues() iter.Seq2[kueue.ClusterQueueReference, QueueModel] {
	return func(yield func(kueue.ClusterQueueReference, QueueModel) bool) {
		if r == nil {
			return
		}
		for cq, slot := range r.slots {
			q := r.queues[slot]
			if !q.hasModel {
				continue
			}
			if !yield(cq, q.model) {
				return
			}
		}
	}
}

// MetricsReporter receives what the estimator publishes. The patched Kueue
// implements it with its metrics package; it must not block (the scheduler
// goroutine calls ReportScore and ReportUnscored).
type MetricsReporter interface {
	// ReportQueueModel is called for every ClusterQueue a refresh
	// recomputed, after it published.
	ReportQueueModel(m QueueModel)
	// ClearQueueModel is called once for a ClusterQueue that disappeared.
	ClearQueueModel(cq kueue.ClusterQueueReference)
	// ReportScore is called when a workload with a line in the prediction
	// ledger is admitted, with every predictor's score.
	ReportScore(s Score)
	// ReportUnscored is called for a workload the ledger could not score.
	ReportUnscored(cq kueue.ClusterQueueReference, reason UnscoredReason)
	// ReportRefresh is called after every refresh that published results,
	// after the ClusterQueues' models were reported.
	ReportRefresh(r RefreshReport)
}

// UnscoredReason says why a workload left the ledger unscored.
type UnscoredReason string

const (
	// AdmittedBeforeEstimate: admitted before any estimate was published
	// for it (it waited less than a refresh period, or the estimator had
	// not seen it arrive).
	AdmittedBeforeEstimate UnscoredReason = "AdmittedBeforeEstimate"
	// DeletedBeforeAdmission: deleted while pending, after an estimate was
	// published for it.
	DeletedBeforeAdmission UnscoredReason = "DeletedBeforeAdmission"
)

// pendingCount is how many pending workloads the part has estimates for.
func (q *queueResults) pendingCount() int {
	if q == nil {
		return 0
	}
	return len(q.estimates)
}

// slotCount is the number of slots (nil: none).
func (r *Results) slotCount() int {
	if r == nil {
		return 0
	}
	return len(r.queues)
}
