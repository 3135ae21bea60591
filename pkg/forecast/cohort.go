package forecast

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// CohortMember is one ClusterQueue of a cohort tree in a joint roll (see
// [Forecaster.ForecastCohort]).
type CohortMember struct {
	// Queue is the ClusterQueue's live snapshot. Its Capacity is ignored:
	// what the member may use follows from the quotas below and the usage
	// of the whole cohort, as the roll goes.
	Queue Queue
	// Nominal is its nominal quota per flavor-resource (finite, ≥ 0; a
	// flavor-resource it does not list has nominal 0, but it may still
	// borrow it).
	Nominal capacity.Quantities
	// BorrowingLimit bounds what it may use beyond its nominal quota, per
	// flavor-resource; a flavor-resource absent from the map (or
	// capacity.Unlimited) has no bound. Values must be ≥ 0.
	BorrowingLimit capacity.Quantities
	// LendingLimit bounds what it lends to the cohort, per flavor-resource;
	// absent (or capacity.Unlimited): it lends all its nominal quota.
	// Values must be ≥ 0.
	LendingLimit capacity.Quantities
}

// Cohort is the ClusterQueues of one cohort tree, rolled together.
type Cohort struct {
	Members []CohortMember
	// RootQuota is, per flavor-resource, what the root cohort holds for
	// its members to share: Kueue's SubtreeQuota of the root (the quota
	// the members lend, plus the quota of the cohorts themselves, after
	// the lending limits of intermediate cohorts). Nil means the sum of
	// what the members lend, Σᵢ (nᵢ − gᵢ) (see [Forecaster.ForecastCohort]):
	// a single cohort without quota of its own. Values must be ≥ 0.
	RootQuota capacity.Quantities
}

// ForecastCohort rolls the ClusterQueues of one cohort tree together and
// returns, per member (same order), one [Estimate] per pending workload as
// [Forecaster.Forecast] does for a queue alone, drawing all randomness
// from r.
//
// Quota, as Kueue v0.19.2's scheduler snapshot resolves it, per
// flavor-resource, flattened to the root cohort. Member i has nominal nᵢ,
// usage uᵢ (the quota its running and admitted workloads hold), optional
// borrowing limit bᵢ and lending limit lᵢ. Its guaranteed quota, which it
// never lends, is gᵢ = max(0, nᵢ − lᵢ) (0 without a lending limit). The
// root pool is S (RootQuota, or Σᵢ (nᵢ − gᵢ)) and the root's usage
// U = Σᵢ max(0, uᵢ − gᵢ): what members use beyond their guaranteed quota.
// What member i may use now (Kueue's Available) is
//
//	Aᵢ = max(0, max(0, gᵢ − uᵢ) + min(S − U, (nᵢ − gᵢ) − max(0, uᵢ − gᵢ) + bᵢ))
//
// (without a borrowing limit the min is S − U), and the most it may ever
// use (PotentialAvailable, Aᵢ with no usage anywhere) is
// Pᵢ = min(gᵢ + S, nᵢ + bᵢ). A workload fits member i when every
// flavor-resource of its option is at most Aᵢ; options larger than Pᵢ
// are dropped as [Queue.Capacity] drops those that never fit. So a member
// borrows only what the others leave idle at that instant, up to its
// borrowing limit; what one borrows the others cannot; and quota a
// borrower holds comes back to the lender only when the borrower's
// workload ends.
//
// Hierarchical cohorts are flattened to the root: every member borrows
// from the root pool S directly, and the borrowing and lending limits of
// intermediate cohorts only act through S (RootQuota). That is exact for
// a single cohort; in a deeper tree it lets a member borrow across a
// subtree whose cohort's borrowing limit Kueue would enforce, and it does
// not keep quota lent within a subtree from the rest of the tree.
//
// Time and order: each member keeps its own roll state (running
// workloads, pending order, arrivals, cycle spacing, preemption within the
// ClusterQueue, all as in Forecast), and the members advance on one clock.
// At an instant, every member's completions are processed first (freed
// quota is visible to all), then the members whose next admission is due
// try one head each, in two passes that follow Kueue's ordering of the
// heads of a scheduling cycle: first each member may admit a workload that
// fits within its nominal quota (uᵢ + demand ≤ nᵢ: does not borrow), then
// each member that did not admit may admit one that borrows; within a pass
// members go in the order of Members (Kueue breaks the remaining ties by
// priority and creation time, which the roll does not compare across
// members). The first pass looks, under BestEffortFIFO, for the first
// workload of the member's order that fits without borrowing, so a
// workload that fits within nominal may go ahead of an earlier one that
// would borrow when both could be admitted at the same instant — Kueue
// would take the head. A member that has admitted all its rolled workloads
// stops admitting (and drawing arrivals) but its workloads still end and
// free their quota.
//
// Not modelled: preemption across the cohort (reclaimWithinCohort,
// borrowWithinCohort) — a lender waits for a borrower's workload to end —
// and fair sharing.
//
// It returns an error wrapping [ErrInvalidQueue] when a member's queue is
// invalid (see Forecast), when a nominal quota is negative or
// capacity.Unlimited, or when a limit or a RootQuota value is negative.
func (f *Forecaster) ForecastCohort(c Cohort, r *rand.Rand) ([][]Estimate, error) {
	return f.forecastCohort(c, r, rollJointReplica)
}

