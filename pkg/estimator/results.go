package estimator

import (
	"iter"
	"time"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"
)

// Admissibility is the paper's partition (Def. 3) of a pending workload.
type Admissibility string

const (
	// Quotable: for every resource group the workload's demand fits some
	// flavor's potential capacity (nominal + maximum borrowable); it waits a
	// finite time while the queue is stable.
	Quotable Admissibility = "Quotable"
	// Unfeasible: it can never be admitted without reconfiguration.
	Unfeasible Admissibility = "Unfeasible"
)

// Method says how a [WorkloadEstimate]'s wait was computed.
type Method string

const (
	// MethodForecast: a Monte Carlo roll of the live queue with the
	// ClusterQueue's observed service times.
	MethodForecast Method = "Forecast"
	// MethodAPriori: the same roll with an a-priori exponential service law
	// (the configured prior, or the workloads' maximum execution times),
	// because too few completions have been observed.
	MethodAPriori Method = "APriori"
	// MethodNone: no wait is given: the workload is Unfeasible, or nothing
	// is known yet about service times.
	MethodNone Method = "None"
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

// QueueModel is the a-priori queueing model of one ClusterQueue (paper
// §3.3–3.5) with the statistics it was computed from.
type QueueModel struct {
	ClusterQueue kueue.ClusterQueueReference
	// EffectiveServers is k_eff by vector packing of the nominal quota over
	// the demand mix of the known workloads (Eq. 3, or Eq. 4 for several
	// demand shapes). Zero when no workload is known.
	EffectiveServers int
	// EffectiveServersWithBorrowing is k_eff⁺ with the expected borrowable
	// capacity; valid when HasBorrowing.
	EffectiveServersWithBorrowing int
	HasBorrowing                  bool
	BottleneckFlavor              string
	BottleneckResource            string
	// HasRates is set once arrivals and service times have been measured;
	// the fields below are meaningful only then.
	HasRates bool
	// ArrivalRate is λ (new workloads per second), PreemptionRate μ_p
	// (preempted workloads re-entering per second).
	ArrivalRate    float64
	ArrivalSCV     float64
	PreemptionRate float64
	MeanService    time.Duration
	ServiceSCV     float64
	// Utilization is ρ_eff = (λ + μ_p)·E[S]/k_eff; it may exceed 1.
	Utilization float64
	// Stable is ρ_eff < 1; when false no mean wait exists.
	Stable bool
	// ProbabilityOfWait is the Erlang-C probability (valid when Stable).
	ProbabilityOfWait float64
	// MeanWait is the paper's Approximation 1, WhittMeanWait the GI/G/k
	// estimate with the measured c_a² (valid when Stable).
	MeanWait      time.Duration
	WhittMeanWait time.Duration
	// EMAWait is the paper's baseline, an EMA of observed waits; valid
	// when HasEMA.
	EMAWait time.Duration
	HasEMA  bool
	// PendingWorkloads and UnfeasibleWorkloads count the pending list.
	PendingWorkloads    int
	UnfeasibleWorkloads int
	// At is when the model was computed.
	At time.Time
}

// Results is one published set of estimates. It is immutable; a nil
// *Results is valid and empty.
type Results struct {
	at time.Time
	// estimates holds one entry per pending workload, and index where each
	// workload's is: a map to a small index plus a slice of exactly the
	// right length keeps less per workload than a map of whole estimates.
	estimates []storedEstimate
	index     map[workload.Reference]int32
	queues    map[kueue.ClusterQueueReference]QueueModel
}

// newResults returns empty results for about n pending workloads.
func newResults(at time.Time, n int) *Results {
	return &Results{
		at:        at,
		estimates: make([]storedEstimate, 0, n),
		index:     make(map[workload.Reference]int32, n),
		queues:    make(map[kueue.ClusterQueueReference]QueueModel),
	}
}

// add records the estimate of a pending workload (each key once).
func (r *Results) add(key workload.Reference, e storedEstimate) {
	r.index[key] = int32(len(r.estimates))
	r.estimates = append(r.estimates, e)
}

// storedEstimate is how Results keeps a WorkloadEstimate, since there is one
// per pending workload: what every workload of a ClusterQueue shares (its
// name and the time of the rolled-forward state) is kept once in a stamp,
// the admission time is derived and the method is a code. It takes 56
// bytes where a WorkloadEstimate takes 152.
type storedEstimate struct {
	stamp                  *estimateStamp
	reason                 string
	expectedWait, p50, p90 time.Duration
	method                 methodCode
	unfeasible             bool
	hasWait                bool
	beyondHorizon          bool
}

// methodCode is a Method as an index into methods.
type methodCode uint8

// methods are the Methods a storedEstimate can hold.
var methods = [...]Method{MethodNone, MethodForecast, MethodAPriori}

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

func (s storedEstimate) estimate() WorkloadEstimate {
	e := WorkloadEstimate{
		Admissibility: Quotable, Reason: s.reason, Method: methods[s.method], HasWait: s.hasWait,
		ExpectedWait: s.expectedWait, P50: s.p50, P90: s.p90, BeyondHorizon: s.beyondHorizon,
	}
	if s.unfeasible {
		e.Admissibility = Unfeasible
	}
	if s.stamp != nil {
		e.ClusterQueue, e.EstimatedAt = s.stamp.clusterQueue, s.stamp.at
	}
	if s.hasWait {
		e.EstimatedAdmission = e.EstimatedAt.Add(s.expectedWait)
	}
	return e
}

// store keeps e under stamp, which must hold e's ClusterQueue and
// EstimatedAt; the estimates of one ClusterQueue share one stamp.
func store(e WorkloadEstimate, stamp *estimateStamp) storedEstimate {
	return storedEstimate{
		stamp: stamp, reason: e.Reason, expectedWait: e.ExpectedWait, p50: e.P50, p90: e.P90,
		method: codeOf(e.Method), unfeasible: e.Admissibility == Unfeasible, hasWait: e.HasWait, beyondHorizon: e.BeyondHorizon,
	}
}

// NewResults returns results holding the given estimates and models, as
// the estimator publishes them. The estimator builds its own; this is for
// the readers' tests (the visibility storage and metrics). As in published
// results, an estimate with a wait is admitted at EstimatedAt +
// ExpectedWait, whatever its EstimatedAdmission says, its Admissibility is
// Unfeasible or else Quotable, and a Method other than the constants reads
// back as MethodNone.
func NewResults(at time.Time, workloads map[workload.Reference]WorkloadEstimate, queues map[kueue.ClusterQueueReference]QueueModel) *Results {
	r := newResults(at, len(workloads))
	r.queues = queues
	stamps := map[estimateStamp]*estimateStamp{}
	for k, e := range workloads {
		key := estimateStamp{clusterQueue: e.ClusterQueue, at: e.EstimatedAt}
		stamp, ok := stamps[key]
		if !ok {
			stamp = &key
			stamps[key] = stamp
		}
		r.add(k, store(e, stamp))
	}
	return r
}

// At is when the results were computed (the zero time for none).
func (r *Results) At() time.Time {
	if r == nil {
		return time.Time{}
	}
	return r.at
}

// Workload returns the estimate of a pending workload.
func (r *Results) Workload(key workload.Reference) (WorkloadEstimate, bool) {
	if r == nil {
		return WorkloadEstimate{}, false
	}
	i, ok := r.index[key]
	if !ok {
		return WorkloadEstimate{}, false
	}
	return r.estimates[i].estimate(), true
}

// pendingCount is how many pending workloads have an estimate.
func (r *Results) pendingCount() int {
	if r == nil {
		return 0
	}
	return len(r.estimates)
}

// Queue returns the model of a ClusterQueue.
func (r *Results) Queue(cq kueue.ClusterQueueReference) (QueueModel, bool) {
	if r == nil {
		return QueueModel{}, false
	}
	m, ok := r.queues[cq]
	return m, ok
}

// Queues iterates over every ClusterQueue's model, in no particular order.
func (r *Results) Queues() iter.Seq2[kueue.ClusterQueueReference, QueueModel] {
	return func(yield func(kueue.ClusterQueueReference, QueueModel) bool) {
		if r == nil {
			return
		}
		for k, v := range r.queues {
			if !yield(k, v) {
				return
			}
		}
	}
}

// MetricsReporter receives what the estimator publishes. The patched Kueue
// implements it with its metrics package; it must not block.
type MetricsReporter interface {
	// ReportQueueModel is called for every ClusterQueue after each refresh.
	ReportQueueModel(m QueueModel)
	// ClearQueueModel is called once for a ClusterQueue that disappeared.
	ClearQueueModel(cq kueue.ClusterQueueReference)
	// ReportPredictionError is called when a workload with a published wait
	// is admitted: predicted is the wait the last estimate gave from the
	// workload's queueing time, actual the wait it had.
	ReportPredictionError(cq kueue.ClusterQueueReference, method Method, predicted, actual time.Duration)
}
