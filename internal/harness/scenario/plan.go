package scenario

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// Plan is every arrival of one replica (one level and seed) of a Spec, in
// time order, with the per-queue model it was drawn from. It depends only
// on the Spec, the level's index and the seed index: the same inputs give
// the same plan.
type Plan struct {
	Level      float64
	LevelIndex int
	SeedIndex  int
	// Seed is the replica's seed, derived from the Spec's Seed, LevelIndex
	// and SeedIndex.
	Seed   uint64
	Queues []QueuePlan
	// Arrivals are in time order (ties: queue order, then each queue's
	// own order); Arrivals[i].Index == i.
	Arrivals []Arrival
	// Warmup is how many arrivals, the first ones, are marked Warmup:
	// ⌈warmup × len(Arrivals)⌉.
	Warmup int
	// Span is the offset of the last arrival, in seconds.
	Span float64
}

// QueuePlan is the model of one ClusterQueue in a replica, in Spec order.
type QueuePlan struct {
	Name   string
	Cohort string
	// Lambda is the queue's arrival rate (per second, all classes, the
	// arrivals drawn unfeasible included):
	//
	//	λ_q = level × utilization_q × k_eff_q / E[S]_q, or level × arrivalRate_q.
	Lambda float64
	// MeanService is E[S]_q = Σ_j share_j × meanService_j in seconds: the
	// mean service of an arrival of the queue (unfeasible draws included,
	// as if they were served: they only change the ρ actually offered).
	MeanService float64
	// ServiceSCV is C_S² of the class mixture's service law (before
	// truncation): E[S²]/E[S]² − 1 with E[S²] = Σ_j share_j m_j² (1 + c_j²).
	ServiceSCV float64
	// ArrivalSCV is c_a² of the queue's arrival process.
	ArrivalSCV float64
	// KEff is the nominal k_eff of the class mix (paper Eq. 4,
	// capacity.KEffMix with BasisNominal, classes weighted by share, DRA
	// devices as their mapped resource); its Resource is the bottleneck.
	KEff capacity.KEffResult
	// Capacity is the queue's capacity model: nominal quota and, in a
	// cohort, what it can borrow at most (Borrowable).
	Capacity *capacity.ClusterQueue
	// Rho is the offered load on the nominal quota, λ E[S] / k_eff (0 when
	// k_eff is 0).
	Rho float64
	// Arrivals is how many of the plan's arrivals go to this queue.
	Arrivals int
}

// Arrival is one workload of a plan.
type Arrival struct {
	// Index is the arrival's position in the plan; Name, "w%04d" of it, is
	// the Workload's name.
	Index int
	Name  string
	// Offset is the arrival time in seconds from the replica's start.
	Offset float64
	Queue  string
	Class  string
	// LocalQueue is the LocalQueue the arrival is submitted through (see
	// QueueSpec.LocalQueueOf).
	LocalQueue string
	// PriorityClass is the class's priorityClasses entry ("" for none) and
	// Priority its value (0 for none).
	PriorityClass string
	Priority      int32
	// Demand is the pod's request, resource -> quantity: the class's
	// unfeasibleDemand when Unfeasible. A copy.
	Demand     map[string]string
	Unfeasible bool
	// Service is the sampled service time in seconds.
	Service float64
	// DRA is the class's device claim (shared with the Spec: read only).
	DRA *DRASpec
	// Warmup marks the arrivals not scored: the first ⌈warmup × n⌉.
	Warmup bool
}

// Plan draws the arrivals of the replica (level, seedIndex): level must be
// one of Levels and seedIndex in [0, NumSeeds). The Spec must be valid.
//
// Each queue q gets its own arrival stream at rate λ_q (see QueuePlan)
// with its own arrival process, and each of its arrivals picks a class by
// share, whether it is unfeasible, and a service time from the class's
// law. Every queue's stream is drawn from generators seeded by the replica
// seed and the queue's index, so it does not depend on the other queues.
// The streams are merged by time and the plan keeps the first Workloads
// arrivals, so the queues get about Workloads × λ_q / Σλ each and the
// replica spans about Workloads / Σλ seconds.
func (s *Spec) Plan(level float64, seedIndex int) (Plan, error) {
	li := slices.Index(s.Levels, level)
	if li < 0 {
		return Plan{}, fmt.Errorf("level %v is not one of levels %v", level, s.Levels)
	}
	if seedIndex < 0 || seedIndex >= s.NumSeeds() {
		return Plan{}, fmt.Errorf("seed index %d is not in [0, %d)", seedIndex, s.NumSeeds())
	}
	models, err := s.capacityQueues()
	if err != nil {
		return Plan{}, err
	}
	p := Plan{Level: level, LevelIndex: li, SeedIndex: seedIndex, Seed: replicaSeed(s.Seed, li, seedIndex)}
	n := s.Workloads
	type draw struct {
		queue, seq int
		offset     float64
	}
	var draws []draw
	attrs := make([][]Arrival, len(s.ClusterQueues))
	for qi := range s.ClusterQueues {
		q := &s.ClusterQueues[qi]
		qp, err := s.queuePlan(qi, level, models[qi])
		if err != nil {
			return Plan{}, err
		}
		p.Queues = append(p.Queues, qp)
		arrivalRNG := rand.New(rand.NewPCG(p.Seed, SplitMix64(uint64(qi)<<1)))
		attrRNG := rand.New(rand.NewPCG(p.Seed, SplitMix64(uint64(qi)<<1|1)))
		// No queue has more than n of the first n merged arrivals.
		for k, off := range (&Scenario{Arrivals: q.Arrivals}).arrivalOffsets(arrivalRNG, n, qp.Lambda) {
			draws = append(draws, draw{queue: qi, seq: k, offset: off})
		}
		attrs[qi] = make([]Arrival, n)
		for k := range attrs[qi] {
			attrs[qi][k] = s.drawArrival(q, attrRNG)
		}
	}
	slices.SortStableFunc(draws, func(a, b draw) int {
		return cmp.Or(cmp.Compare(a.offset, b.offset), cmp.Compare(a.queue, b.queue), cmp.Compare(a.seq, b.seq))
	})
	draws = draws[:n]
	p.Warmup = int(math.Ceil(s.WarmupFraction()*float64(n) - 1e-9))
	p.Arrivals = make([]Arrival, n)
	for i, d := range draws {
		a := attrs[d.queue][d.seq]
		a.Index, a.Name, a.Offset, a.Warmup = i, fmt.Sprintf("w%04d", i), d.offset, i < p.Warmup
		p.Arrivals[i] = a
		p.Queues[d.queue].Arrivals++
	}
	p.Span = draws[n-1].offset
	return p, nil
}

