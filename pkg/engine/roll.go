package engine

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
)

// engineConfig is what an Engine applies to every roll.
type engineConfig struct {
	// PriorMeanServiceSeconds is the mean of the exponential service law
	// rolled before MinServiceSamples completions are observed (0: half
	// the mean maximum execution time of the known workloads, if any,
	// updated by the completions observed until then; see serviceModel).
	PriorMeanServiceSeconds float64
	// MinServiceSamples is how many completions the observed service law
	// needs (at least 1).
	MinServiceSamples int
	// HorizonSeconds cuts the published P50 and P90 (> 0); a cut figure is
	// flagged BeyondHorizon.
	HorizonSeconds float64
}

// Engine rolls ClusterQueues forward: given one ClusterQueue's state in the
// pure model's terms ([Queue]), it computes the a-priori model and every
// pending workload's partition and wait ([Engine.Roll]), and answers what-if
// questions on the same state ([Engine.WhatIf]). It holds no state of its
// own between calls and is safe for concurrent use. Settings.NewEngine
// makes one.
type Engine struct {
	forecaster *forecast.Forecaster
	config     engineConfig
}

// newEngine returns an Engine that rolls with forecaster f (see
// Settings.NewEngine).
func newEngine(f *forecast.Forecaster, c engineConfig) (*Engine, error) {
	switch {
	case f == nil:
		return nil, errors.New("engine: nil forecaster")
	case c.MinServiceSamples < 1:
		return nil, fmt.Errorf("engine: MinServiceSamples %d < 1", c.MinServiceSamples)
	case !(c.HorizonSeconds > 0) || math.IsInf(c.HorizonSeconds, 0):
		return nil, fmt.Errorf("engine: HorizonSeconds %v is not positive and finite", c.HorizonSeconds)
	case !(c.PriorMeanServiceSeconds >= 0) || math.IsInf(c.PriorMeanServiceSeconds, 0):
		return nil, fmt.Errorf("engine: PriorMeanServiceSeconds %v is negative or not finite", c.PriorMeanServiceSeconds)
	}
	return &Engine{forecaster: f, config: c}, nil
}

// Queue is one ClusterQueue's state, as a roll takes it.
type Queue struct {
	// Capacity is the ClusterQueue's quota, with what it could borrow now.
	Capacity *capacity.ClusterQueue
	// Classes are the distinct demand shapes of its workloads; Running and
	// Pending name theirs by index. A shape's partition and flavor options
	// are computed once.
	Classes []capacity.Workload
	// Running are its admitted workloads, Pending its pending ones in
	// Kueue's queue order.
	Running []Running
	Pending []Pending
	// Policy is its queueing strategy, WithinClusterQueue its preemption
	// policy within the ClusterQueue.
	Policy             forecast.Policy
	WithinClusterQueue forecast.PreemptionPolicy
	// Unplaceable are the reasons why some pending workloads whose quota
	// fits can never be placed (Pending.Unplaceable indexes it from 1),
	// each said once however many workloads it holds for.
	Unplaceable []string
	// Lent is quota it lent that the cohort's borrowers hold, and
	// LentHolders their running workloads (see forecast.Queue); empty for
	// a ClusterQueue that reclaims by preemption.
	Lent        capacity.Quantities
	LentHolders []forecast.Running
	// CyclePeriodSeconds is the scheduler's mean busy time per cycle.
	CyclePeriodSeconds float64
	// AdmissionFairSharing, when set, is the state of Kueue's admission
	// fair sharing in the ClusterQueue (its admissionScope is
	// UsageBasedAdmissionFairSharing and the manager's admissionFairSharing
	// is on): the roll then orders the pending workloads by their
	// LocalQueues' usage (see forecast.AdmissionFairSharing), which
	// Running.LocalQueue and Pending.LocalQueue name, and Pending is in
	// Kueue's order with it. A what-if rolls without it (its Scene keeps
	// no LocalQueues). Nil: the roll orders as the ClusterQueue's queueing
	// strategy does.
	AdmissionFairSharing *forecast.AdmissionFairSharing
	// Stats are the ClusterQueue's measured statistics.
	Stats Stats
}