// jointRoller rolls one replica of a joint roll.
type jointRoller func(ros []*roller, pool *cohortPool, js *jointState, rep int, horizon float64)

func (f *Forecaster) forecastCohort(c Cohort, r *rand.Rand, roll jointRoller) ([][]Estimate, error) {
	if err := validateCohort(c, r); err != nil {
		return nil, err
	}
	outs := make([][]Estimate, len(c.Members))
	if len(c.Members) == 0 {
		return outs, nil
	}
	pool, keys := newCohortPool(c)
	ros := make([]*roller, len(c.Members))
	beyond := make([][]beyondEntry, len(c.Members))
	rolled := false
	for i := range c.Members {
		q := c.Members[i].Queue
		potential := make(capacity.Quantities, len(keys))
		for d, k := range keys {
			potential[k] = pool.potential(i, d)
		}
		var s *scene
		outs[i], s, beyond[i] = f.prepare(q, potential)
		ro := newRoller(s, q, f, r)
		ro.co, ro.member = pool, i
		ro.initUsage = make([]int64, s.dims)
		for d := range s.dims {
			ro.initUsage[d] = satSub(s.total[d], s.initFree[d])
		}
		ros[i] = ro
		rolled = rolled || len(s.entries) > 0
	}
	if !rolled {
		return outs, nil
	}
	js := &jointState{}
	for rep := range f.samples {
		roll(ros, pool, js, rep, f.horizonSeconds)
	}
	for i, ro := range ros {
		if len(ro.s.entries) == 0 {
			continue
		}
		ro.summarize(outs[i])
		ro.extrapolate(outs[i], beyond[i])
	}
	return outs, nil
}

// rollJointReplica rolls replica rep of every member on one clock (see
// ForecastCohort for the order of events at an instant).
//
// It is event-driven, so that a step costs about O(log M) for M members
// rather than O(M): members sit in a min-heap by the time of their own
// next event (a completion, an arrival, the end of their cycle); at an
// instant only the members with an event then are settled; a member whose
// admission attempt fails is blocked until its own next event or until
// the root's usage falls (a member elsewhere gives back borrowed quota),
// as nothing else can make it fit (a member that may preempt within its
// ClusterQueue is never blocked). The outcome is the same as trying every
// member at every instant.
func rollJointReplica(ros []*roller, pool *cohortPool, js *jointState, rep int, horizon float64) {
	js.reset(len(ros), pool.dims)
	for i, ro := range ros {
		ro.begin(rep)
		js.setDue(i, 0)
	}
	open := 0
	for _, ro := range ros {
		if !ro.done {
			open++
		}
	}
	epoch := pool.epoch
	t := 0.0
	for {
		for js.size() > 0 && js.due[js.heap[0]] <= t {
			i := js.heap[0]
			ro := ros[i]
			wasDone := ro.done
			ro.settle(t)
			js.needValid[i] = false
			if ro.done && !wasDone {
				open--
			}
			if !ro.done && t >= ro.nextAllowed {
				js.makeReady(i)
			}
			js.setDue(i, ro.nextEvent(t, true))
		}
		if pool.epoch != epoch {
			epoch = pool.epoch
			js.unblockAll(pool)
		}
		if len(js.ready) > 0 {
			any := false
			for pass := range 2 {
				pool.noBorrow = pass == 0
				for k := 0; k < len(js.ready); k++ {
					i := js.ready[k]
					ro := ros[i]
					if js.acted[i] {
						continue
					}
					if ro.pre == nil && js.cannotFit(ro, pool) {
						if pass == 1 {
							js.block(k, ro, pool)
							k--
						}
						continue
					}
					if ro.admitOnce(t) {
						js.acted[i], any = true, true
						if pool.epoch != epoch {
							// It gave back borrowed quota (preempting
							// within its ClusterQueue): the blocked
							// members behind it try again in this pass.
							epoch = pool.epoch
							js.unblockAll(pool)
							k, _ = slices.BinarySearch(js.ready, i)
						}
						continue
					}
					// A queue that may preempt within itself is
					// tried at every instant: whom it could preempt
					// depends on what the cohort leaves it, which
					// the others' admissions change.
					if pass == 1 && ro.pre == nil {
						js.block(k, ro, pool)
						k--
					}
				}
			}
			pool.noBorrow = false
			if any {
				for k := 0; k < len(js.ready); k++ {
					i := js.ready[k]
					if !js.acted[i] {
						continue
					}
					js.acted[i] = false
					js.needValid[i] = false
					ro := ros[i]
					if ro.done {
						open--
					}
					if ro.done || t < ro.nextAllowed {
						js.ready = slices.Delete(js.ready, k, k+1)
						k--
					}
					js.setDue(i, ro.nextEvent(t, true))
				}
				continue
			}
		}
		if open <= 0 || js.size() == 0 {
			break
		}
		next := js.due[js.heap[0]]
		if !(next <= horizon) {
			break
		}
		t = next
	}
	for _, ro := range ros {
		ro.end()
	}
}

