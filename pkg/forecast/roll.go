package forecast

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
)

// z90 is the 0.9 quantile of the standard normal distribution.
const z90 = 1.2815515655446004

type event struct {
	t   float64
	vec int32
	// rec is the index of its record in preemption.recs (only with
	// preemption).
	rec int32
}

// roller replays one scene R times.
type roller struct {
	s   *scene
	svc ServiceModel
	// boot is set when the service model is a Bootstrap: each replica then
	// runs bootModel, a resample of it, as svc.
	boot       *Bootstrap
	bootModel  Empirical
	bootCounts []int32
	// rng draws from src, which gives each replica its stream.
	rng *rand.Rand
	src *replicaSource
	// byPriority are Queue.ServiceByPriority in increasing priority, and
	// classes Queue.ServiceClasses (see serviceOf) — a copy, with this
	// replica's resample in place of each Bootstrap, when classBoots is
	// not empty.
	byPriority []priorityService
	classes    []ServiceModel
	classBoots []classBoot
	policy     Policy
	cycle      float64
	// randomPhase starts each replica at a uniform point of the cycle.
	randomPhase bool
	latency     float64
	// latencies, when not empty, replace latency by a draw per admission.
	latencies []float64
	// firstAttempt is Queue.FirstAttemptLatencySample (only read);
	// blocked says that the replica has had an admission opportunity at
	// which a pending workload was passed over (it did not fit, or a
	// preemption was needed), so that no later admission is a first
	// attempt (see latencyOf).
	firstAttempt []float64
	blocked      bool
	// reactions is Queue.PreemptionReactionSample and delays
	// Queue.PreemptionDelaySample (only read).
	reactions, delays []float64
	horizon           float64
	// ceiling caps any drawn duration: anything longer than the horizon
	// behaves the same, and a finite cap keeps all times finite.
	ceiling float64
	samples int
	budget  int
	// pre is nil unless the queue may preempt.
	pre *preemption
	// fair is nil unless the queue orders by admission fair sharing (and
	// does not preempt).
	fair *fairness

	vecs [][]int64 // the scene's vector table, one slice per id
	free []int64
	// lentLeft is what is still lent out (see Queue.Lent), per dimension.
	lentLeft []int64
	heap     []event
	cursor   []int32 // per shape (BestEffortFIFO)
	head     int     // next entry (StrictFIFO)
	arrQ     [][]float64
	arrHead  []int
	nextArr  []float64
	// arrDue is the earliest of nextArr: the replica's loop looks at the
	// arrival classes only once it is due.
	arrDue float64

	// times[j*samples+rep] is entry j's admission time in replica rep.
	times []float64
	// timesBuf holds times, lo and hi, taken from timeBuffers (see
	// returnBuffers).
	timesBuf *[]float64
	// hi[rep] is the time by which all entries are admitted in replica rep,
	// lo[rep] the time by which the admitted work (in any order) reaches
	// loWork, the work of the first h0 entries in queue order. Measuring lo
	// by work rather than by position keeps BestEffortFIFO passing (a
	// large workload admitted late) out of the throughput estimate.
	lo, hi []float64
	h0     int
	loWork float64

	// Lateness (BestEffortFIFO with several shapes): entry j's admission
	// time minus the time by which the admitted work reaches the work of
	// entries 0..j in queue order — positive for a workload passed by
	// smaller ones behind it, negative for one that passes. Averaged per
	// shape over the first h0 entries, which have at least h0 entries
	// behind them.
	trackLateness bool
	order         []int32   // entries in admission order, this replica
	prefixWork    []float64 // work of entries 0..j, j < h0
	lateSum       []float64 // per shape
	lateN         []int     // per shape
}

