package report

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/scenario"
)

// The oracle is the floor of the scored set: for a ClusterQueue the harness
// can model exactly (one class of workloads, no cohort, a service law whose
// remaining time given the time already served is known), the point
// forecast with the least expected absolute error given what the queue held
// at the moment the forecast was published. It knows the scenario's true
// service law and, at that moment, how long each running workload has run
// and how many pending workloads the scheduler will admit before the scored
// one; it knows nothing drawn later (the service times themselves, later
// arrivals). Under FIFO with identical demands, the scored workload starts
// when the (m+1)-th of the queue's k_eff slots frees after the m workloads
// ahead of it took the first m: its remaining wait W is a random variable
// of that state, and the point p minimising E|W − p| is W's median.
//
// The scheduler's own latency (from a freed slot to the admission the
// harness observes) is outside the law: the oracle is the floor of a
// forecaster that models the queue, not of one that also learns the
// scheduler's pace.

// oracleDraws is how many remaining waits the oracle simulates per scored
// workload when its law has no closed form. The median of n draws has a
// standard error of about 1/(2 f(m) √n), f the density at the median m:
// for an exponential wait, about 1.2 % of m at 4,001 draws.
const oracleDraws = 4001

// oracleLaw is a service-time law whose remaining time after a given age
// can be drawn exactly: the exponential law with mean Mean seconds, capped
// at Cap seconds when Cap > 0 (the scenarios' truncateAt: min(E, Cap)), or
// the deterministic law Mean.
type oracleLaw struct {
	Mean          float64
	Cap           float64
	Deterministic bool
}

// oracleLawOf is the law of a class's service, and false when the oracle
// cannot draw its remaining time exactly (Erlang, lognormal) or the mean is
// not positive.
func oracleLawOf(c scenario.ClassSpec) (oracleLaw, bool) {
	mean := c.MeanService.Seconds()
	if !(mean > 0) {
		return oracleLaw{}, false
	}
	var capAt float64
	if c.Service.TruncateAt > 0 {
		capAt = c.Service.TruncateAt * mean
	}
	switch c.Service.Distribution {
	case "", "exponential":
		return oracleLaw{Mean: mean, Cap: capAt}, true
	case "deterministic":
		return oracleLaw{Mean: mean, Deterministic: true}, true
	}
	return oracleLaw{}, false
}

// fresh draws a whole service time, seconds.
func (l oracleLaw) fresh(r *rand.Rand) float64 { return l.residual(r, 0) }

// residual draws the service that remains after age seconds served,
// conditional on the workload still running: for the exponential law,
// memorylessness gives E' ~ Exp(Mean) again, capped at Cap − age; for the
// deterministic law, Mean − age. Never negative (a workload observed
// running past its cap or its fixed time, by the harness's own latency,
// has 0 left).
func (l oracleLaw) residual(r *rand.Rand, age float64) float64 {
	age = max(age, 0)
	if l.Deterministic {
		return max(l.Mean-age, 0)
	}
	v := r.ExpFloat64() * l.Mean
	if l.Cap > 0 {
		v = min(v, max(l.Cap-age, 0))
	}
	return v
}

// oracleMedianWait is the median remaining wait, seconds, of a workload
// with ahead workloads before it in a FIFO queue of servers identical
// slots, runningAges being how long each busy slot's workload has run
// (seconds; len(runningAges) slots are busy, the rest idle).
//
// For the uncapped exponential law it is exact: with i idle slots, the
// first i of the ahead+1 workloads start at once, and each of the others
// waits for one completion among the servers busy slots, at rate
// servers/Mean, so W is 0 when ahead < i and otherwise Erlang with
// ahead − i + 1 stages at that rate (erlangMedian). Otherwise it is the
// median of oracleDraws simulated waits, each drawing the busy slots'
// residual times and the ahead workloads' service times from the law.
//
// More busy slots than servers (not possible in a queue without borrowing)
// count as more servers.
func oracleMedianWait(l oracleLaw, servers int, runningAges []float64, ahead int, r *rand.Rand) float64 {
	servers = max(servers, len(runningAges), 1)
	ahead = max(ahead, 0)
	idle := servers - len(runningAges)
	if ahead < idle {
		return 0
	}
	if !l.Deterministic && l.Cap == 0 {
		return erlangMedian(ahead-idle+1, float64(servers)/l.Mean)
	}
	free := make([]float64, servers)
	waits := make([]float64, oracleDraws)
	for d := range waits {
		for i := range free {
			free[i] = 0
			if i < len(runningAges) {
				free[i] = l.residual(r, runningAges[i])
			}
		}
		for range ahead {
			i := argMin(free)
			free[i] += l.fresh(r)
		}
		waits[d] = free[argMin(free)]
	}
	slices.Sort(waits)
	return waits[len(waits)/2]
}

// argMin is the index of v's least element (v not empty).
func argMin(v []float64) int {
	best := 0
	for i, x := range v {
		if x < v[best] {
			best = i
		}
	}
	return best
}

// erlangCDF is P(X ≤ x) for X Erlang with n ≥ 1 stages at rate per second:
//
//	F(x) = 1 − Σ_{i=0}^{n−1} e^{−rate·x} (rate·x)^i / i!
//
// summed in logarithms so that large n·rate·x neither under- nor
// overflows. 0 for x ≤ 0.
func erlangCDF(n int, rate, x float64) float64 {
	if x <= 0 {
		return 0
	}
	lx := rate * x
	logLx := math.Log(lx)
	var tail float64
	logTerm := -lx // i = 0
	for i := range n {
		if i > 0 {
			logTerm += logLx - math.Log(float64(i))
		}
		tail += math.Exp(logTerm)
	}
	return max(0, min(1, 1-tail))
}

