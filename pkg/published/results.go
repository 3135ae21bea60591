package published

import (
	"iter"
	"maps"
	"slices"
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
	"github.com/kueue-waittime/kueue-waittime/pkg/estimates"
	"github.com/kueue-waittime/kueue-waittime/pkg/ledger"
	"github.com/kueue-waittime/kueue-waittime/pkg/positions"
)

// Results is one published set of estimates: a [Part] per ClusterQueue,
// of ClusterQueues named Q, in cohort trees whose roots are named R, of
// workloads whose keys ("namespace/name") are K, with cohort views C. It
// is immutable once sealed; a nil *Results is valid and empty.
//
// Each ClusterQueue's part is a value of its own, which the next Results
// reuses, the very same value, when nothing that ClusterQueue's results
// depend on changed (see [Next]).
type Results[Q, R, K ~string, C any] struct {
	at time.Time
	// oldest is the earliest At of its ClusterQueues' models (at when it has
	// none): the age of every estimate in it is at most now − oldest.
	oldest time.Time
	// parts holds each ClusterQueue's part at the slot slots gives it; a
	// ClusterQueue keeps its slot from one Results to the next. A nil entry
	// is a free slot.
	parts   []*Part[Q, R, C]
	slots   map[Q]uint32
	pending int
	// firstDue is the earliest admission instant a P50 of these results
	// predicts (the estimate's time plus its P50); zero if none does. Once
	// it has passed with the workload still pending, the results are
	// stale even if nothing was observed: see NeedsRefresh.
	firstDue time.Time
}

// Part is what one refresh of one ClusterQueue published: its model and
// its pending workloads' estimates. It is immutable once published.
type Part[Q, R ~string, C any] struct {
	// Model is the ClusterQueue's queue model; HasModel is false for a
	// part that holds only estimates (Build's callers may make such parts).
	Model    estimates.QueueModel[Q]
	HasModel bool
	// FirstDue is the earliest admission instant one of its P50s predicts
	// (zero if none does); Add keeps it.
	FirstDue time.Time
	// Root is the root of the cohort tree the ClusterQueue was in ("" for
	// none) and Generation its AllocatableResourceGeneration in the
	// snapshot the results were computed from: a change of either is a
	// change of its inputs that no event reports.
	Root       R
	Generation int64
	// WhatIf is the state the forecasts were rolled from, kept for what-if
	// forecasts; nil when the part was not rolled.
	WhatIf *engine.Scene
	// Cohort is what the roll took from the ClusterQueue's cohort tree
	// (zero without a cohort), for the caller to tell whether a later
	// refresh may keep the part.
	Cohort C

	estimates []estimates.Stored[Q]
	// index finds each pending workload's estimate in estimates by the
	// workload's namespace and name: a table of positions of its own
	// (see positions.Table), reused with the part, is what a refresh that
	// recomputes a few ClusterQueues leaves alone (an index of every
	// pending workload would be copied whole). names holds, by position,
	// the workload's name, the caller's own string: the index holds no
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
}

// NewPart returns an empty part for about n pending workloads.
func NewPart[Q, R ~string, C any](n int) *Part[Q, R, C] {
	q := &Part[Q, R, C]{namespaceIndex: map[string]uint32{}}
	q.size(n)
	return q
}

// Reserve makes room in an empty part for n pending workloads: sized by
// the last refresh's count instead, the index of 10⁵ positions would be
// built twice over whenever one more workload arrived.
func (q *Part[Q, R, C]) Reserve(n int) {
	if len(q.estimates) > 0 || cap(q.estimates) >= n {
		return
	}
	q.size(n)
}

// size allocates an empty part's slices and index for n workloads.
func (q *Part[Q, R, C]) size(n int) {
	q.estimates = make([]estimates.Stored[Q], 0, n)
	q.names = make([]string, 0, n)
	q.namespaceOf = make([]uint32, 0, n)
	q.index.Reset(n)
}

// Add records the estimate of a pending workload (each name once) at the
// next position and, for an Unfeasible one, its reason.
func (q *Part[Q, R, C]) Add(name positions.Name, e estimates.Stored[Q], reason string) {
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
	if due, ok := e.Due(); ok && (q.FirstDue.IsZero() || due.Before(q.FirstDue)) {
		q.FirstDue = due
	}
	if reason != "" {
		if q.reasons == nil {
			q.reasons = make(map[int32]string)
		}
		q.reasons[i] = reason
	}
}