func newRoller(s *scene, q Queue, f *Forecaster, r *rand.Rand) *roller {
	m := len(s.entries)
	ro := &roller{
		s:       s,
		svc:     q.Service,
		classes: q.ServiceClasses,
		policy:  q.Policy,
		cycle:   q.CyclePeriodSeconds,
		latency: q.AdmissionLatencySeconds,
		// The sample is only read.
		latencies:    q.AdmissionLatencySample,
		firstAttempt: q.FirstAttemptLatencySample,
		reactions:    q.PreemptionReactionSample,
		delays:       q.PreemptionDelaySample,
		randomPhase:  q.RandomCyclePhase,
		horizon:      f.horizonSeconds,
		ceiling:      min(2*f.horizonSeconds, math.MaxFloat64),
		samples:      f.samples,
		budget:       64*(m+len(s.running)) + len(s.holders) + 4096 + arrivalBudget(s.arrivals, f.horizonSeconds),
		free:         make([]int64, s.dims),
		heap:         make([]event, 0, len(s.running)+m),
		cursor:       make([]int32, len(s.shapes)),
		arrQ:         make([][]float64, len(s.arrivals)),
		arrHead:      make([]int, len(s.arrivals)),
		nextArr:      make([]float64, len(s.arrivals)),
		timesBuf:     takeTimes((m + 2) * f.samples),
		h0:           m / 2,
		loWork:       workOf(s.entries[:m/2]),
	}
	ro.src = newReplicaSource(r, !f.independentReplicas)
	ro.rng = rand.New(ro.src)
	buf := *ro.timesBuf
	ro.times, ro.lo, ro.hi = buf[:m*f.samples], buf[m*f.samples:(m+1)*f.samples], buf[(m+1)*f.samples:]
	nvec := 0
	if s.dims > 0 {
		nvec = len(s.vecs) / s.dims
	}
	ro.vecs = make([][]int64, max(nvec, 1))
	for id := range nvec {
		ro.vecs[id] = s.vec(int32(id))
	}
	for p, m := range q.ServiceByPriority {
		ro.byPriority = append(ro.byPriority, priorityService{priority: p, model: m})
	}
	slices.SortFunc(ro.byPriority, func(a, b priorityService) int { return cmp.Compare(a.priority, b.priority) })
	if s.lent != nil {
		ro.lentLeft = make([]int64, s.dims)
	}
	ro.pre = newPreemption(s, &q)
	ro.fair = newFairness(s, &q, ro.pre != nil)
	if b, ok := q.Service.(*Bootstrap); ok {
		ro.boot = b
	}
	for i, m := range q.ServiceClasses {
		if b, ok := m.(*Bootstrap); ok {
			if ro.classBoots == nil {
				ro.classes = slices.Clone(q.ServiceClasses)
			}
			ro.classBoots = append(ro.classBoots, classBoot{index: i, boot: b})
		}
	}
	if q.Policy == BestEffortFIFO && len(s.shapes) > 1 && ro.h0 > 0 {
		ro.trackLateness = true
		ro.order = make([]int32, 0, m)
		ro.prefixWork = make([]float64, ro.h0)
		w := 0.0
		for j := range ro.h0 {
			w += s.entries[j].work
			ro.prefixWork[j] = w
		}
		ro.lateSum = make([]float64, len(s.shapes))
		ro.lateN = make([]int, len(s.shapes))
	}
	return ro
}

// timeBuffers recycles the rollers' admission times between forecasts: a
// refresh rolls its ClusterQueues one after another, and the times, 8 B
// per entry and replica, were the roll's largest allocation.
var timeBuffers = sync.Pool{New: func() any { return new([]float64) }}

// takeTimes returns a zeroed buffer of n times from timeBuffers.
func takeTimes(n int) *[]float64 {
	p := timeBuffers.Get().(*[]float64)
	if cap(*p) < n {
		*p = make([]float64, n)
	}
	*p = (*p)[:n]
	clear(*p)
	return p
}

// returnBuffers gives the roller's times back to timeBuffers, and its
// source's record to recordBuffers; the roller must not be used after it.
func (ro *roller) returnBuffers() {
	ro.times, ro.lo, ro.hi = nil, nil, nil
	timeBuffers.Put(ro.timesBuf)
	ro.timesBuf = nil
	ro.src.release()
}

// classBoot is a service class whose law is a Bootstrap: each replica runs
// model, a resample of it (see Bootstrap).
type classBoot struct {
	index  int
	boot   *Bootstrap
	model  Empirical
	counts []int32
}

// priorityService is the service law of one priority.
type priorityService struct {
	priority int32
	model    ServiceModel
}

