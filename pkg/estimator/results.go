package estimator

import (
	"iter"
	"math"
	"time"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
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

// WorkloadEstimate is what the estimator publishes for one pending workload.
type WorkloadEstimate struct {
	ClusterQueue  kueue.ClusterQueueReference
	Admissibility Admissibility
	// Reason says why an Unfeasible workload can never be admitted, e.g.
	// "flavor default: cpu 20 > potential 2 (nominal 2, borrowable 0)".
	Reason string
	Method Method
	// HasWait is false for MethodNone; the wait fields are then zero.
	HasWait bool
	// ExpectedWait, P50 and P90 are the remaining wait from EstimatedAt.
	ExpectedWait time.Duration
	P50          time.Duration
	P90          time.Duration
	// EstimatedAdmission is EstimatedAt + ExpectedWait.
	EstimatedAdmission time.Time
	// EstimatedAt is the time of the queue state that was rolled forward.
	EstimatedAt time.Time
	// BeyondHorizon is set when the horizon cut a figure: the true wait may
	// be longer than reported.
	BeyondHorizon bool
}

// setWait sets the wait of a Quotable estimate to the engine's w (none
// when w has none), with EstimatedAdmission at EstimatedAt + ExpectedWait.
func (est *WorkloadEstimate) setWait(w engine.Wait) {
	if !w.HasWait {
		return
	}
	est.Method, est.HasWait = w.Method, true
	est.ExpectedWait, est.P50, est.P90, est.BeyondHorizon = w.ExpectedWait, w.P50, w.P90, w.BeyondHorizon
	est.EstimatedAdmission = est.EstimatedAt.Add(est.ExpectedWait)
}

// QueueModel is the a-priori queueing model of one ClusterQueue (paper
// §3.3–3.5) with the statistics it was computed from.
type QueueModel struct {
	ClusterQueue kueue.ClusterQueueReference
	// APriori is the paper's model of the ClusterQueue (k_eff, k_eff⁺, the
	// measured rates and the M/G/k figures over them); its fields read as
	// QueueModel's own.
	engine.APriori
	// EMAWait is the paper's baseline, an EMA of observed waits; valid
	// when HasEMA.
	EMAWait time.Duration
	HasEMA  bool
	// P50Coverage and P90Coverage are the realized coverage of the first
	// published P50 and P90 (the fraction of scored workloads admitted
	// within them), decayed over the statistics half-life; valid when
	// HasCoverage. ScoredWorkloads is how many the ledger has scored.
	P50Coverage, P90Coverage float64
	HasCoverage              bool
	ScoredWorkloads          uint64
	// Calibrated is set once the conformal calibration of the published
	// quantiles acts: after enough scored workloads of this ClusterQueue,
	// or, until then, of all ClusterQueues pooled (see
	// engine.Calibration). P50Adjustment and P90Adjustment are then the
	// factors e^q it applies to the roll's quantiles (plus its scale floor;
	// 1 is no change).
	Calibrated                   bool
	P50Adjustment, P90Adjustment float64
	// UnmodelledOrdering names the admission order the manager applies to
	// this ClusterQueue that the forecast does not model (it assumes the
	// ClusterQueue's own queueing strategy): FairSharing, for a ClusterQueue
	// in a cohort when fair sharing is on, or AdmissionFairSharing, for one
	// with an admissionScope when admission fair sharing is on. Its
	// forecasts are then approximations outside the accuracy claims.
	UnmodelledOrdering Ordering
	// PendingWorkloads and UnfeasibleWorkloads count the pending list.
	PendingWorkloads    int
	UnfeasibleWorkloads int
	// At is when the model was computed.
	At time.Time
}

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
	if e.hasWait && !e.unfeasible && e.stamp != nil {
		if due := e.stamp.at.Add(e.p50.duration()); q.firstDue.IsZero() || due.Before(q.firstDue) {
			q.firstDue = due
		}
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
	return q.estimates[i].estimate(q.reasons[i]), true
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

// storedEstimate is how Results keeps a WorkloadEstimate, since there is one
// per pending workload: what every workload of a ClusterQueue shares (its
// name and the time of the rolled-forward state) is kept once in a stamp,
// the admission time is derived, the waits are whole milliseconds, the
// method is a code and the reason of an Unfeasible workload is kept aside.
// It takes 24 bytes where a WorkloadEstimate takes 152.
type storedEstimate struct {
	stamp                  *estimateStamp
	expectedWait, p50, p90 waitMillis
	method                 methodCode
	unfeasible             bool
	hasWait                bool
	beyondHorizon          bool
}

// waitMillis is a wait in whole milliseconds (the visibility API's unit),
// up to about 49.7 days.
type waitMillis uint32

// millisOf rounds d to the millisecond; a negative d is 0, and one past
// the largest waitMillis saturates there (saturated true).
func millisOf(d time.Duration) (w waitMillis, saturated bool) {
	if d <= 0 {
		return 0, false
	}
	ms := (d + time.Millisecond/2) / time.Millisecond
	if ms >= math.MaxUint32 {
		return math.MaxUint32, true
	}
	return waitMillis(ms), false
}

func (w waitMillis) duration() time.Duration { return time.Duration(w) * time.Millisecond }

// methodCode is a Method as an index into methods.
type methodCode uint8

// methods are the Methods a storedEstimate can hold.
var methods = [...]Method{MethodNone, MethodForecast, MethodAPriori, MethodImmediate}

// codeOf returns the code of m; a Method that is not one of the constants
// is stored as MethodNone.
func codeOf(m Method) methodCode {
	for i, known := range methods {
		if m == known {
			return methodCode(i)
		}
	}
	return 0
}

// estimateStamp is what the estimates of one ClusterQueue share.
type estimateStamp struct {
	clusterQueue kueue.ClusterQueueReference
	at           time.Time
}

func (s storedEstimate) estimate(reason string) WorkloadEstimate {
	e := WorkloadEstimate{
		Admissibility: Quotable, Reason: reason, Method: methods[s.method], HasWait: s.hasWait,
		ExpectedWait: s.expectedWait.duration(), P50: s.p50.duration(), P90: s.p90.duration(), BeyondHorizon: s.beyondHorizon,
	}
	if s.unfeasible {
		e.Admissibility = Unfeasible
	}
	if s.stamp != nil {
		e.ClusterQueue, e.EstimatedAt = s.stamp.clusterQueue, s.stamp.at
	}
	if s.hasWait {
		e.EstimatedAdmission = e.EstimatedAt.Add(e.ExpectedWait)
	}
	return e
}

// store keeps e under stamp, which must hold e's ClusterQueue and
// EstimatedAt; the estimates of one ClusterQueue share one stamp. A wait
// too long to keep is kept as the longest one, flagged beyond the horizon.
func store(e WorkloadEstimate, stamp *estimateStamp) storedEstimate {
	s := storedEstimate{
		stamp: stamp, method: codeOf(e.Method), unfeasible: e.Admissibility == Unfeasible,
		hasWait: e.HasWait, beyondHorizon: e.BeyondHorizon,
	}
	var sat [3]bool
	s.expectedWait, sat[0] = millisOf(e.ExpectedWait)
	s.p50, sat[1] = millisOf(e.P50)
	s.p90, sat[2] = millisOf(e.P90)
	if sat[0] || sat[1] || sat[2] {
		s.beyondHorizon = true
	}
	return s
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
		key := estimateStamp{clusterQueue: e.ClusterQueue, at: e.EstimatedAt}
		stamp, ok := stamps[key]
		if !ok {
			stamp = &key
			stamps[key] = stamp
		}
		part(e.ClusterQueue).add(nameFromReference(k), store(e, stamp), e.Reason)
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

// RefreshReport describes one refresh that published results, for an
// operator to tell whether the estimates are fresh and what they cost.
type RefreshReport struct {
	// PublishedAt is when the oldest of the published results were
	// computed (a refresh recomputes only the ClusterQueues whose inputs
	// changed and keeps the others' results, each with its own time): no
	// estimate in them is older.
	PublishedAt time.Time
	// Duration is how long the refresh took, snapshot included.
	Duration time.Duration
	// MaxStaleness is the configured bound ([WithMaxStaleness]) on the age
	// of results when nothing changed: a healthy estimator republishes at
	// least this often; a slow refresh stretches the wait before the next
	// one up to MaxStaleness ([WithRefreshCPU]), so results are at most
	// MaxStaleness plus one refresh old.
	MaxStaleness time.Duration
	// LongestLockHold is the longest the refresh held the estimator's lock
	// at once (the scheduler's hooks take it every cycle), up to the
	// report: no hook waited longer for a refresh. Measured with the
	// estimator's clock ([WithClock]).
	LongestLockHold time.Duration
}

// Ordering is an admission order of the manager's.
type Ordering string

const (
	// OrderingFairSharing is Kueue's fair sharing between the ClusterQueues
	// of a cohort.
	OrderingFairSharing Ordering = "FairSharing"
	// OrderingAdmissionFairSharing is Kueue's admission fair sharing between
	// the LocalQueues of a ClusterQueue.
	OrderingAdmissionFairSharing Ordering = "AdmissionFairSharing"
)

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