// Running is an admitted workload.
type Running struct {
	// Class is its demand shape, an index into Queue.Classes: it counts in
	// the a-priori model's mix.
	Class int
	// Usage is the quota it holds, per flavor-resource.
	Usage capacity.Quantities
	// AgeSeconds is how long it has run; MaxExecutionSeconds its limit (0:
	// none).
	AgeSeconds, MaxExecutionSeconds float64
	Priority                        int32
	// LocalQueue names its LocalQueue in
	// Queue.AdmissionFairSharing.LocalQueues, counted from 1 (see
	// forecast.Running.LocalQueue).
	LocalQueue int32
}

// Pending is a pending workload.
type Pending struct {
	// ID names it in the roll.
	ID string
	// Class is its demand shape, an index into Queue.Classes.
	Class int
	// MaxExecutionSeconds is its limit (0: none).
	MaxExecutionSeconds float64
	Priority            int32
	// WaitedSeconds is how long it has waited since it arrived; read only
	// when Untried.
	WaitedSeconds float32
	// Untried says that the scheduler has not tried it yet and that its
	// ClusterQueue could admit it now without borrowing: if the roll
	// admits it before passing over any pending workload, its admission
	// is timed by Stats.FirstAttemptLatencySample (see
	// forecast.Pending.Untried). The
	// caller leaves it unset for a workload that would fit only by
	// borrowing, which competes for the cohort's quota.
	Untried bool
	// Unplaceable, when not 0, says that the workload can never be placed
	// although its quota fits, for the reason Queue.Unplaceable[Unplaceable-1]
	// (its pods' topology, which only the caller sees): it is Unfeasible
	// with that reason and leaves the roll, as a workload whose quota can
	// never fit does. A uint16 beside Untried keeps Pending at 48 bytes.
	Unplaceable uint16
	// LocalQueue names its LocalQueue in
	// Queue.AdmissionFairSharing.LocalQueues, counted from 1 (see
	// forecast.Pending.LocalQueue); beside Unplaceable, Pending stays at
	// 48 bytes.
	LocalQueue int32
}

// Rolled is what a roll computed of one ClusterQueue.
type Rolled struct {
	// Model is the a-priori model; ModelErr says what of it could not be
	// computed (the rest is there).
	Model    APriori
	ModelErr error
	// UnfeasibleWorkloads counts the Unfeasible pending workloads.
	UnfeasibleWorkloads int
	// Method is how the waits were computed; MethodNone when they were not.
	Method Method
	// Estimates hold one estimate per pending workload, in Queue.Pending's
	// order.
	Estimates []Estimate
	// ForecastErr is the forecaster's error, when the roll failed; the
	// Quotable estimates then have no wait.
	ForecastErr error
	// Scene is the rolled state, kept for what-if questions.
	Scene *Scene
}

// Estimate is one pending workload's partition and wait.
type Estimate struct {
	// Unfeasible is set when the workload can never be admitted without
	// reconfiguration (paper Def. 3), with the Reason; it is Quotable
	// otherwise.
	Unfeasible bool
	Reason     string
	Wait
	// Raw is the roll's own forecast, before calibration and the horizon
	// (zero without a wait).
	Raw forecast.Estimate
}

// Wait is a published wait: the mean as rolled, P50 and P90 calibrated for
// the workload's priority, all cut at the horizon (flagged BeyondHorizon).
// HasWait is false, and the rest zero, when none is given.
type Wait struct {
	Method                 Method
	HasWait                bool
	ExpectedWait, P50, P90 time.Duration
	BeyondHorizon          bool
}