// serviceOf is the service law of a workload of the given service class
// (sanitized, see Queue.ServiceClasses) and priority: its class's when it
// has one, else its priority's if Queue.ServiceByPriority has one (a
// linear scan: a ClusterQueue has a handful of priorities), else the
// pooled one.
func (ro *roller) serviceOf(law, priority int32) ServiceModel {
	if law > 0 {
		return ro.classes[law-1]
	}
	for i := range ro.byPriority {
		if ro.byPriority[i].priority == priority {
			return ro.byPriority[i].model
		}
	}
	return ro.svc
}

func workOf(entries []entry) float64 {
	w := 0.0
	for _, e := range entries {
		w += e.work
	}
	return w
}

// clean turns a drawn duration into a usable one: NaN and negatives become
// 0, huge values the ceiling, and a bound > 0 caps it.
func (ro *roller) clean(x, bound float64) float64 {
	if !(x >= 0) {
		x = 0
	}
	x = min(x, ro.ceiling)
	if bound > 0 {
		x = min(x, bound)
	}
	return x
}

func (ro *roller) run() {
	for rep := range ro.samples {
		ro.src.startReplica(rep)
		ro.replica(rep)
	}
}

func (ro *roller) replica(rep int) {
	s := ro.s
	R := ro.samples
	m := len(s.entries)
	copy(ro.free, s.initFree)
	ro.heap = ro.heap[:0]
	if ro.boot != nil {
		ro.bootCounts = ro.boot.resampleInto(&ro.bootModel, ro.bootCounts, ro.rng)
		ro.svc = &ro.bootModel
	}
	for i := range ro.classBoots {
		cb := &ro.classBoots[i]
		cb.counts = cb.boot.resampleInto(&cb.model, cb.counts, ro.rng)
		ro.classes[cb.index] = &cb.model
	}
	for i, run := range s.running {
		ro.heap = append(ro.heap, event{t: ro.residual(run, ro.serviceOf(run.law, run.priority)), vec: run.vec, rec: int32(i)})
	}
	if ro.lentLeft != nil {
		copy(ro.lentLeft, s.lent)
		for _, h := range s.holders {
			ro.heap = append(ro.heap, event{t: ro.residual(h, ro.svc), vec: h.vec, rec: lentReturn})
		}
	}
	if ro.pre != nil {
		ro.resetPreemption()
	}
	if ro.fair != nil {
		ro.fair.reset()
	}
	heapify(ro.heap)
	clear(ro.cursor)
	ro.head = 0
	ro.arrDue = math.Inf(1)
	for c := range s.arrivals {
		ro.arrQ[c] = ro.arrQ[c][:0]
		ro.arrHead[c] = 0
		ro.nextArr[c] = ro.drawArrival(c, 0)
		ro.arrDue = min(ro.arrDue, ro.nextArr[c])
	}
	if ro.pre != nil {
		ro.resetHeads()
	}
	for j := range m {
		ro.times[j*R+rep] = ro.horizon
	}
	ro.order = ro.order[:0]

	t, nextAllowed := 0.0, 0.0
	if ro.randomPhase && ro.cycle > 0 {
		nextAllowed = ro.rng.Float64() * ro.cycle
	}
	ro.blocked = false
	admitted, events := 0, 0
	admittedWork, lo := 0.0, -1.0
loop:
	for admitted < m {
		for len(ro.heap) > 0 && ro.heap[0].t <= t {
			switch ev := ro.pop(); {
			case ev.rec == lentReturn:
				ro.returnLent(ev.vec)
			case ro.pre != nil:
				ro.complete(ev)
			default:
				ro.release(ev.vec)
				if ro.fair != nil {
					ro.fair.complete(ev.rec, ev.t)
				}
			}
		}
		if ro.arrDue <= t {
			due := math.Inf(1)
			for c := range s.arrivals {
				for ro.nextArr[c] <= t {
					ro.arrQ[c] = append(ro.arrQ[c], ro.nextArr[c])
					if ro.pre != nil && ro.arrHead[c] == len(ro.arrQ[c])-1 {
						ro.pre.insertHead(ro.arrivalHead(c))
					}
					ro.nextArr[c] = ro.drawArrival(c, ro.nextArr[c])
					if events++; events > ro.budget {
						break loop
					}
				}
				due = min(due, ro.nextArr[c])
			}
			ro.arrDue = due
		}
		if t >= nextAllowed && ro.pre != nil {
			acted, j, at, victims := ro.stepPreempting(t)
			if acted {
				if j >= 0 {
					ro.times[j*R+rep] = min(at, ro.horizon)
					if admittedWork += s.entries[j].work; lo < 0 && ro.h0 > 0 && admittedWork >= ro.loWork {
						lo = ro.times[j*R+rep]
					}
					if ro.trackLateness {
						ro.order = append(ro.order, int32(j))
					}
					admitted++
				}
				if ro.cycle > 0 && t+ro.cycle > t {
					nextAllowed = t + ro.cycle
				}
				if victims > 0 || len(ro.pre.failed) > 0 {
					ro.blocked = true
				}
				if victims > 0 {
					// Kueue requeues a preemptor at once and it stays its
					// ClusterQueue's head until the eviction ends and it is
					// admitted: no other workload of the ClusterQueue is
					// admitted or preempts before.
					nextAllowed = max(nextAllowed, at)
				}
				if events += 1 + victims; events > ro.budget {
					break
				}
				continue
			}
		} else if t >= nextAllowed {
			var j, c int
			var v int32
			var passedOver bool
			lane := -1
			if ro.fair != nil {
				j, c, v, lane, passedOver = ro.pickFair(t, ro.policy == StrictFIFO)
			} else if ro.policy == StrictFIFO {
				j, c, v = ro.pickStrict()
			} else {
				j, c, v, passedOver = ro.pickBestEffort()
			}
			if j >= 0 || c >= 0 {
				ro.take(v)
				latency := ro.latencyOf(j, t)
				if passedOver {
					ro.blocked = true
				}
				var bound float64
				var priority, law int32
				rec := int32(0)
				if j >= 0 {
					e := &s.entries[j]
					ro.times[j*R+rep] = min(t+latency, ro.horizon)
					if admittedWork += e.work; lo < 0 && ro.h0 > 0 && admittedWork >= ro.loWork {
						lo = ro.times[j*R+rep]
					}
					if ro.trackLateness {
						ro.order = append(ro.order, int32(j))
					}
					bound, priority, law = e.maxExec, e.priority, e.law
					switch {
					case ro.fair != nil:
						ro.fair.cursor[lane]++
						ro.fair.admit(j, t)
						rec = fairEntryRec(j)
					case ro.policy == StrictFIFO:
						ro.head++
					default:
						ro.cursor[e.shape]++
					}
					admitted++
				} else {
					ro.arrHead[c]++
					a := &s.arrivals[c]
					bound, priority, law = a.maxExec, a.priority, a.law
					if ro.fair != nil {
						rec = fairNoQueue
					}
				}
				svc := ro.clean(ro.serviceOf(law, priority).Sample(ro.rng), bound)
				ro.push(event{t: t + latency + svc, vec: v, rec: rec})
				if ro.cycle > 0 && t+ro.cycle > t {
					nextAllowed = t + ro.cycle
				}
				if events++; events > ro.budget {
					break
				}
				continue
			}
		}
		next := math.Inf(1)
		if t < nextAllowed {
			next = nextAllowed
		} else {
			// An admission opportunity with nothing admitted: what is
			// pending waits for quota.
			ro.blocked = true
			if len(ro.heap) > 0 {
				next = ro.heap[0].t
			}
			next = min(next, ro.arrDue)
		}
		if !(next <= ro.horizon) {
			break
		}
		t = next
	}

	hi := 0.0
	for j := range m {
		hi = max(hi, ro.times[j*R+rep])
	}
	if lo < 0 {
		lo = hi
	}
	ro.lo[rep], ro.hi[rep] = lo, hi
	if ro.trackLateness && admitted == m {
		ro.addLateness(rep)
	}
}