// jointState is the scheduling state of a joint replica: the members by
// the time of their next own event (an indexed min-heap: pos[i] is member
// i's index in heap, −1 when absent, due[i] its time), the members that
// may try an admission now (ready, in member order), those whose attempt
// failed (blocked), and who acted in the current round.
type jointState struct {
	heap    []int
	pos     []int
	due     []float64
	ready   []int
	blocked []int
	// isBlocked marks the members in blocked (entries of members made
	// ready since are stale).
	isBlocked []bool
	acted     []bool
	// byDim[d] holds members blocked until the root's free quota in
	// dimension d reaches a threshold (a min-heap on it; see block), gen
	// each member's blocking count and minNeed scratch.
	byDim [][]dimWait
	gen   []uint32
	// minNeed[i*dims:(i+1)*dims] caches member i's smallest demand (see
	// fillMinNeed) while needValid[i]; hasNeed[i]: it has a waiting head.
	minNeed   []int64
	needValid []bool
	hasNeed   []bool
}

func (js *jointState) reset(n, dims int) {
	if len(js.byDim) != dims {
		js.byDim = make([][]dimWait, dims)
	}
	for d := range js.byDim {
		js.byDim[d] = js.byDim[d][:0]
	}
	if len(js.needValid) != n || len(js.minNeed) != n*dims {
		js.minNeed = make([]int64, n*dims)
	}
	if len(js.pos) != n {
		js.needValid = make([]bool, n)
		js.hasNeed = make([]bool, n)
		js.gen = make([]uint32, n)
		js.pos = make([]int, n)
		js.due = make([]float64, n)
		js.acted = make([]bool, n)
		js.isBlocked = make([]bool, n)
	}
	js.heap = js.heap[:0]
	js.ready = js.ready[:0]
	js.blocked = js.blocked[:0]
	for i := range n {
		js.pos[i] = -1
		js.acted[i] = false
		js.isBlocked[i] = false
		js.needValid[i] = false
	}
}

func (js *jointState) size() int { return len(js.heap) }

// makeReady puts member i among the ready ones (and out of blocked).
func (js *jointState) makeReady(i int) {
	if js.isBlocked[i] {
		// Its entry in blocked goes stale; unblockAll skips it.
		js.isBlocked[i] = false
	}
	k, found := slices.BinarySearch(js.ready, i)
	if !found {
		js.ready = slices.Insert(js.ready, k, i)
	}
}

// block moves the member at index k of ready (ro) to the blocked ones.
// When one dimension d explains why nothing of it can fit — the
// component-wise smallest demand m of its waiting heads needs more of the
// root's free quota R_d = S − U than there is (m_d > max(0, gᵢ − uᵢ) +
// R_d) — it waits in byDim[d] for R_d to reach that threshold; when its
// own quota or borrowing limit is what stops it, only its own next event
// wakes it; otherwise any fall of the root's usage does (blocked).
func (js *jointState) block(k int, ro *roller, pool *cohortPool) {
	i := js.ready[k]
	js.ready = slices.Delete(js.ready, k, k+1)
	js.isBlocked[i] = true
	js.gen[i]++
	d, thresh, ownOnly := js.bindingDim(ro, pool)
	switch {
	case ownOnly:
	case d >= 0:
		js.pushDim(d, dimWait{member: i, gen: js.gen[i], thresh: thresh})
	default:
		js.blocked = append(js.blocked, i)
	}
}