// Roll computes q's a-priori model (see [NewAPriori], over the mix of its
// running and Quotable pending workloads) and every pending workload's
// partition and, for a Quotable one, its wait: the forecaster's Monte Carlo
// roll of q (running workloads ending, pending ones admitted in order,
// preemption, the higher-priority arrivals that will pass them) with the
// observed service law, or an a-priori one while too few completions are
// known, calibrated as q.Stats.Calibration says. seed seeds the roll's
// random numbers (and a what-if's on the same Scene).
//
// It returns an error wrapping [forecast.ErrInvalidQueue] (the one error of
// an invalid queue) for a queue without capacity or with a class index out
// of range, and nothing else: a forecast that
// fails leaves the waits out (ForecastErr says why).
func (e *Engine) Roll(q Queue, seed [2]uint64) (Rolled, error) {
	if err := q.validate(); err != nil {
		return Rolled{}, err
	}
	s := q.Stats
	classes := newClassTable(q.Capacity, q.Classes)
	roll := forecast.Queue{
		Capacity:                  forecastCapacity(q.Capacity),
		Policy:                    q.Policy,
		CyclePeriodSeconds:        finiteNonNegative(q.CyclePeriodSeconds),
		AdmissionLatencySeconds:   finiteNonNegative(s.AdmissionLatency),
		AdmissionLatencySample:    s.AdmissionLatencySample,
		FirstAttemptLatencySample: s.FirstAttemptLatencySample,
		// A refresh runs apart from the scheduler's cycles.
		RandomCyclePhase:         true,
		Running:                  make([]forecast.Running, 0, len(q.Running)),
		Pending:                  pendingBuffers.take(len(q.Pending))[:0],
		WithinClusterQueue:       q.WithinClusterQueue,
		PreemptionDelaySeconds:   finiteNonNegative(s.PreemptionDelay),
		PreemptionReactionSample: s.PreemptionReactionSample,
		PreemptionDelaySample:    s.PreemptionDelaySample,
		// Kueue's job integrations stop an evicted job's pods: a preempted
		// workload starts over when readmitted.
		PreemptedRestart:     true,
		Lent:                 q.Lent,
		LentHolders:          q.LentHolders,
		AdmissionFairSharing: q.AdmissionFairSharing,
	}
	if len(q.Lent) == 0 || len(q.LentHolders) == 0 {
		roll.Lent, roll.LentHolders = nil, nil
	}
	var maxExecSum float64
	var maxExecCount int
	shapes := make(arrivalShapes)
	laws := newShapeLaws(q.Capacity, s.ShapeService, len(q.Classes), e.config.MinServiceSamples)
	for _, w := range q.Running {
		r := forecast.Running{Usage: w.Usage, AgeSeconds: w.AgeSeconds,
			MaxExecutionSeconds: w.MaxExecutionSeconds, Priority: w.Priority, LocalQueue: w.LocalQueue}
		if laws != nil {
			r.ServiceClass = laws.of(w.Class, w.Priority, func() []capacity.Quantities { return classes.classify(w.Class).options })
		}
		shapes.addRunning(r.Priority, r)
		if r.MaxExecutionSeconds > 0 {
			maxExecSum += r.MaxExecutionSeconds
			maxExecCount++
		}
		roll.Running = append(roll.Running, r)
		classes.count(w.Class)
	}
	defer func() { pendingBuffers.give(roll.Pending) }()
	out := Rolled{Estimates: estimateBuffers.take(len(q.Pending))}
	pending := compactPending{classes: make([]uint32, 0, len(q.Pending))}
	for i, w := range q.Pending {
		c := classes.classify(w.Class)
		quotable := c.classification.Admissibility != capacity.Unfeasible && w.Unplaceable == 0
		switch {
		case quotable:
			classes.count(w.Class)
		case c.classification.Admissibility == capacity.Unfeasible:
			out.UnfeasibleWorkloads++
			out.Estimates[i].Unfeasible, out.Estimates[i].Reason = true, c.classification.Reason
		default:
			out.UnfeasibleWorkloads++
			out.Estimates[i].Unfeasible, out.Estimates[i].Reason = true, q.Unplaceable[w.Unplaceable-1]
		}
		p := forecast.Pending{
			ID: w.ID, Options: c.options, Quotable: quotable,
			MaxExecutionSeconds: w.MaxExecutionSeconds, Priority: w.Priority,
			Untried: w.Untried, WaitedSeconds: float64(w.WaitedSeconds),
			LocalQueue: w.LocalQueue,
		}
		if laws != nil {
			p.ServiceClass = laws.of(w.Class, w.Priority, func() []capacity.Quantities { return c.options })
		}
		pending.add(uint32(w.Class), p)
		if p.MaxExecutionSeconds > 0 {
			maxExecSum += p.MaxExecutionSeconds
			maxExecCount++
		}
		roll.Pending = append(roll.Pending, p)
		shapes.addPending(p)
	}
	roll.Arrivals = higherPriorityArrivals(s.PriorityRates, s.PriorityWindows, roll.Pending, shapes)
	if roll.Policy == forecast.BestEffortFIFO {
		roll.Arrivals = append(roll.Arrivals, passingArrivals(s.ShapeArrivals, roll.Pending,
			func(w capacity.Workload) []capacity.Quantities { return demandOptions(q.Capacity, w) }, laws)...)
	}

	out.Model, out.ModelErr = NewAPriori(q.Capacity, classes.mix(), s)
	method, service := serviceModel(s, e.config.MinServiceSamples, e.config.PriorMeanServiceSeconds, maxExecSum, maxExecCount)
	roll.Service = service
	if method == MethodForecast {
		// Else the workloads' ServiceClass names none.
		roll.ServiceByPriority = priorityServiceModels(s.PriorityService)
		roll.ServiceClasses = laws.serviceClasses()
	} else {
		laws = nil
	}
	out.Method = method
	out.Scene = newScene(roll, pending, classes, q.Capacity, method, s, shapes, laws, seed)
	if service == nil || len(q.Pending) == 0 {
		return out, nil
	}
	estimates := rawBuffers.take(len(roll.Pending))
	defer rawBuffers.give(estimates)
	if err := e.forecaster.ForecastInto(estimates, roll, rand.New(rand.NewPCG(seed[0], seed[1]))); err != nil {
		out.ForecastErr = err
		return out, nil
	}
	for i := range out.Estimates {
		if estimates[i].Quotable && !out.Estimates[i].Unfeasible {
			out.Estimates[i].Wait = e.wait(estimates[i], method, s.Calibration, roll.Pending[i].Priority)
			out.Estimates[i].Raw = estimates[i]
		}
	}
	return out, nil
}

