package estimator

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
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

// whatIfID is the ID the hypothetical workload takes in the roll.
const whatIfID = "\x00what-if"

// whatIfScene is the state one refresh rolled a ClusterQueue's forecasts
// from, kept with its published part so that a what-if forecast rolls the
// very same state with one more workload. It is immutable once published:
// a what-if copies what it changes (the pending list, the arrival shapes).
type whatIfScene struct {
	// queue is the roll's input as the refresh built it but for its
	// pending list and arrivals; Service is nil when nothing is known of
	// service times (MethodNone).
	queue forecast.Queue
	// pending is the refresh's pending list, 12 bytes a workload, each
	// with the index of its demand class in classes: a forecast.Pending
	// takes 64, and every pending workload's would be kept.
	pending     compactPending
	classes     []pendingClass
	capacity    *capacity.ClusterQueue
	method      Method
	calibration quantileCalibration
	// priorityRates and shapes are what the refresh built the future
	// arrivals from (see higherPriorityArrivals): a what-if of a priority
	// above every pending one changes which arrivals pass it.
	priorityRates, priorityWindows map[int32]float64
	shapes                         arrivalShapes
	// seed is the refresh's random seed: the what-if rolls with the same
	// random numbers (common random numbers), so that it and the published
	// forecasts differ by the workload inserted more than by sampling noise.
	seed [2]uint64
}

// compactPending is what the roll takes of a refresh's pending workloads
// but their IDs, in queue order: each workload's demand class index, and its
// priority and maximum execution time as runs of equal values. Kueue queues
// by priority first, so the priorities form a few runs, and a maximum
// execution time is rare: about 4 bytes a workload.
type compactPending struct {
	classes []uint32
	// priorities and maxExecs hold, in order, the index at which each run
	// of equal values starts; maxExec is in whole seconds (Kueue's is an
	// int32), 0 for none.
	priorities []valueRun
	maxExecs   []valueRun
}

// valueRun is a value that holds from index start to the next run's start.
type valueRun struct {
	start int32
	value int32
}

// add appends a pending workload of demand class class.
func (c *compactPending) add(class uint32, p forecast.Pending) {
	i := int32(len(c.classes))
	c.classes = append(c.classes, class)
	c.priorities = appendRun(c.priorities, i, p.Priority)
	c.maxExecs = appendRun(c.maxExecs, i, int32(min(max(p.MaxExecutionSeconds, 0), math.MaxInt32)))
}

// appendRun adds value at index i to runs, starting a run only when it
// differs from the last one.
func appendRun(runs []valueRun, i, value int32) []valueRun {
	if n := len(runs); n > 0 && runs[n-1].value == value {
		return runs
	}
	return append(runs, valueRun{start: i, value: value})
}

// len is how many pending workloads c holds.
func (c *compactPending) len() int { return len(c.classes) }

// runCursor reads runs at increasing indexes.
type runCursor struct {
	runs []valueRun
	next int
}

// at returns the value at index i; i must not decrease between calls.
func (r *runCursor) at(i int) int32 {
	for r.next < len(r.runs) && int(r.runs[r.next].start) <= i {
		r.next++
	}
	if r.next == 0 {
		return 0
	}
	return r.runs[r.next-1].value
}

// pendingClass is what a demand class gives the roll of a pending workload.
type pendingClass struct {
	options  []capacity.Quantities
	quotable bool
}

// newWhatIfScene keeps a refresh's roll input for what-if forecasts: the
// queue without its pending list, which pending and the classes stand for.
func newWhatIfScene(q forecast.Queue, pending compactPending, classes *demandClasses, capModel *capacity.ClusterQueue,
	method Method, view statsView, shapes arrivalShapes, seed [2]uint64) *whatIfScene {
	s := &whatIfScene{
		queue: q, pending: pending, classes: make([]pendingClass, len(classes.all)), capacity: capModel, method: method,
		calibration: view.calibration, priorityRates: view.priorityRates, priorityWindows: view.priorityWindows,
		shapes: shapes, seed: seed,
	}
	s.queue.Pending, s.queue.Arrivals = nil, nil
	for i, c := range classes.all {
		if c.classified {
			s.classes[i] = pendingClass{options: c.options, quotable: c.classification.Admissibility != capacity.Unfeasible}
		}
	}
	return s
}