// residual draws the remaining service of a running workload from its law,
// bounded by what its maximum execution time leaves (0 once past it).
func (ro *roller) residual(run runEntry, law ServiceModel) float64 {
	switch {
	case run.maxExec > 0 && run.age >= run.maxExec:
		return 0
	case run.maxExec > 0:
		return ro.clean(law.Residual(run.age, ro.rng), run.maxExec-run.age)
	default:
		return ro.clean(law.Residual(run.age, ro.rng), 0)
	}
}

// drawArrival returns the next arrival of class c after time t: an
// exponential gap at the class's rate, or +Inf once that falls at or after
// the time the class stops arriving.
func (ro *roller) drawArrival(c int, t float64) float64 {
	a := &ro.s.arrivals[c]
	next := t + expDraw(ro.rng)/a.rate
	if !(next < a.until) {
		return math.Inf(1)
	}
	return next
}

// arrivalBudget is the number of events a replica may spend on top of its
// own workloads for the arrivals it expects: twice the expected count of
// every class within min(until, horizon), at most maxArrivalBudget.
func arrivalBudget(classes []arrivalClass, horizon float64) int {
	n := 0.0
	for _, a := range classes {
		n += 2 * a.rate * min(a.until, horizon)
	}
	return int(min(n, maxArrivalBudget))
}

