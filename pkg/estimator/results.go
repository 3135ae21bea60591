package estimator

import (
	"time"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
	"github.com/kueue-waittime/kueue-waittime/pkg/estimates"
	"github.com/kueue-waittime/kueue-waittime/pkg/ledger"
	"github.com/kueue-waittime/kueue-waittime/pkg/published"
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
)

// The orderings, as [estimates.Ordering] defines them.
const (
	OrderingFairSharing          = estimates.OrderingFairSharing
	OrderingAdmissionFairSharing = estimates.OrderingAdmissionFairSharing
)

// Results is one published set of estimates (see [published.Results]):
// each ClusterQueue's part holds its model and the estimates of its
// pending workloads, and the next Results reuses the part of a
// ClusterQueue whose inputs did not change (see Estimator.refresh). It is
// immutable; a nil *Results is valid and empty.
type Results = published.Results[kueue.ClusterQueueReference, kueue.CohortReference, workload.Reference, cohortView]

// queueResults is what one refresh of one ClusterQueue published.
type queueResults = published.Part[kueue.ClusterQueueReference, kueue.CohortReference, cohortView]

// NewResults returns results holding the given estimates and models, as
// the estimator publishes them. The estimator builds its own; this is for
// the readers' tests (the visibility storage and metrics). As in published
// results, waits are kept to the millisecond, an estimate with a wait is
// admitted at EstimatedAt +
// ExpectedWait, whatever its EstimatedAdmission says, its Admissibility is
// Unfeasible or else Quotable, and a Method other than the constants reads
// back as MethodNone.
func NewResults(at time.Time, workloads map[workload.Reference]WorkloadEstimate, queues map[kueue.ClusterQueueReference]QueueModel) *Results {
	return published.FromEstimates[kueue.ClusterQueueReference, kueue.CohortReference, workload.Reference, cohortView](at, workloads, queues)
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

// UnscoredReason says why a workload left the ledger unscored (see
// [ledger.UnscoredReason]).
type UnscoredReason = ledger.UnscoredReason

// The reasons, as [ledger.UnscoredReason] defines them.
const (
	AdmittedBeforeEstimate = ledger.AdmittedBeforeEstimate
	DeletedBeforeAdmission = ledger.DeletedBeforeAdmission
)