// erlangMedian is the median of the Erlang law with n ≥ 1 stages at rate
// per second (seconds): the x with erlangCDF(n, rate, x) = 1/2, found by
// bisection to a relative 1e-9 (for n = 1, ln 2 / rate exactly). It lies
// between (n − 1)/rate and n/rate (the mode and the mean); 0 for n < 1 or
// a rate that is not positive and finite.
func erlangMedian(n int, rate float64) float64 {
	if n < 1 || !(rate > 0) || math.IsInf(rate, 1) {
		return 0
	}
	if n == 1 {
		return math.Ln2 / rate
	}
	lo, hi := float64(n-1)/rate, float64(n)/rate
	for hi-lo > 1e-9*hi {
		mid := (lo + hi) / 2
		if erlangCDF(n, rate, mid) < 0.5 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// oracleQueue is what the oracle needs of one eligible ClusterQueue of a
// replica: its slots, its law, and the times of its feasible workloads.
type oracleQueue struct {
	servers int
	law     oracleLaw
	rng     *rand.Rand
	// workloads are the queue's feasible workloads: created, first
	// admitted and finished (zero: not seen admitted or finished).
	workloads []oracleWorkload
}

type oracleWorkload struct {
	key                         string
	created, admitted, finished time.Time
}

// oracleEligible says whether queue q is an M/M/k or M/G/k queue the
// oracle models exactly: Poisson arrivals, no cohort (no borrowing, lending
// or reclaim), one class (so one demand, one priority and no preemption), a
// law oracleLawOf knows, and at least one slot. (Given the state, FIFO
// makes the remaining wait independent of later arrivals; the bursty
// arrivals of mt-throughput are left out all the same, since there the
// scheduler's pace, not the quota, sets the wait.)
func oracleEligible(q scenario.QueueSpec, servers int) (oracleLaw, bool) {
	poisson := q.Arrivals.Process == "" || q.Arrivals.Process == "poisson"
	if !poisson || q.Cohort != "" || len(q.Classes) != 1 || servers < 1 {
		return oracleLaw{}, false
	}
	return oracleLawOf(q.Classes[0])
}

// state is the queue at time t as the oracle sees it, for the workload key
// admitted at admittedAt: the ages of the workloads running at t, and how
// many workloads present and pending at t the scheduler admitted before
// key (its position in the scheduler's queue, ties of creation second
// included, as Kueue broke them).
func (q *oracleQueue) state(key string, t, admittedAt time.Time) (runningAges []float64, ahead int) {
	for _, w := range q.workloads {
		if w.key == key || w.created.After(t) {
			continue
		}
		admittedBy := !w.admitted.IsZero() && !w.admitted.After(t)
		switch {
		case admittedBy && (w.finished.IsZero() || w.finished.After(t)):
			runningAges = append(runningAges, t.Sub(w.admitted).Seconds())
		case !admittedBy && !w.admitted.IsZero() && w.admitted.Before(admittedAt):
			ahead++
		}
	}
	return runningAges, ahead
}

// oraclePrediction is the oracle's point for the workload key, first
// estimated at t and admitted at admittedAt: a remaining wait.
func (q *oracleQueue) prediction(key string, t, admittedAt time.Time, r *rand.Rand) time.Duration {
	ages, ahead := q.state(key, t, admittedAt)
	return time.Duration(oracleMedianWait(q.law, q.servers, ages, ahead, r) * float64(time.Second))
}

// replicaOracles is the oracle of each eligible ClusterQueue of replica p
// (by queue name), from what the harness observed of its runs; each draws
// from its own generator, seeded by the replica's seed and the queue's
// index, so that a report built twice from the same runs is the same.
func replicaOracles(spec *scenario.Spec, p scenario.Plan, runs []*WorkloadRun) map[string]*oracleQueue {
	out := map[string]*oracleQueue{}
	for qi, qp := range p.Queues {
		i := slices.IndexFunc(spec.ClusterQueues, func(q scenario.QueueSpec) bool { return q.Name == qp.Name })
		if i < 0 || qp.KEff.Unbounded {
			continue
		}
		law, ok := oracleEligible(spec.ClusterQueues[i], qp.KEff.Servers)
		if !ok {
			continue
		}
		out[qp.Name] = &oracleQueue{servers: qp.KEff.Servers, law: law,
			rng: rand.New(rand.NewPCG(p.Seed, scenario.SplitMix64(uint64(qi)<<1|1)^oracleStream))}
	}
	for _, run := range runs {
		oq := out[run.Arrival.Queue]
		if oq == nil || run.Arrival.Unfeasible {
			continue
		}
		w := oracleWorkload{key: string(run.Key), created: run.Created, finished: run.FinishedAt}
		if len(run.Admissions) > 0 {
			w.admitted = run.Admissions[0]
		}
		oq.workloads = append(oq.workloads, w)
	}
	return out
}

// oracleStream sets the oracle's generators apart from the plan's, which
// are seeded from the same replica seed and queue index.
const oracleStream = 0x6f7261636c65 // "oracle"

// admissionAfter is the first of admissions at or after t.
func admissionAfter(admissions []time.Time, t time.Time) (time.Time, bool) {
	for _, a := range admissions {
		if !a.Before(t) {
			return a, true
		}
	}
	return time.Time{}, false
}