// maxArrivalBudget caps arrivalBudget, so that a replica spends at most
// about 65k events on arrivals (with the default 48 replicas, a few
// million in all).
const maxArrivalBudget = 1 << 16

// admissionLatency is the latency of one admission: a uniform draw from
// the measured sample when there is one, the fixed latency otherwise.
func (ro *roller) admissionLatency() float64 {
	if n := len(ro.latencies); n > 0 {
		return ro.latencies[ro.rng.IntN(n)]
	}
	return ro.latency
}

// latencyOf is the latency of entry j's admission decided at t (j < 0: an
// arrival's). For an untried entry admitted before the replica passed over
// any pending workload (at its first admission opportunity, or at the
// cycles after it while everything pending fits: the scheduler takes one
// head per cycle, so a burst's later workloads are first attempts too) it
// is max(L − w − t, 0), where w is what the entry has waited and L a
// uniform draw from the first-attempt latencies above w (see
// Queue.FirstAttemptLatencySample): the entry is admitted L − w from now (L
// already holds the wait for its cycle), or at t when its turn t comes
// later (an admission never precedes its decision). Any other admission,
// and one of an entry that has waited as long as every first attempt took,
// draws admissionLatency.
func (ro *roller) latencyOf(j int, t float64) float64 {
	if l, ok := ro.firstAttemptRest(ro.firstAttempt, j, t); ok {
		return l
	}
	return ro.admissionLatency()
}

// reactionOf is the delay from the roll's attempt at t of a preemptor
// (entry j, or an arrival for j < 0) to its preemption decision. Without a
// Queue.PreemptionReactionSample it is an admission latency (see
// admissionLatency). With one, it is a uniform draw from the sample — or,
// for an untried entry at its first attempt (as in latencyOf), the rest of
// a draw above its WaitedSeconds, max(R − w − t, 0).
func (ro *roller) reactionOf(j int, t float64) float64 {
	n := len(ro.reactions)
	if n == 0 {
		return ro.admissionLatency()
	}
	if r, ok := ro.firstAttemptRest(ro.reactions, j, t); ok {
		return r
	}
	return ro.reactions[ro.rng.IntN(n)]
}

// firstAttemptRest is, for entry j at its first attempt (j ≥ 0, untried,
// in a replica that passed over nothing yet) that has waited w, what is
// left at t of a delay counted from its arrival: max(min(L − w, ceiling) −
// t, 0) for L a uniform draw from the values of sample above w. It says
// false when that does not apply: another entry or an arrival, a replica
// already blocked, or no value of sample above w.
func (ro *roller) firstAttemptRest(sample []float64, j int, t float64) (float64, bool) {
	if j < 0 || ro.blocked || len(sample) == 0 || !ro.s.entries[j].untried {
		return 0, false
	}
	w := float64(ro.s.entries[j].waited)
	above := 0
	for _, l := range sample {
		if l > w {
			above++
		}
	}
	if above == 0 {
		return 0, false
	}
	k := ro.rng.IntN(above)
	for _, l := range sample {
		if l > w {
			if k == 0 {
				return max(min(l-w, ro.ceiling)-t, 0), true
			}
			k--
		}
	}
	return 0, false // not reached: k < above
}