// Estimate returns the estimate of the pending workload named name, if the
// part has it.
func (q *Part[Q, R, C]) Estimate(name positions.Name) (estimates.WorkloadEstimate[Q], bool) {
	if q == nil {
		return estimates.WorkloadEstimate[Q]{}, false
	}
	i, ok := q.Position(name)
	if !ok {
		return estimates.WorkloadEstimate[Q]{}, false
	}
	return q.estimates[i].Estimate(q.reasons[i]), true
}

// Position returns where the estimate of the workload named name is.
func (q *Part[Q, R, C]) Position(name positions.Name) (int32, bool) {
	return positions.Find(&q.index, q, name)
}

// NameAt is the name of the workload at position i.
func (q *Part[Q, R, C]) NameAt(i int32) positions.Name {
	return positions.Name{Namespace: q.namespaces[q.namespaceOf[i]], Name: q.names[i]}
}

// AllNames yields the name of every workload the part holds an estimate
// of, in the order they were added.
func (q *Part[Q, R, C]) AllNames() iter.Seq[positions.Name] {
	return func(yield func(positions.Name) bool) {
		for i := range q.names {
			if !yield(q.NameAt(int32(i))) {
				return
			}
		}
	}
}

// Build returns sealed results at at holding parts, in slots by the order
// of their ClusterQueues' names.
func Build[Q, R, K ~string, C any](at time.Time, parts map[Q]*Part[Q, R, C]) *Results[Q, R, K, C] {
	r := &Results[Q, R, K, C]{at: at, slots: make(map[Q]uint32, len(parts))}
	for _, cq := range slices.Sorted(maps.Keys(parts)) {
		r.slots[cq] = uint32(len(r.parts))
		r.parts = append(r.parts, parts[cq])
	}
	r.Seal()
	return r
}

// Seal computes what Results derives from its parts: the pending count,
// the oldest model and the first due admission. Call it once every part
// is complete, before the results are published.
func (r *Results[Q, R, K, C]) Seal() {
	r.pending, r.firstDue, r.oldest = 0, time.Time{}, r.at
	for _, q := range r.parts {
		if q == nil {
			continue
		}
		r.pending += len(q.estimates)
		if !q.FirstDue.IsZero() && (r.firstDue.IsZero() || q.FirstDue.Before(r.firstDue)) {
			r.firstDue = q.FirstDue
		}
		if !q.Model.At.IsZero() && q.Model.At.Before(r.oldest) {
			r.oldest = q.Model.At
		}
	}
}

// Part returns the part of a ClusterQueue, nil if none.
func (r *Results[Q, R, K, C]) Part(cq Q) *Part[Q, R, C] {
	if r == nil {
		return nil
	}
	slot, ok := r.slots[cq]
	if !ok {
		return nil
	}
	return r.parts[slot]
}

// ClusterQueues yields the name of every ClusterQueue with a part, in no
// particular order.
func (r *Results[Q, R, K, C]) ClusterQueues() iter.Seq[Q] {
	return func(yield func(Q) bool) {
		if r == nil {
			return
		}
		for cq := range r.slots {
			if !yield(cq) {
				return
			}
		}
	}
}

// Len is the number of ClusterQueues with a part.
func (r *Results[Q, R, K, C]) Len() int {
	if r == nil {
		return 0
	}
	return len(r.slots)
}

// At is when the results were computed (the zero time for none).
func (r *Results[Q, R, K, C]) At() time.Time {
	if r == nil {
		return time.Time{}
	}
	return r.at
}

// Oldest is the earliest time a model of the results was computed at (At
// when they hold none): every estimate in them is at most now − Oldest
// old.
func (r *Results[Q, R, K, C]) Oldest() time.Time {
	if r == nil {
		return time.Time{}
	}
	return r.oldest
}

// WorkloadIn returns the estimate of a pending workload of a ClusterQueue:
// a lookup in that ClusterQueue's part. The visibility endpoints, which
// list a ClusterQueue's pending workloads, read estimates through it.
func (r *Results[Q, R, K, C]) WorkloadIn(cq Q, key K) (estimates.WorkloadEstimate[Q], bool) {
	return r.Part(cq).Estimate(positions.NameOfKey(key))
}