// bindingDim finds the dimension described at block (d ≥ 0 with its
// threshold on R_d), or reports that only the member's own events can let
// it fit (ownOnly), or neither (d = −1).
func (js *jointState) bindingDim(ro *roller, pool *cohortPool) (d int, thresh int64, ownOnly bool) {
	s := ro.s
	i := ro.member
	m := js.minNeed[i*s.dims : (i+1)*s.dims]
	if !js.needValid[i] {
		js.needValid[i] = true
		js.hasNeed[i] = js.fillMinNeed(ro, m)
	}
	if !js.hasNeed[i] {
		return -1, 0, true
	}
	base := ro.member * pool.dims
	for d, x := range m {
		if x <= 0 {
			continue
		}
		if x > ro.free[d] {
			return -1, 0, true
		}
		u, g := pool.usage[base+d], pool.guaranteed[base+d]
		local := max(g-u, 0)
		if b := pool.borrowLimit[base+d]; b >= 0 && satAdd(local, satAdd(pool.nominal[base+d]-g-max(u-g, 0), b)) < x {
			return -1, 0, true
		}
		if need := x - local; satSub(pool.pool[d], pool.rootUsage[d]) < need {
			return d, need, false
		}
	}
	return -1, 0, false
}

// fillMinNeed writes into m the component-wise smallest demand of the
// member's waiting heads (their options) and reports whether it has any.
// It changes only with the member's own admissions and arrivals.
func (js *jointState) fillMinNeed(ro *roller, m []int64) bool {
	s := ro.s
	for d := range m {
		m[d] = math.MaxInt64
	}
	any := false
	merge := func(opts []int32) {
		for _, v := range opts {
			any = true
			for d, x := range ro.vecs[v] {
				m[d] = min(m[d], x)
			}
		}
	}
	if ro.policy == StrictFIFO {
		if ro.head < len(s.entries) {
			merge(s.shapes[s.entries[ro.head].shape].opts)
		}
	} else {
		for si := range s.shapes {
			if int(ro.cursor[si]) < len(s.shapes[si].members) {
				merge(s.shapes[si].opts)
			}
		}
	}
	for c := range s.arrivals {
		if ro.arrHead[c] < len(ro.arrQ[c]) {
			merge(s.arrivals[c].opts)
		}
	}
	return any
}

// cannotFit is a quick sufficient test that member ro can admit nothing
// now (see block); only for a member that cannot preempt.
func (js *jointState) cannotFit(ro *roller, pool *cohortPool) bool {
	d, _, ownOnly := js.bindingDim(ro, pool)
	return ownOnly || d >= 0
}

// dimWait is a member blocked until the root's free quota in one
// dimension reaches thresh; gen tells a stale entry (the member was woken
// since).
type dimWait struct {
	member int
	gen    uint32
	thresh int64
}

func (js *jointState) pushDim(d int, w dimWait) {
	h := append(js.byDim[d], w)
	k := len(h) - 1
	for k > 0 {
		p := (k - 1) / 2
		if h[p].thresh <= w.thresh {
			break
		}
		h[k] = h[p]
		k = p
	}
	h[k] = w
	js.byDim[d] = h
}

func (js *jointState) popDim(d int) dimWait {
	h := js.byDim[d]
	top := h[0]
	n := len(h) - 1
	last := h[n]
	h = h[:n]
	k := 0
	for {
		c := 2*k + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && h[r].thresh < h[c].thresh {
			c = r
		}
		if last.thresh <= h[c].thresh {
			break
		}
		h[k] = h[c]
		k = c
	}
	if n > 0 {
		h[k] = last
	}
	js.byDim[d] = h
	return top
}