// addLateness accumulates replica rep's lateness of the first h0 entries.
func (ro *roller) addLateness(rep int) {
	R := ro.samples
	entries := ro.s.entries
	k, cum := 0, 0.0
	for j, target := range ro.prefixWork {
		// The sums run in different orders: allow for rounding.
		target -= 1e-9 * target
		for k < len(ro.order) && cum < target {
			cum += entries[ro.order[k]].work
			k++
		}
		if k == 0 {
			continue // entries of zero work
		}
		reached := ro.times[int(ro.order[k-1])*R+rep]
		sh := entries[j].shape
		ro.lateSum[sh] += ro.times[j*R+rep] - reached
		ro.lateN[sh]++
	}
}

// latenessByHash returns the mean lateness per first-option hash.
func (ro *roller) latenessByHash() map[uint64]float64 {
	if !ro.trackLateness {
		return nil
	}
	sum := make(map[uint64]float64, len(ro.s.shapes))
	n := make(map[uint64]int, len(ro.s.shapes))
	for si, sh := range ro.s.shapes {
		sum[sh.firstHash] += ro.lateSum[si]
		n[sh.firstHash] += ro.lateN[si]
	}
	for h, c := range n {
		if c == 0 {
			delete(sum, h)
			continue
		}
		sum[h] /= float64(c)
	}
	return sum
}

func (ro *roller) fits(v int32) bool {
	for d, x := range ro.vecs[v] {
		if x > 0 && x > ro.free[d] {
			return false
		}
	}
	return true
}

func (ro *roller) firstFit(opts []int32) int32 {
	for _, v := range opts {
		if ro.fits(v) {
			return v
		}
	}
	return -1
}

// lentReturn marks the event of a lent holder's end (event.rec; the
// others have rec ≥ 0).
const lentReturn = -1

// returnLent gives back, of holder vector v, what is still lent.
func (ro *roller) returnLent(v int32) {
	for d, x := range ro.vecs[v] {
		if r := min(x, ro.lentLeft[d]); r > 0 {
			ro.free[d] = satAdd(ro.free[d], r)
			ro.lentLeft[d] -= r
		}
	}
}

func (ro *roller) take(v int32) {
	for d, x := range ro.vecs[v] {
		ro.free[d] -= x
	}
}

func (ro *roller) release(v int32) {
	for d, x := range ro.vecs[v] {
		ro.free[d] = satAdd(ro.free[d], x)
	}
}

// arrivalBefore reports whether the waiting head of class a comes before
// that of class b: higher priority first, then earlier arrival.
func (ro *roller) arrivalBefore(a, b int) bool {
	pa, pb := ro.s.arrivals[a].priority, ro.s.arrivals[b].priority
	if pa != pb {
		return pa > pb
	}
	return ro.arrQ[a][ro.arrHead[a]] < ro.arrQ[b][ro.arrHead[b]]
}

// pickBestEffort returns the first workload in queue order that fits:
// either an entry j (c = −1) or the head of arrival class c (j = −1), with
// the option vector it takes; j = c = −1 when nothing fits. passedOver
// says that the entry j comes after a pending entry that did not fit.
func (ro *roller) pickBestEffort() (j, c int, v int32, passedOver bool) {
	s := ro.s
	j, c = -1, -1
	earliestHead := math.MaxInt
	for si := range s.shapes {
		sh := &s.shapes[si]
		cur := int(ro.cursor[si])
		if cur >= len(sh.members) {
			continue
		}
		cand := int(sh.members[cur])
		earliestHead = min(earliestHead, cand)
		if j >= 0 && cand > j {
			continue
		}
		if o := ro.firstFit(sh.opts); o >= 0 {
			j, v = cand, o
		}
	}
	c, av := ro.nextFittingArrival()
	if c >= 0 && (j < 0 || s.entries[j].priority < s.arrivals[c].priority) {
		return -1, c, av, false
	}
	return j, -1, v, j > earliestHead
}