// Release hands r's Estimates back to later rolls, which overwrite them:
// nothing may read them after it. Calling it is optional (unreleased
// estimates are left to the garbage collector); a caller that rolls
// queues of many pending workloads over and over saves their allocation,
// about 140 B per pending workload and roll.
func (r *Rolled) Release() {
	estimateBuffers.give(r.Estimates)
	r.Estimates = nil
}

// A roll's slices of one element per pending workload are recycled between
// rolls: at 10⁵ pending workloads they were 27 MB per roll, and the
// garbage collector that their allocation paces marks the whole heap of
// the process (Kueue's, in the manager).
var (
	pendingBuffers  slicePool[forecast.Pending]
	rawBuffers      slicePool[forecast.Estimate]
	estimateBuffers slicePool[Estimate]
)

// slicePool recycles slices of T. A slice in the pool is zero up to its
// capacity: give clears what was used of it, so the pool keeps no
// workload's strings alive and take need not clear.
type slicePool[T any] struct{ pool sync.Pool }

// take returns n zero values: a recycled slice when one large enough is at
// hand, a new one otherwise. Its caller uses at most its n elements.
func (p *slicePool[T]) take(n int) []T {
	if b, ok := p.pool.Get().(*[]T); ok && cap(*b) >= n {
		return (*b)[:n]
	}
	return make([]T, n)
}

// give clears s, which its caller no longer uses, and recycles it.
func (p *slicePool[T]) give(s []T) {
	if cap(s) == 0 {
		return
	}
	clear(s)
	s = s[:0]
	p.pool.Put(&s)
}