// Workload returns the estimate of a pending workload of any ClusterQueue.
// It looks in every ClusterQueue's part, O(ClusterQueues): a reader that
// knows the workload's ClusterQueue uses WorkloadIn.
func (r *Results[Q, R, K, C]) Workload(key K) (estimates.WorkloadEstimate[Q], bool) {
	if r == nil {
		return estimates.WorkloadEstimate[Q]{}, false
	}
	name := positions.NameOfKey(key)
	for _, q := range r.parts {
		if est, ok := q.Estimate(name); ok {
			return est, true
		}
	}
	return estimates.WorkloadEstimate[Q]{}, false
}

// PendingCount is how many pending workloads have an estimate.
func (r *Results[Q, R, K, C]) PendingCount() int {
	if r == nil {
		return 0
	}
	return r.pending
}

// Queue returns the model of a ClusterQueue.
func (r *Results[Q, R, K, C]) Queue(cq Q) (estimates.QueueModel[Q], bool) {
	q := r.Part(cq)
	if q == nil || !q.HasModel {
		return estimates.QueueModel[Q]{}, false
	}
	return q.Model, true
}

// Queues iterates over every ClusterQueue's model, in no particular order.
func (r *Results[Q, R, K, C]) Queues() iter.Seq2[Q, estimates.QueueModel[Q]] {
	return func(yield func(Q, estimates.QueueModel[Q]) bool) {
		if r == nil {
			return
		}
		for cq, slot := range r.slots {
			q := r.parts[slot]
			if !q.HasModel {
				continue
			}
			if !yield(cq, q.Model) {
				return
			}
		}
	}
}

// FromEstimates returns sealed results at at holding the given estimates
// (by workload key, "namespace/name") and models, as a refresh publishes
// them; parts carry no cohort view. As in published results, waits are
// kept to the millisecond, an estimate with a wait is admitted at
// EstimatedAt + ExpectedWait, its Admissibility is Unfeasible or else
// Quotable, and a Method other than the engine's reads back as
// MethodNone. The estimates of one ClusterQueue and time share a stamp.
func FromEstimates[Q, R, K ~string, C any](at time.Time, workloads map[K]estimates.WorkloadEstimate[Q], queues map[Q]estimates.QueueModel[Q]) *Results[Q, R, K, C] {
	parts := map[Q]*Part[Q, R, C]{}
	part := func(cq Q) *Part[Q, R, C] {
		q, ok := parts[cq]
		if !ok {
			q = NewPart[Q, R, C](0)
			parts[cq] = q
		}
		return q
	}
	for cq, m := range queues {
		q := part(cq)
		q.Model, q.HasModel = m, true
	}
	stamps := map[estimates.Stamp[Q]]*estimates.Stamp[Q]{}
	for k, e := range workloads {
		key := estimates.Stamp[Q]{ClusterQueue: e.ClusterQueue, At: e.EstimatedAt}
		stamp, ok := stamps[key]
		if !ok {
			stamp = &key
			stamps[key] = stamp
		}
		part(e.ClusterQueue).Add(positions.NameOfKey(k), estimates.Store(e, stamp), e.Reason)
	}
	return Build[Q, R, K](at, parts)
}

// Fill publishes into the empty part q the roll of its ClusterQueue at
// model.At: model, the roll's scene for what-if forecasts, and the
// estimate of each pending workload, names being their names in the
// order of rolled.Estimates. It gives each Quotable workload that w wants
// its ledger line, under one stamp of the roll (see ledger.StampOf; cal is
// the calibration the roll published with).
func Fill[Q, R, W ~string, C any](q *Part[Q, R, C], model estimates.QueueModel[Q], rolled *engine.Rolled, cal engine.Calibration,
	names []positions.Name, w *ledger.Writer[W, Q]) {
	q.Model, q.HasModel = model, true
	q.WhatIf = rolled.Scene
	stamp := &estimates.Stamp[Q]{ClusterQueue: model.ClusterQueue, At: model.At}
	ledgerStamp := ledger.StampOf(model.ClusterQueue, model.At, rolled.Method, cal, &model.APriori, model.EMAWait, model.HasEMA)
	for i, name := range names {
		r := rolled.Estimates[i]
		est := estimates.EstimateOf(model.ClusterQueue, model.At, r)
		q.Add(name, estimates.Store(est, stamp), est.Reason)
		if est.Admissibility == capacity.Quotable && w.Wants(name) {
			w.Add(name, ledger.NewLine(ledgerStamp, est.HasWait, r.Raw.ExpectedWaitSeconds, r.Raw.P50Seconds, r.Raw.P90Seconds))
		}
	}
}