// pendingWith is the refresh's pending list with p inserted at position
// at (0 ≤ at ≤ s.pending.len()).
func (s *whatIfScene) pendingWith(at int, p forecast.Pending) []forecast.Pending {
	out := make([]forecast.Pending, 0, s.pending.len()+1)
	priorities, maxExecs := runCursor{runs: s.pending.priorities}, runCursor{runs: s.pending.maxExecs}
	for i, c := range s.pending.classes {
		if i == at {
			out = append(out, p)
		}
		class := s.classes[c]
		out = append(out, forecast.Pending{
			Options: class.options, Quotable: class.quotable, MaxExecutionSeconds: float64(maxExecs.at(i)), Priority: priorities.at(i),
		})
	}
	if at >= s.pending.len() {
		out = append(out, p)
	}
	return out
}

// WhatIfEstimate is the forecast for a hypothetical workload submitted to
// a ClusterQueue at the time of the last refresh (EstimatedAt): what
// [WorkloadEstimate] would say of it had it been pending then, with the
// position it would have taken and k_eff for its shape.
type WhatIfEstimate struct {
	WorkloadEstimate
	// Priority is the priority it was forecast with.
	Priority int32
	// Position is how many pending workloads of the ClusterQueue would be
	// ahead of it (0: at the head), as Kueue's PositionInClusterQueue.
	Position int32
	// EffectiveServers is k_eff of paper Eq. 3 for its shape alone over the
	// nominal quota (how many such workloads the nominal quota holds at
	// once), with the bottleneck flavor and resource;
	// EffectiveServersWithBorrowing is the same over nominal plus the
	// expected borrowable quota, set when HasBorrowing (it differs).
	// Unbounded says no quota binds (an Unlimited quota, or a shape that
	// demands nothing); EffectiveServers is then 0 and carries no meaning.
	EffectiveServers              int
	EffectiveServersWithBorrowing int
	HasBorrowing                  bool
	Unbounded                     bool
	BottleneckFlavor              string
	BottleneckResource            string
	// QueueHasRates, QueueStable and QueueUtilization are the
	// ClusterQueue's a-priori model (see [QueueModel]): with QueueStable
	// false (ρ_eff ≥ 1) the wait grows without bound as work arrives, and
	// the forecast's figures, which count only the arrivals that pass the
	// workload, may be exceeded by far.
	QueueHasRates    bool
	QueueStable      bool
	QueueUtilization float64
}

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
// no wait (admissibility, position and k_eff are still given); an
// Unfeasible workload has no wait either. A panic is recovered as an error.
func (e *Estimator) WhatIf(cq kueue.ClusterQueueReference, info *workload.Info) (out WhatIfEstimate, err error) {
	if e == nil {
		return out, fmt.Errorf("%w: %s", ErrUnknownClusterQueue, cq)
	}
	defer e.recoverPanicAsError("WhatIf", &err)
	if info == nil || info.Obj == nil || len(info.TotalRequests) == 0 {
		return out, fmt.Errorf("%w: it has no pod set", ErrInvalidWhatIf)
	}
	part := e.Results().part(cq)
	if part == nil || part.whatIf == nil || !part.hasModel {
		return out, fmt.Errorf("%w: %s", ErrUnknownClusterQueue, cq)
	}
	demand := workloadDemand(info)
	if err := demand.Validate(); err != nil {
		return out, fmt.Errorf("%w: %w", ErrInvalidWhatIf, err)
	}
	out = e.whatIf(part, demand, priorityOf(info.Obj), maxExecutionSeconds(info.Obj))
	e.opts.log.V(3).Info("What-if wait time forecast", "clusterQueue", cq, "priority", out.Priority,
		"position", out.Position, "admissibility", out.Admissibility, "method", out.Method,
		"expectedWait", out.ExpectedWait, "p50", out.P50, "p90", out.P90)
	return out, nil
}

