package engine

import (
	"errors"
	"maps"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
)

// whatIfID is the ID the hypothetical workload takes in the roll.
const whatIfID = "\x00what-if"

// Scene is the state one roll started from, kept so that a what-if
// forecast rolls the very same state with one more workload
// ([Engine.WhatIf]). It is immutable: a what-if copies what it changes (the
// pending list, the arrival shapes).
type Scene struct {
	// queue is the roll's input but for its pending list and arrivals;
	// Service is nil when nothing is known of service times (MethodNone).
	queue forecast.Queue
	// pending is the roll's pending list, 12 bytes a workload, each with
	// the index of its demand class in classes: a forecast.Pending takes
	// 64, and every pending workload's would be kept.
	pending     compactPending
	classes     []pendingClass
	capacity    *capacity.ClusterQueue
	method      Method
	calibration Calibration
	// priorityRates and shapes are what the roll built the future arrivals
	// from (see higherPriorityArrivals): a what-if of a priority above
	// every pending one changes which arrivals pass it.
	priorityRates, priorityWindows map[int32]float64
	shapes                         arrivalShapes
	// shapeArrivals are what a BestEffortFIFO roll built the arrivals that
	// pass a pending workload from (see passingArrivals).
	shapeArrivals []ShapeArrival
	// laws are the service laws of demand shapes the roll named (see
	// shapeLaws; nil for none), read only: queue.ServiceClasses are
	// their models.
	laws *shapeLaws
	// seed is the roll's random seed: the what-if rolls with the same
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

// newScene keeps a roll's input for what-if forecasts: the queue without
// its pending list, which pending and the classes stand for.
func newScene(q forecast.Queue, pending compactPending, classes *classTable, cq *capacity.ClusterQueue,
	method Method, s Stats, shapes arrivalShapes, laws *shapeLaws, seed [2]uint64) *Scene {
	scene := &Scene{
		queue: q, pending: pending, classes: make([]pendingClass, len(classes.classes)), capacity: cq, method: method,
		calibration: s.Calibration, priorityRates: s.PriorityRates, priorityWindows: s.PriorityWindows,
		shapes: shapes, shapeArrivals: s.ShapeArrivals, laws: laws, seed: seed,
	}
	// The compact pending list keeps no LocalQueues: a what-if rolls
	// without admission fair sharing.
	scene.queue.Pending, scene.queue.Arrivals = nil, nil
	scene.queue.AdmissionFairSharing = nil
	for i, c := range classes.classes {
		if c.classified {
			scene.classes[i] = pendingClass{options: c.options, quotable: c.classification.Admissibility != capacity.Unfeasible}
		}
	}
	return scene
}

// pendingWith is the roll's pending list with p inserted at position at
// (0 ≤ at ≤ s.pending.len()).
func (s *Scene) pendingWith(at int, p forecast.Pending) []forecast.Pending {
	out := make([]forecast.Pending, 0, s.pending.len()+1)
	priorities, maxExecs := runCursor{runs: s.pending.priorities}, runCursor{runs: s.pending.maxExecs}
	for i, c := range s.pending.classes {
		if i == at {
			out = append(out, p)
		}
		class, priority := s.classes[c], priorities.at(i)
		out = append(out, forecast.Pending{
			Options: class.options, Quotable: class.quotable, MaxExecutionSeconds: float64(maxExecs.at(i)), Priority: priority,
			ServiceClass: s.laws.cached(int(c), priority),
		})
	}
	if at >= s.pending.len() {
		out = append(out, p)
	}
	return out
}

// WhatIf is the answer for a hypothetical workload on a Scene.
type WhatIf struct {
	// Position is how many pending workloads would be ahead of it (0: at
	// the head).
	Position int32
	// Servers is k_eff for its shape alone.
	Servers ShapeServers
	// Estimate is its partition and wait, as Roll gives a pending
	// workload's.
	Estimate
	// ForecastErr is the forecaster's error, when the roll failed.
	ForecastErr error
}

// ShapeServers is k_eff of paper Eq. 3 for one demand shape alone over the
// nominal quota (how many such workloads the nominal quota holds at once),
// with the bottleneck flavor and resource; EffectiveServersWithBorrowing is
// the same over nominal plus the expected borrowable quota, set when
// HasBorrowing (it differs). Unbounded says no quota binds (an Unlimited
// quota, or a shape that demands nothing); EffectiveServers is then 0 and
// carries no meaning.
type ShapeServers struct {
	EffectiveServers              int
	EffectiveServersWithBorrowing int
	HasBorrowing                  bool
	Unbounded                     bool
	BottleneckFlavor              string
	BottleneckResource            string
}

// WhatIf forecasts a hypothetical workload of the given demand (valid, see
// capacity.Workload.Validate), priority and maximum execution time (seconds,
// 0 for none) as if it had been pending when s was rolled: it is classified
// as the pending workloads were (paper Def. 3, the same reason text), placed
// where Kueue's queue order puts a workload created then — after every
// pending workload of equal or higher priority, before those of lower
// priority — and the roll is run again on the same state (running workloads,
// pending list, service law, arrivals, random seed) with it inserted. Its
// P50 and P90 are calibrated as the published ones are. Without a service
// law it has no wait, but for a workload that would be at the head and fits
// the free quota now, which gets MethodImmediate (see Engine.immediate); an
// Unfeasible workload has none either. It costs one roll of the
// ClusterQueue.
func (e *Engine) WhatIf(s *Scene, demand capacity.Workload, priority int32, maxExec float64) WhatIf {
	out := WhatIf{Position: int32(whatIfPosition(s.pending, priority)), Servers: shapeServers(s.capacity, demand)}
	c := capacity.Classify(s.capacity, demand)
	if c.Admissibility == capacity.Unfeasible {
		out.Unfeasible, out.Reason = true, c.Reason
		return out
	}
	options := demandOptions(s.capacity, demand)
	// Submitted now, the scheduler has not tried it yet: it is timed by a
	// first attempt if it fits without borrowing (see Pending.Untried).
	hypothetical := forecast.Pending{
		ID: whatIfID, Options: options, Quotable: true,
		MaxExecutionSeconds: maxExec, Priority: priority, Untried: fitsNominalQuota(s.capacity, &s.queue, options),
		ServiceClass: s.laws.forOptions(priority, options),
	}
	if s.queue.Service == nil {
		if out.Position == 0 && fitsFreeQuota(&s.queue, hypothetical.Options) {
			e.immediate(&out, s, hypothetical)
		}
		return out
	}
	q := s.queue
	q.Pending = s.pendingWith(int(out.Position), hypothetical)
	shapes := maps.Clone(s.shapes)
	if shapes == nil {
		shapes = make(arrivalShapes)
	}
	shapes.addPending(hypothetical)
	q.Arrivals = higherPriorityArrivals(s.priorityRates, s.priorityWindows, q.Pending, shapes)
	if q.Policy == forecast.BestEffortFIFO {
		q.Arrivals = append(q.Arrivals, passingArrivals(s.shapeArrivals, q.Pending,
			func(w capacity.Workload) []capacity.Quantities { return demandOptions(s.capacity, w) }, s.laws)...)
	}
	estimates, err := e.forecaster.Forecast(q, rand.New(rand.NewPCG(s.seed[0], s.seed[1])))
	if err != nil || int(out.Position) >= len(estimates) {
		out.ForecastErr = err
		return out
	}
	f := estimates[out.Position]
	out.Wait, out.Raw = e.wait(f, s.method, s.calibration, priority), f
	return out
}

// fitsFreeQuota reports whether one of options fits the quota free at the
// start of q's roll: Capacity less the usage of the running workloads and
// the quota lent out (see forecast.Queue.Lent), dimension by dimension; an
// Unlimited dimension never binds.
func fitsFreeQuota(q *forecast.Queue, options []capacity.Quantities) bool {
	free := q.Capacity.Clone()
	for _, r := range q.Running {
		free.Sub(r.Usage)
	}
	free.Sub(q.Lent)
	return slices.ContainsFunc(options, free.Fits)
}

// fitsNominalQuota reports whether one of options fits the nominal quota
// of cq less the usage of q's running workloads (its own): admitted now, it
// would not borrow. An Unlimited dimension never binds.
func fitsNominalQuota(cq *capacity.ClusterQueue, q *forecast.Queue, options []capacity.Quantities) bool {
	free := nominalCapacity(cq)
	for _, r := range q.Running {
		free.Sub(r.Usage)
	}
	return slices.ContainsFunc(options, free.Fits)
}

// immediate answers, with MethodImmediate, a what-if that needs no service
// law: nothing is known of service times, but the workload would be at the
// head of the queue (out.Position 0) and fits the quota free now, so the
// roll admits it at its first opportunity — after a first-attempt latency
// when it fits without borrowing (p.Untried) and the scene has a sample of
// them (see forecast.Queue.FirstAttemptLatencySample), else after the
// cycle's phase,
// when the scene has one, and one admission latency — whatever the running
// workloads' residuals. It rolls the workload alone (the pending workloads
// are all behind it) with a stand-in law, which no figure depends on, and
// without the higher-priority arrivals, which could pass it only within
// that first cycle. The waits are the roll's, not calibrated: the
// calibration corrects the service law's errors, and none enters here.
func (e *Engine) immediate(out *WhatIf, s *Scene, p forecast.Pending) {
	q := s.queue
	q.Service, q.ServiceByPriority, q.ServiceClasses = standInLaw, nil, nil
	q.Pending, q.Arrivals = []forecast.Pending{p}, nil
	estimates, err := e.forecaster.Forecast(q, rand.New(rand.NewPCG(s.seed[0], s.seed[1])))
	if err != nil || len(estimates) == 0 {
		out.ForecastErr = err
		return
	}
	f := estimates[0]
	horizon := e.config.HorizonSeconds
	out.Wait = Wait{
		Method: MethodImmediate, HasWait: true,
		ExpectedWait:  Seconds(min(f.ExpectedWaitSeconds, horizon)),
		P50:           Seconds(min(f.P50Seconds, horizon)),
		P90:           Seconds(min(f.P90Seconds, horizon)),
		BeyondHorizon: f.P90Seconds > horizon || f.Clamped,
	}
	out.Raw = f
}

// standInLaw is the service law of an immediate what-if's roll: any valid
// law gives the same answer there (see Engine.immediate).
var standInLaw = func() forecast.ServiceModel {
	law, err := forecast.NewDeterministic(60)
	if err != nil {
		panic(err) // a constant law that is valid
	}
	return law
}()

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

// shapeServers is k_eff (Eq. 3) of the shape over the nominal quota and
// over nominal plus the expected borrowing, with the bottleneck.
func shapeServers(cq *capacity.ClusterQueue, demand capacity.Workload) ShapeServers {
	var w ShapeServers
	k, err := capacity.KEff(cq, demand, capacity.BasisNominal)
	switch {
	case errors.Is(err, capacity.ErrZeroDemand):
		w.Unbounded = true
		return w
	case err != nil:
		return w
	case k.Unbounded:
		w.Unbounded = true
		return w
	}
	w.EffectiveServers, w.BottleneckFlavor, w.BottleneckResource = k.Servers, k.Flavor, k.Resource
	if kb, err := capacity.KEff(cq, demand, capacity.BasisExpectedBorrowing); err == nil && !kb.Unbounded && kb.Servers != k.Servers {
		w.EffectiveServersWithBorrowing, w.HasBorrowing = kb.Servers, true
	}
	return w
}