// validate checks what a roll indexes by.
func (q *Queue) validate() error {
	if q.Capacity == nil {
		return fmt.Errorf("%w: no capacity", forecast.ErrInvalidQueue)
	}
	for i, w := range q.Running {
		if w.Class < 0 || w.Class >= len(q.Classes) {
			return fmt.Errorf("%w: running workload %d has class %d of %d", forecast.ErrInvalidQueue, i, w.Class, len(q.Classes))
		}
	}
	for i, w := range q.Pending {
		if int(w.Unplaceable) > len(q.Unplaceable) {
			return fmt.Errorf("%w: pending workload %d (%q) has unplaceable reason %d of %d", forecast.ErrInvalidQueue, i, w.ID, w.Unplaceable, len(q.Unplaceable))
		}
		if w.Class < 0 || w.Class >= len(q.Classes) {
			return fmt.Errorf("%w: pending workload %d (%q) has class %d of %d", forecast.ErrInvalidQueue, i, w.ID, w.Class, len(q.Classes))
		}
	}
	return nil
}

// wait publishes the roll's forecast f of a workload of the given priority:
// the mean as rolled, P50 and P90 calibrated by cal, all cut at the horizon
// (flagged BeyondHorizon). Published and what-if waits go through it alike.
func (e *Engine) wait(f forecast.Estimate, method Method, cal Calibration, priority int32) Wait {
	horizon := e.config.HorizonSeconds
	p50, p90 := cal.PublishFor(priority, f.P50Seconds, f.P90Seconds)
	return Wait{
		Method: method, HasWait: true,
		ExpectedWait:  Seconds(f.ExpectedWaitSeconds),
		P50:           Seconds(min(p50, horizon)),
		P90:           Seconds(min(p90, horizon)),
		BeyondHorizon: p90 > horizon || f.Clamped,
	}
}

// forecastCapacity is what the ClusterQueue can use now: nominal quota plus
// what it could borrow at this instant, per flavor-resource (saturating at
// capacity.Unlimited through Quantities.Add).
func forecastCapacity(cq *capacity.ClusterQueue) capacity.Quantities {
	nominal, borrowable := make(capacity.Quantities), make(capacity.Quantities)
	for _, g := range cq.ResourceGroups {
		for _, f := range g.Flavors {
			for i, r := range g.Resources {
				fr := capacity.FlavorResource{Flavor: f.Name, Resource: r}
				nominal[fr], borrowable[fr] = f.Quotas[i].Nominal, f.Quotas[i].ExpectedBorrowable
			}
		}
	}
	nominal.Add(borrowable)
	return nominal
}

// nominalCapacity is the nominal quota of every flavor-resource of cq.
func nominalCapacity(cq *capacity.ClusterQueue) capacity.Quantities {
	nominal := make(capacity.Quantities)
	for _, g := range cq.ResourceGroups {
		for _, f := range g.Flavors {
			for i, r := range g.Resources {
				nominal[capacity.FlavorResource{Flavor: f.Name, Resource: r}] = f.Quotas[i].Nominal
			}
		}
	}
	return nominal
}

// classTable is one roll's demand classes: each shape's partition and
// flavor options, computed on first use, and how many running and Quotable
// pending workloads have it (the a-priori model's mix).
type classTable struct {
	cq      *capacity.ClusterQueue
	shapes  []capacity.Workload
	classes []demandClass
}

// demandClass is one demand shape of a roll.
type demandClass struct {
	count          float64
	classified     bool
	classification capacity.Classification
	options        []capacity.Quantities
}

func newClassTable(cq *capacity.ClusterQueue, shapes []capacity.Workload) *classTable {
	return &classTable{cq: cq, shapes: shapes, classes: make([]demandClass, len(shapes))}
}

// count counts one more workload of class i in the mix.
func (t *classTable) count(i int) { t.classes[i].count++ }

// classify returns class i with its partition and flavor options.
func (t *classTable) classify(i int) *demandClass {
	c := &t.classes[i]
	if !c.classified {
		c.classification = capacity.Classify(t.cq, t.shapes[i])
		c.options = demandOptions(t.cq, t.shapes[i])
		c.classified = true
	}
	return c
}

// mix is the a-priori model's demand mix: every class some workload counts
// in, weighted by that count, ordered by its shape (compareShapes), so that
// the model sums its classes in the same order whatever the order the
// workloads were found in.
func (t *classTable) mix() []capacity.Class {
	var out []capacity.Class
	for i, c := range t.classes {
		if c.count > 0 {
			out = append(out, capacity.Class{Rate: c.count, Workload: t.shapes[i]})
		}
	}
	slices.SortFunc(out, func(a, b capacity.Class) int { return compareShapes(a.Workload, b.Workload) })
	return out
}