// whatIf computes the answer of WhatIf on a published part.
func (e *Estimator) whatIf(part *queueResults, demand capacity.Workload, priority int32, maxExec float64) WhatIfEstimate {
	s, model := part.whatIf, part.model
	out := WhatIfEstimate{
		WorkloadEstimate: WorkloadEstimate{
			ClusterQueue: model.ClusterQueue, Admissibility: Quotable, Method: MethodNone, EstimatedAt: model.At,
		},
		Priority:         priority,
		Position:         int32(whatIfPosition(s.pending, priority)),
		QueueHasRates:    model.HasRates,
		QueueStable:      model.Stable,
		QueueUtilization: model.Utilization,
	}
	out.fillEffectiveServers(s.capacity, demand)

	c := capacity.Classify(s.capacity, demand)
	if c.Admissibility == capacity.Unfeasible {
		out.Admissibility, out.Reason = Unfeasible, c.Reason
		return out
	}
	if s.queue.Service == nil {
		return out
	}
	q := s.queue
	hypothetical := forecast.Pending{
		ID: whatIfID, Options: demandOptions(s.capacity, demand), Quotable: true,
		MaxExecutionSeconds: maxExec, Priority: priority,
	}
	q.Pending = s.pendingWith(int(out.Position), hypothetical)
	shapes := maps.Clone(s.shapes)
	if shapes == nil {
		shapes = make(arrivalShapes)
	}
	shapes.addPending(hypothetical)
	q.Arrivals = higherPriorityArrivals(s.priorityRates, s.priorityWindows, q.Pending, shapes)
	estimates, err := e.forecaster.Forecast(q, rand.New(rand.NewPCG(s.seed[0], s.seed[1])))
	if err != nil || int(out.Position) >= len(estimates) {
		e.opts.log.V(4).Info("What-if wait time forecast failed", "clusterQueue", model.ClusterQueue, "err", err)
		return out
	}
	e.fillWait(&out.WorkloadEstimate, estimates[out.Position], s.method, s.calibration, priority)
	return out
}

// fillWait sets the wait of a Quotable estimate from the roll's forecast f:
// the mean as rolled, P50 and P90 calibrated for the workload's priority,
// all cut at the horizon (flagged BeyondHorizon). Published and what-if
// estimates go through it alike.
func (e *Estimator) fillWait(est *WorkloadEstimate, f forecast.Estimate, method Method, cal quantileCalibration, priority int32) {
	horizon := e.opts.horizon.Seconds()
	est.Method, est.HasWait = method, true
	est.ExpectedWait = seconds(f.ExpectedWaitSeconds)
	p50, p90 := cal.publishFor(priority, f.P50Seconds, f.P90Seconds)
	est.P50, est.P90 = seconds(min(p50, horizon)), seconds(min(p90, horizon))
	est.BeyondHorizon = p90 > horizon || f.Clamped
	est.EstimatedAdmission = est.EstimatedAt.Add(est.ExpectedWait)
}

// whatIfPosition is where Kueue's queue order puts a workload of the given
// priority created after every pending one: behind the last pending
// workload of equal or higher priority (the list is in Kueue's order:
// priorities do not increase along it, but for a sticky head).
func whatIfPosition(pending compactPending, priority int32) int {
	end := pending.len()
	for i := len(pending.priorities) - 1; i >= 0; i-- {
		if pending.priorities[i].value >= priority {
			return end
		}
		end = int(pending.priorities[i].start)
	}
	return 0
}

// fillEffectiveServers sets k_eff (Eq. 3) of the shape over the nominal
// quota and over nominal plus the expected borrowing, with the bottleneck.
func (w *WhatIfEstimate) fillEffectiveServers(cq *capacity.ClusterQueue, demand capacity.Workload) {
	k, err := capacity.KEff(cq, demand, capacity.BasisNominal)
	switch {
	case errors.Is(err, capacity.ErrZeroDemand):
		w.Unbounded = true
		return
	case err != nil:
		return
	case k.Unbounded:
		w.Unbounded = true
		return
	}
	w.EffectiveServers, w.BottleneckFlavor, w.BottleneckResource = k.Servers, k.Flavor, k.Resource
	if kb, err := capacity.KEff(cq, demand, capacity.BasisExpectedBorrowing); err == nil && !kb.Unbounded && kb.Servers != k.Servers {
		w.EffectiveServersWithBorrowing, w.HasBorrowing = kb.Servers, true
	}
}