// unblockAll makes ready again the blocked members that the root's usage
// falling may let fit: those in blocked, and those in byDim whose
// threshold the root's free quota now reaches.
func (js *jointState) unblockAll(pool *cohortPool) {
	n := len(js.ready)
	wake := func(i int) {
		if js.isBlocked[i] {
			js.isBlocked[i] = false
			js.ready = append(js.ready, i)
		}
	}
	for _, i := range js.blocked {
		wake(i)
	}
	js.blocked = js.blocked[:0]
	for d := range js.byDim {
		free := satSub(pool.pool[d], pool.rootUsage[d])
		for len(js.byDim[d]) > 0 && js.byDim[d][0].thresh <= free {
			w := js.popDim(d)
			if w.gen == js.gen[w.member] {
				wake(w.member)
			}
		}
	}
	if len(js.ready) > n {
		slices.Sort(js.ready)
	}
}

// setDue sets member i's next event time (+Inf: none) in the heap.
func (js *jointState) setDue(i int, t float64) {
	if k := js.pos[i]; k >= 0 {
		js.removeAt(k)
	}
	if math.IsInf(t, 1) {
		return
	}
	js.due[i] = t
	js.heap = append(js.heap, i)
	js.pos[i] = len(js.heap) - 1
	js.up(len(js.heap) - 1)
}

func (js *jointState) less(a, b int) bool {
	ia, ib := js.heap[a], js.heap[b]
	if js.due[ia] != js.due[ib] {
		return js.due[ia] < js.due[ib]
	}
	return ia < ib
}

func (js *jointState) swap(a, b int) {
	js.heap[a], js.heap[b] = js.heap[b], js.heap[a]
	js.pos[js.heap[a]], js.pos[js.heap[b]] = a, b
}

func (js *jointState) up(k int) {
	for k > 0 {
		p := (k - 1) / 2
		if !js.less(k, p) {
			break
		}
		js.swap(k, p)
		k = p
	}
}

func (js *jointState) down(k int) {
	n := len(js.heap)
	for {
		l := 2*k + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && js.less(r, l) {
			c = r
		}
		if !js.less(c, k) {
			break
		}
		js.swap(c, k)
		k = c
	}
}

func (js *jointState) removeAt(k int) {
	i := js.heap[k]
	last := len(js.heap) - 1
	if k != last {
		js.swap(k, last)
	}
	js.heap = js.heap[:last]
	js.pos[i] = -1
	if k < last {
		js.down(k)
		js.up(k)
	}
}

func validateCohort(c Cohort, r *rand.Rand) error {
	for k, v := range c.RootQuota {
		if v < 0 {
			return fmt.Errorf("%w: cohort root quota %v of %v is negative", ErrInvalidQueue, v, k)
		}
	}
	for i := range c.Members {
		m := &c.Members[i]
		if err := validate(m.Queue, r); err != nil {
			return fmt.Errorf("cohort member %d: %w", i, err)
		}
		for k, v := range m.Nominal {
			if v < 0 || v == capacity.Unlimited {
				return fmt.Errorf("%w: cohort member %d nominal quota %v of %v must be finite and >= 0", ErrInvalidQueue, i, v, k)
			}
		}
		for k, v := range m.BorrowingLimit {
			if v < 0 {
				return fmt.Errorf("%w: cohort member %d borrowing limit %v of %v is negative", ErrInvalidQueue, i, v, k)
			}
		}
		for k, v := range m.LendingLimit {
			if v < 0 {
				return fmt.Errorf("%w: cohort member %d lending limit %v of %v is negative", ErrInvalidQueue, i, v, k)
			}
		}
	}
	return nil
}

// cohortPool is the quota state of a joint roll, flattened to the root
// cohort (formulas in [Forecaster.ForecastCohort]). Per member and
// dimension (members × dims, row-major): nominal nᵢ, guaranteed gᵢ,
// borrowing limit bᵢ (−1: none) and usage uᵢ; per dimension the root pool
// S and its usage U = Σᵢ max(0, uᵢ − gᵢ).
type cohortPool struct {
	dims                             int
	nominal, guaranteed, borrowLimit []int64
	usage                            []int64
	pool, rootUsage                  []int64
	// epoch counts the changes that lowered the root's usage: a member
	// that could not fit may fit after one.
	epoch uint64
	// noBorrow restricts fits to what stays within the member's nominal
	// quota (the first pass of an instant).
	noBorrow bool
}