// drawArrival draws the class, feasibility and service of one arrival of
// q, always with the same number of uniform draws before the service.
func (s *Spec) drawArrival(q *QueueSpec, r *rand.Rand) Arrival {
	u, v := r.Float64(), r.Float64()
	ci := len(q.Classes) - 1 // the last class takes what rounding leaves
	acc := 0.0
	for j, c := range q.Classes[:len(q.Classes)-1] {
		if acc += c.Share; u < acc {
			ci = j
			break
		}
	}
	c := &q.Classes[ci]
	a := Arrival{
		Queue:         q.Name,
		Class:         c.Name,
		LocalQueue:    q.LocalQueueOf(c),
		PriorityClass: c.Priority,
		Priority:      s.PriorityClasses[c.Priority],
		Unfeasible:    c.UnfeasibleFraction > 0 && v < c.UnfeasibleFraction,
		DRA:           c.DRA,
		Service:       classScenario(c).sampleService(r),
	}
	if a.Unfeasible {
		a.Demand = maps.Clone(c.UnfeasibleDemand)
	} else {
		a.Demand = maps.Clone(c.Demand)
	}
	return a
}

// queuePlan is the model of queue qi at a level, before the arrivals.
func (s *Spec) queuePlan(qi int, level float64, cq *capacity.ClusterQueue) (QueuePlan, error) {
	q := &s.ClusterQueues[qi]
	qp := QueuePlan{Name: q.Name, Cohort: q.Cohort, Capacity: cq, ArrivalSCV: (&Scenario{Arrivals: q.Arrivals}).arrivalSCV()}
	second := 0.0
	for _, c := range q.Classes {
		m := c.MeanService.Seconds()
		qp.MeanService += c.Share * m
		second += c.Share * m * m * (1 + classScenario(&c).serviceSCV())
	}
	qp.ServiceSCV = second/(qp.MeanService*qp.MeanService) - 1
	k, err := capacity.KEffMix(cq, s.classMix(qi), capacity.BasisNominal)
	if err != nil {
		return qp, fmt.Errorf("clusterQueues[%d]: k_eff of the class mix: %w", qi, err)
	}
	qp.KEff = k
	servers := 0.0
	if k.Servers > 0 && !k.Unbounded {
		servers = float64(k.Servers)
	}
	if q.Utilization != nil {
		if servers == 0 {
			return qp, fmt.Errorf("clusterQueues[%d]: utilization needs a nominal k_eff ≥ 1, got %d", qi, k.Servers)
		}
		qp.Lambda = level * *q.Utilization * servers / qp.MeanService
	} else {
		rate, err := ParseRate(q.ArrivalRate)
		if err != nil {
			return qp, fmt.Errorf("clusterQueues[%d].arrivalRate: %w", qi, err)
		}
		qp.Lambda = level * rate
	}
	if servers > 0 {
		qp.Rho = qp.Lambda * qp.MeanService / servers
	}
	return qp, nil
}

// classScenario carries a class's service law into a Scenario, to reuse
// its sampler.
func classScenario(c *ClassSpec) *Scenario {
	return &Scenario{MeanService: c.MeanService, Service: c.Service}
}

// replicaSeed derives a replica's seed from the base seed and the level
// and seed indexes.
func replicaSeed(base uint64, level, seed int) uint64 {
	const golden = 0x9e3779b97f4a7c15
	h := SplitMix64(base)
	h = SplitMix64(h ^ (uint64(level)+1)*golden)
	return SplitMix64(h ^ (uint64(seed)+1)*golden*golden)
}

// SplitMix64 is the SplitMix64 finalizer, a bijective mixer of 64 bits.
func SplitMix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// MakeUnfeasible turns arrival i of a plan into one asking for demand,
// which its ClusterQueue can never hold.
func MakeUnfeasible(p *Plan, i int, demand map[string]string) {
	if i < 0 || i >= len(p.Arrivals) {
		return
	}
	p.Arrivals[i].Unfeasible, p.Arrivals[i].Demand = true, demand
}