// nextArrival returns the arrival class whose waiting head comes first in
// arrivalBefore's order, or -1 when no arrival waits: what a StrictFIFO
// queue considers next, whether or not it fits.
func (ro *roller) nextArrival() int {
	c := -1
	for ci := range ro.s.arrivals {
		if ro.arrHead[ci] < len(ro.arrQ[ci]) && (c < 0 || ro.arrivalBefore(ci, c)) {
			c = ci
		}
	}
	return c
}

// nextFittingArrival returns, among the arrival classes whose waiting head
// fits the free quota now, the one first in arrivalBefore's order and the
// flavor option that fits it; c is -1 when none fits: what a
// BestEffortFIFO queue may admit from the arrivals.
func (ro *roller) nextFittingArrival() (c int, v int32) {
	c = -1
	for ci := range ro.s.arrivals {
		if ro.arrHead[ci] >= len(ro.arrQ[ci]) || (c >= 0 && !ro.arrivalBefore(ci, c)) {
			continue
		}
		if o := ro.firstFit(ro.s.arrivals[ci].opts); o >= 0 {
			c, v = ci, o
		}
	}
	return c, v
}

// pickStrict is pickBestEffort for StrictFIFO: only the head in queue order
// may be admitted.
func (ro *roller) pickStrict() (j, c int, v int32) {
	s := ro.s
	if c = ro.nextArrival(); c >= 0 && (ro.head >= len(s.entries) || s.entries[ro.head].priority < s.arrivals[c].priority) {
		if o := ro.firstFit(s.arrivals[c].opts); o >= 0 {
			return -1, c, o
		}
		return -1, -1, -1
	}
	if ro.head < len(s.entries) {
		if o := ro.firstFit(s.shapes[s.entries[ro.head].shape].opts); o >= 0 {
			return ro.head, -1, o
		}
	}
	return -1, -1, -1
}