// newCohortPool builds the pool over the union of the flavor-resources of
// the members' nominal quotas and of RootQuota, and returns those keys in
// the order of the pool's (and the members' scenes') dimensions.
func newCohortPool(c Cohort) (*cohortPool, []capacity.FlavorResource) {
	union := make(capacity.Quantities)
	for i := range c.Members {
		for k := range c.Members[i].Nominal {
			union[k] = 0
		}
	}
	for k := range c.RootQuota {
		union[k] = 0
	}
	keys := union.Keys()
	n, dims := len(c.Members), len(keys)
	p := &cohortPool{
		dims:        dims,
		nominal:     make([]int64, n*dims),
		guaranteed:  make([]int64, n*dims),
		borrowLimit: make([]int64, n*dims),
		usage:       make([]int64, n*dims),
		pool:        make([]int64, dims),
		rootUsage:   make([]int64, dims),
	}
	for i := range c.Members {
		m := &c.Members[i]
		for d, k := range keys {
			at := i*dims + d
			nom := max(m.Nominal[k], 0)
			p.nominal[at] = nom
			if l, ok := m.LendingLimit[k]; ok && l != capacity.Unlimited {
				p.guaranteed[at] = max(nom-l, 0)
			}
			p.borrowLimit[at] = -1
			if b, ok := m.BorrowingLimit[k]; ok && b != capacity.Unlimited {
				p.borrowLimit[at] = b
			}
			if c.RootQuota == nil {
				p.pool[d] = satAdd(p.pool[d], nom-p.guaranteed[at])
			}
		}
	}
	if c.RootQuota != nil {
		for d, k := range keys {
			p.pool[d] = c.RootQuota[k]
		}
	}
	return p, keys
}

// potential is Pᵢ = min(gᵢ + S, nᵢ + bᵢ) in dimension d, kept below
// capacity.Unlimited so that every dimension of a member's scene bounds it.
func (p *cohortPool) potential(i, d int) int64 {
	at := i*p.dims + d
	v := satAdd(p.guaranteed[at], p.pool[d])
	if b := p.borrowLimit[at]; b >= 0 {
		v = min(v, satAdd(p.nominal[at], b))
	}
	return min(v, capacity.Unlimited-1)
}

// available is Aᵢ in dimension d (Kueue's Available).
func (p *cohortPool) available(i, d int) int64 {
	at := i*p.dims + d
	u, g := p.usage[at], p.guaranteed[at]
	fromRoot := satSub(p.pool[d], p.rootUsage[d])
	if b := p.borrowLimit[at]; b >= 0 {
		fromRoot = min(fromRoot, satAdd(p.nominal[at]-g-max(u-g, 0), b))
	}
	return max(satAdd(max(g-u, 0), fromRoot), 0)
}

// fits reports whether demand vector v fits member i now: at most Aᵢ in
// every dimension, and with noBorrow within its nominal quota.
func (p *cohortPool) fits(i int, v []int64) bool {
	for d, x := range v {
		if x <= 0 {
			continue
		}
		if x > p.available(i, d) {
			return false
		}
		if p.noBorrow && satAdd(p.usage[i*p.dims+d], x) > p.nominal[i*p.dims+d] {
			return false
		}
	}
	return true
}

// add adds (sign 1) or removes (−1) v to member i's usage, and what it
// changes beyond the guaranteed quota to the root's usage (Kueue's
// addUsage/removeUsage, flattened).
func (p *cohortPool) add(i int, v []int64, sign int64) {
	base := i * p.dims
	for d, x := range v {
		if x == 0 {
			continue
		}
		u, g := p.usage[base+d], p.guaranteed[base+d]
		after := satAdd(u, x)
		if sign < 0 {
			after = satSub(u, x)
		}
		p.usage[base+d] = after
		before, now := max(satSub(u, g), 0), max(satSub(after, g), 0)
		p.rootUsage[d] = satAdd(satSub(p.rootUsage[d], before), now)
		if now < before {
			p.epoch++
		}
	}
}

// resetMember sets member i's usage to usage (its running workloads at the
// start of a replica) and the root's usage with it.
func (p *cohortPool) resetMember(i int, usage []int64) {
	base := i * p.dims
	for d := range p.dims {
		u, g := p.usage[base+d], p.guaranteed[base+d]
		p.rootUsage[d] = satSub(p.rootUsage[d], max(satSub(u, g), 0))
		p.usage[base+d] = usage[d]
		p.rootUsage[d] = satAdd(p.rootUsage[d], max(satSub(usage[d], g), 0))
	}
}

// freeFor is what member i may add in dimension d now.
func (p *cohortPool) freeFor(i, d int) int64 {
	v := p.available(i, d)
	if p.noBorrow {
		v = min(v, satSub(p.nominal[i*p.dims+d], p.usage[i*p.dims+d]))
	}
	return v
}
