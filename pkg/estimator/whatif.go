package estimator

import (
	"errors"
	"fmt"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/convert"
	"github.com/kueue-waittime/kueue-waittime/pkg/estimates"
)

var (
	// ErrUnknownClusterQueue is wrapped by [Estimator.WhatIf] for a
	// ClusterQueue the last refresh published nothing for: it does not
	// exist, or the estimator has not refreshed since it appeared.
	ErrUnknownClusterQueue = errors.New("no published forecast for the ClusterQueue")
	// ErrInvalidWhatIf is wrapped by [Estimator.WhatIf] for a hypothetical
	// workload that cannot be forecast: none given, no pod set, or a
	// negative count or request.
	ErrInvalidWhatIf = errors.New("invalid what-if workload")
)

// WhatIfEstimate is the forecast for a hypothetical workload submitted to
// a ClusterQueue at the time of the last refresh (see
// [estimates.WhatIfEstimate]).
type WhatIfEstimate = estimates.WhatIfEstimate[kueue.ClusterQueueReference]

// WhatIf forecasts a hypothetical workload (info, its pod sets and
// priority; its name, namespace and creation time are ignored) as if it
// had been submitted to ClusterQueue cq at the time of the last refresh of
// cq: it is classified as the scheduler's pending workloads are (paper
// Def. 3, the same reason text), placed where Kueue's queue order puts a
// workload created then — after every pending workload of equal or higher
// priority, before those of lower priority — and the refresh's roll is run
// again on the same state (running workloads, pending list, service law,
// arrivals, random seed) with it inserted. Its P50 and P90 are calibrated
// as the published ones are (the ClusterQueue's, or its priority's,
// conformal adjustment, at the refresh's values).
//
// It reads only the published results: no snapshot, no queue manager and
// no lock but the moment it takes to read the published pointer, so it is
// safe to call concurrently with refreshes and never delays the scheduler.
// It costs one roll of the ClusterQueue (about a refresh of that
// ClusterQueue alone).
//
// Errors: ErrUnknownClusterQueue when the last refresh published nothing
// for cq; ErrInvalidWhatIf for a nil info, no pod set, or a negative count
// or request. Without service-time knowledge the answer has MethodNone and
// no wait (admissibility, position and k_eff are still given), unless the
// workload would be at the head of the queue and fits the quota free at the
// refresh: it then has MethodImmediate and the wait until its admission (the
// cycle's phase and an admission latency; see engine.Engine.WhatIf). An
// Unfeasible workload has no wait either. A panic is recovered as an error.
func (e *Estimator) WhatIf(cq kueue.ClusterQueueReference, info *workload.Info) (out WhatIfEstimate, err error) {
	if e == nil {
		return out, fmt.Errorf("%w: %s", ErrUnknownClusterQueue, cq)
	}
	defer e.recoverPanicAsError("WhatIf", &err)
	if info == nil || info.Obj == nil || len(info.TotalRequests) == 0 {
		return out, fmt.Errorf("%w: it has no pod set", ErrInvalidWhatIf)
	}
	part := e.Results().Part(cq)
	if part == nil || part.WhatIf == nil || !part.HasModel {
		return out, fmt.Errorf("%w: %s", ErrUnknownClusterQueue, cq)
	}
	demand := convert.WorkloadDemand(info)
	if err := demand.Validate(); err != nil {
		return out, fmt.Errorf("%w: %w", ErrInvalidWhatIf, err)
	}
	out = e.whatIf(part, demand, convert.PriorityOf(info.Obj), convert.MaxExecutionSeconds(info.Obj))
	e.opts.log.V(3).Info("What-if wait time forecast", "clusterQueue", cq, "priority", out.Priority,
		"position", out.Position, "admissibility", out.Admissibility, "method", out.Method,
		"expectedWait", out.ExpectedWait, "p50", out.P50, "p90", out.P90)
	return out, nil
}

// whatIf computes the answer of WhatIf on a published part.
func (e *Estimator) whatIf(part *queueResults, demand capacity.Workload, priority int32, maxExec float64) WhatIfEstimate {
	model := part.Model
	r := e.engine.WhatIf(part.WhatIf, demand, priority, maxExec)
	if r.ForecastErr != nil {
		e.opts.log.V(4).Info("What-if wait time forecast failed", "clusterQueue", model.ClusterQueue, "err", r.ForecastErr)
	}
	return estimates.WhatIfOf(model, priority, r)
}
