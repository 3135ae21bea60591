package estimates

import (
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
)

// WorkloadEstimate is what the estimator publishes for one pending workload.
//
// Q is the caller's type of a ClusterQueue's name (Kueue's
// ClusterQueueReference).
type WorkloadEstimate[Q ~string] struct {
	ClusterQueue Q
	// Admissibility is Quotable or Unfeasible, never Invalid.
	Admissibility capacity.Admissibility
	// Reason says why an Unfeasible workload can never be admitted, e.g.
	// "flavor default: cpu 20 > potential 2 (nominal 2, borrowable 0)".
	Reason string
	Method engine.Method
	// HasWait is false for engine.MethodNone; the wait fields are then zero.
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

// SetWait sets the wait of a Quotable estimate to the engine's w (none
// when w has none), with EstimatedAdmission at EstimatedAt + ExpectedWait.
func (est *WorkloadEstimate[Q]) SetWait(w engine.Wait) {
	if !w.HasWait {
		return
	}
	est.Method, est.HasWait = w.Method, true
	est.ExpectedWait, est.P50, est.P90, est.BeyondHorizon = w.ExpectedWait, w.P50, w.P90, w.BeyondHorizon
	est.EstimatedAdmission = est.EstimatedAt.Add(est.ExpectedWait)
}

// QueueModel is the a-priori queueing model of one ClusterQueue (paper
// §3.3–3.5) with the statistics it was computed from.
//
// Q is the caller's type of a ClusterQueue's name.
type QueueModel[Q ~string] struct {
	ClusterQueue Q
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
	// whose admissionScope's mode is UsageBasedAdmissionFairSharing when
	// admission fair sharing is on and the roll does not order by the
	// LocalQueues' usage (FeatureUse.AdmissionFairSharingRolled). Its
	// forecasts are then approximations outside the accuracy claims.
	UnmodelledOrdering Ordering
	// Features lists the Kueue features bearing on waits that the
	// ClusterQueue uses, each with how far the estimates model it (see
	// Features).
	Features []Feature
	// PendingWorkloads and UnfeasibleWorkloads count the pending list.
	PendingWorkloads    int
	UnfeasibleWorkloads int
	// At is when the model was computed.
	At time.Time
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
	// MaxStaleness is the configured bound (estimator.WithMaxStaleness) on the age
	// of results when nothing changed: a healthy estimator republishes at
	// least this often; a slow refresh stretches the wait before the next
	// one up to MaxStaleness (estimator.WithRefreshCPU), so results are at most
	// MaxStaleness plus one refresh old.
	MaxStaleness time.Duration
	// LongestLockHold is the longest the refresh held the estimator's lock
	// at once (the scheduler's hooks take it every cycle), up to the
	// report: no hook waited longer for a refresh. Measured with the
	// estimator's clock (estimator.WithClock).
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

// WhatIfEstimate is the forecast for a hypothetical workload submitted to
// a ClusterQueue at the time of the last refresh (EstimatedAt): what
// [WorkloadEstimate] would say of it had it been pending then (the
// estimator's WhatIf), with the
// position it would have taken and k_eff for its shape.
type WhatIfEstimate[Q ~string] struct {
	WorkloadEstimate[Q]
	// Priority is the priority it was forecast with.
	Priority int32
	// Position is how many pending workloads of the ClusterQueue would be
	// ahead of it (0: at the head), as Kueue's PositionInClusterQueue.
	Position int32
	// ShapeServers is k_eff of paper Eq. 3 for its shape alone, over the
	// nominal quota and with the expected borrowing, with the bottleneck
	// (see engine.ShapeServers); its fields read as WhatIfEstimate's own.
	engine.ShapeServers
	// QueueHasRates, QueueStable and QueueUtilization are the
	// ClusterQueue's a-priori model (see [QueueModel]): with QueueStable
	// false (ρ_eff ≥ 1) the wait grows without bound as work arrives, and
	// the forecast's figures, which count only the arrivals that pass the
	// workload, may be exceeded by far.
	QueueHasRates    bool
	QueueStable      bool
	QueueUtilization float64
}

// EstimateOf is the estimate published for a pending workload of
// ClusterQueue cq whose roll at at gave r: Unfeasible with its reason, or
// Quotable with r's wait (none, MethodNone, when r has none).
func EstimateOf[Q ~string](cq Q, at time.Time, r engine.Estimate) WorkloadEstimate[Q] {
	est := WorkloadEstimate[Q]{ClusterQueue: cq, Admissibility: capacity.Quotable, Method: engine.MethodNone, EstimatedAt: at}
	if r.Unfeasible {
		est.Admissibility, est.Reason = capacity.Unfeasible, r.Reason
	} else {
		est.SetWait(r.Wait)
	}
	return est
}

// WhatIfOf is the answer for a hypothetical workload of the given priority
// submitted to the ClusterQueue whose published model is m, that the
// engine's what-if on the state m was rolled from answered with r.
func WhatIfOf[Q ~string](m QueueModel[Q], priority int32, r engine.WhatIf) WhatIfEstimate[Q] {
	return WhatIfEstimate[Q]{
		WorkloadEstimate: EstimateOf(m.ClusterQueue, m.At, r.Estimate),
		Priority:         priority,
		Position:         r.Position,
		ShapeServers:     r.Servers,
		QueueHasRates:    m.HasRates,
		QueueStable:      m.Stable,
		QueueUtilization: m.Utilization,
	}
}

// ConditionMessage is the message of a condition that says a workload
// could not be admitted, msg, with the estimator's partition of it
// appended: "Wait time estimation: the workload is Quotable", or
// Unfeasible with the reason why.
func ConditionMessage(msg string, adm capacity.Admissibility, why string) string {
	suffix := "the workload is Quotable"
	if adm == capacity.Unfeasible {
		suffix = "the workload is Unfeasible: " + why
	}
	if msg == "" {
		return "Wait time estimation: " + suffix
	}
	return msg + ". Wait time estimation: " + suffix
}