func (ro *roller) push(e event) {
	h := append(ro.heap, e)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h[p].t <= e.t {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
	ro.heap = h
}

// pop removes the earliest event. It walks the hole from the root down to
// a leaf along the earlier children, then sifts the former last element up
// from there (Floyd's bottom-up variant: about half the comparisons of the
// textbook sift-down, since the last element usually belongs near a leaf).
func (ro *roller) pop() event {
	h := ro.heap
	top := h[0]
	n := len(h) - 1
	last := h[n]
	h = h[:n]
	ro.heap = h
	if n == 0 {
		return top
	}
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && h[r].t < h[c].t {
			c = r
		}
		h[i] = h[c]
		i = c
	}
	for i > 0 {
		p := (i - 1) / 2
		if h[p].t <= last.t {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = last
	return top
}

// siftDown moves h[i] down to its place in the min-heap on t.
func siftDown(h []event, i int) {
	n := len(h)
	e := h[i]
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		small := l
		if r := l + 1; r < n && h[r].t < h[l].t {
			small = r
		}
		if e.t <= h[small].t {
			break
		}
		h[i] = h[small]
		i = small
	}
	h[i] = e
}

func heapify(h []event) {
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
}

// summarize writes the mean and quantiles of each entry's admission times.
func (ro *roller) summarize(out []Estimate) {
	R := ro.samples
	for j := range ro.s.entries {
		col := ro.times[j*R : (j+1)*R]
		sum, top := 0.0, 0.0
		for _, x := range col {
			sum += x
			top = max(top, x)
		}
		e := &out[ro.s.entries[j].pos]
		mean := min(sum/float64(R), ro.horizon)
		e.ExpectedWaitSeconds = mean
		e.AdmissionOffsetSeconds = mean
		e.P50Seconds, e.P90Seconds = medianAndP90(col)
		e.Clamped = top >= ro.horizon
	}
}

// selectKth rearranges xs (no NaNs) so that xs[k] is its k-th smallest
// element (0-based), with xs[:k] ≤ xs[k] ≤ xs[k+1:]: Hoare's quickselect
// with a median-of-three pivot, O(len(xs)) on average.
func selectKth(xs []float64, k int) {
	lo, hi := 0, len(xs)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if xs[mid] < xs[lo] {
			xs[mid], xs[lo] = xs[lo], xs[mid]
		}
		if xs[hi] < xs[lo] {
			xs[hi], xs[lo] = xs[lo], xs[hi]
		}
		if xs[hi] < xs[mid] {
			xs[hi], xs[mid] = xs[mid], xs[hi]
		}
		pivot := xs[mid]
		i, j := lo, hi
		for i <= j {
			for xs[i] < pivot {
				i++
			}
			for xs[j] > pivot {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		// Now xs[lo..j] ≤ pivot ≤ xs[i..hi] and xs[j+1..i-1] = pivot.
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return
		}
	}
}

// medianAndP90 returns the type-7 quantiles 0.5 and 0.9 of xs (see
// quantile) by selection instead of sorting; xs is reordered.
func medianAndP90(xs []float64) (p50, p90 float64) {
	n := len(xs)
	h90 := float64(n-1) * 0.9
	k90 := int(h90)
	selectKth(xs, k90)
	x90, next90 := xs[k90], xs[k90]
	if k90+1 < n {
		next90 = slices.Min(xs[k90+1:])
	}
	p90 = x90 + (h90-float64(k90))*(next90-x90)

	h50 := float64(n-1) * 0.5
	k50 := int(h50)
	selectKth(xs[:k90+1], k50)
	x50, next50 := xs[k50], next90
	if k50+1 <= k90 {
		next50 = slices.Min(xs[k50+1 : k90+1])
	}
	p50 = x50 + (h50-float64(k50))*(next50-x50)
	return p50, max(p90, p50)
}

// quantile is the linear-interpolation quantile (Hyndman–Fan type 7) of a
// sorted, non-empty sample: with h = (n−1)p, x[⌊h⌋] + (h−⌊h⌋)(x[⌊h⌋+1]−x[⌊h⌋]).
func quantile(sorted []float64, p float64) float64 {
	h := float64(len(sorted)-1) * p
	lo := int(h)
	if lo+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

func meanVar(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	if len(xs) > 1 {
		variance /= float64(len(xs) - 1)
	}
	return mean, variance
}

// extrapolate fills the workloads beyond the count horizon from the
// throughput of the roll (formulas in [Forecaster.Forecast]).
func (ro *roller) extrapolate(out []Estimate, beyond []beyondEntry) {
	if len(beyond) == 0 {
		return
	}
	entries := ro.s.entries
	m := len(entries)
	muA, varA := meanVar(ro.hi)
	wbar := workOf(entries) / float64(m)

	rate, growth := 0.0, 0.0
	if ro.h0 >= 1 {
		muLo, varLo := meanVar(ro.lo)
		half := workOf(entries[ro.h0:])
		if elapsed := muA - muLo; elapsed > 0 && half > 0 {
			rate = half / elapsed
			growth = max(varA-varLo, 0) / half
		}
	}
	if !(rate > 0) || math.IsInf(rate, 0) {
		// Full capacity processes one unit of work (dominant share ×
		// seconds) per second; a cycle cap admits at most one workload per
		// cycle.
		rate = 1
		if ro.cycle > 0 && wbar > 0 {
			rate = min(rate, wbar/ro.cycle)
		}
		growth = wbar / (rate * rate)
	}
	anchorClamped := slices.Max(ro.hi) >= ro.horizon
	lateness := ro.latenessByHash()

	cum := 0.0
	for _, b := range beyond {
		cum += b.work
		mean := muA + cum/rate + lateness[b.hash]
		p90 := mean + z90*math.Sqrt(varA+growth*cum)
		e := &out[b.pos]
		e.Clamped = anchorClamped || p90 > ro.horizon || math.IsNaN(p90)
		mean = clampFinite(mean, ro.horizon)
		e.ExpectedWaitSeconds = mean
		e.AdmissionOffsetSeconds = mean
		e.P50Seconds = mean
		e.P90Seconds = max(clampFinite(p90, ro.horizon), mean)
	}
}

// clampFinite maps x into [0, horizon]; NaN maps to the horizon.
func clampFinite(x, horizon float64) float64 {
	if !(x <= horizon) {
		return horizon
	}
	return max(x, 0)
}