// compareShapes orders demand shapes pod set by pod set — by name, then
// count, then requests in resource-name order (name, then amount) — and a
// shape that is a prefix of the other first. It returns 0 only for equal
// shapes (a request of 0 differs from none).
func compareShapes(a, b capacity.Workload) int {
	for i := range min(len(a.PodSets), len(b.PodSets)) {
		pa, pb := &a.PodSets[i], &b.PodSets[i]
		if c := cmp.Compare(pa.Name, pb.Name); c != 0 {
			return c
		}
		if c := cmp.Compare(pa.Count, pb.Count); c != 0 {
			return c
		}
		if c := compareRequests(pa.Requests, pb.Requests); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a.PodSets), len(b.PodSets))
}

// compareRequests orders two request maps by their entries in
// resource-name order (name, then amount), a map whose entries are a prefix
// of the other's first. Up to 8 resources it allocates nothing.
func compareRequests(a, b map[string]int64) int {
	var bufA, bufB [8]string
	ka, kb := sortedResources(bufA[:0], a), sortedResources(bufB[:0], b)
	for i := range min(len(ka), len(kb)) {
		if c := cmp.Compare(ka[i], kb[i]); c != 0 {
			return c
		}
		if c := cmp.Compare(a[ka[i]], b[kb[i]]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(ka), len(kb))
}

// sortedResources appends the keys of m to buf, sorted.
func sortedResources(buf []string, m map[string]int64) []string {
	for r := range m {
		buf = append(buf, r)
	}
	slices.Sort(buf)
	return buf
}

// demandOptions lists the flavor assignments the roll may try for a
// pending workload of demand w, in order: option i puts the workload's total
// demand (capacity.Workload.TotalDemand, "pods" included where covered) of
// every resource group on the group's i-th flavor (or its last one), the
// order in which Kueue's flavor assigner prefers them.
func demandOptions(cq *capacity.ClusterQueue, w capacity.Workload) []capacity.Quantities {
	total := w.TotalDemand(cq)
	maxFlavors := 0
	for _, g := range cq.ResourceGroups {
		maxFlavors = max(maxFlavors, len(g.Flavors))
	}
	options := make([]capacity.Quantities, 0, maxFlavors)
	for i := range maxFlavors {
		opt := make(capacity.Quantities)
		for _, g := range cq.ResourceGroups {
			if len(g.Flavors) == 0 {
				continue
			}
			flavor := g.Flavors[min(i, len(g.Flavors)-1)].Name
			for _, r := range g.Resources {
				if v := total[r]; v > 0 {
					opt[capacity.FlavorResource{Flavor: flavor, Resource: r}] = v
				}
			}
		}
		if !slices.ContainsFunc(options, func(o capacity.Quantities) bool { return equalQuantities(o, opt) }) {
			options = append(options, opt)
		}
	}
	return options
}

// equalQuantities reports whether a and b hold the same amounts.
func equalQuantities(a, b capacity.Quantities) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Reasons lists the distinct reasons why some pending workloads of a
// Queue can never be placed (Queue.Unplaceable), each once, as Index
// adds them.
type Reasons struct {
	// List holds the reasons in the order they were first indexed.
	List []string
	at   map[string]uint16
}

// Index returns the 1-based index of why in List (Pending.Unplaceable),
// adding it; 0 once List holds math.MaxUint16 reasons, as many distinct
// reasons in one ClusterQueue being beyond any real topology (the workload
// then keeps its quota verdict).
func (r *Reasons) Index(why string) uint16 {
	if i, ok := r.at[why]; ok {
		return i
	}
	if len(r.List) == math.MaxUint16 {
		return 0
	}
	if r.at == nil {
		r.at = make(map[string]uint16)
	}
	r.List = append(r.List, why)
	r.at[why] = uint16(len(r.List))
	return r.at[why]
}
