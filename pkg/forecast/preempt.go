package forecast

import (
	"encoding/binary"
	"slices"
)

// The roll with preemption (see "Preemption" in [Forecaster.Forecast]).
// It replaces the per-shape cursor scan by a walk of the waiting heads in
// Kueue's order, and tracks who holds quota at which priority so that
// victims can be chosen as Kueue's classical preemptor chooses them.

// Tiers order the waiting workloads of one priority: those running at the
// start (created before any pending one), then the pending ones in queue
// order, then the arrivals by arrival time.
const (
	tierRunning int8 = iota
	tierPending
	tierArrival
)

// Where a waiting head comes from.
const (
	srcShape   int8 = iota // the next member of shape idx (BestEffortFIFO)
	srcHead                // the next entry (StrictFIFO)
	srcArrival             // the oldest waiting arrival of class ref
	srcBack                // back[idx], a preempted workload
)

// waiter is a workload that waits for admission in a roll with preemption.
type waiter struct {
	prio    int32
	tier    int8
	src     int8
	seq     float64 // running index (by age), entry index or arrival time
	ref     int32   // entry index, arrival class or running index
	idx     int32   // shape (srcShape) or index in back (srcBack)
	opts    []int32
	maxExec float64
	// service is the remaining service of a preempted workload; < 0 means
	// a fresh draw at admission.
	service float64
}

// before reports whether a comes before b in Kueue's order: higher
// priority first, then tier, then sequence.
func (a *waiter) before(b *waiter) bool {
	if a.prio != b.prio {
		return a.prio > b.prio
	}
	if a.tier != b.tier {
		return a.tier < b.tier
	}
	return a.seq < b.seq
}

// runRec is one workload holding quota in a replica with preemption.
type runRec struct {
	prio    int32
	level   int32
	vec     int32
	tier    int8
	seq     float64
	ref     int32
	opts    []int32
	maxExec float64
	// reservedAt is when its quota was reserved (Kueue's candidate order
	// preempts the most recently admitted first); start and end bound its
	// service.
	reservedAt, start, end float64
	evicted                bool
}

// preemption is the roller's state for a queue that may preempt.
type preemption struct {
	policy  PreemptionPolicy
	levels  []int32 // distinct priorities, ascending
	usage   []int64 // quota held per level, levels × dims
	runOpts [][]int32
	recs    []runRec
	back    []waiter
	heads   []waiter
	failed  []failure
	cands   []int32
	need    []bool
	count   int
	max     int
	restart bool
	// delay is from the decision to the preemptor's admission, evict from
	// the decision to the end of the victims' eviction.
	delay, evict float64
}

// newPreemption returns the preemption state of the scene, or nil when the
// policy can never preempt anything in it (Never, or LowerPriority with a
// single priority).
func newPreemption(s *scene, q *Queue) *preemption {
	policy := q.WithinClusterQueue
	if policy == PreemptionNever {
		return nil
	}
	var levels []int32
	for _, r := range s.running {
		levels = append(levels, r.priority)
	}
	for _, e := range s.entries {
		levels = append(levels, e.priority)
	}
	for _, a := range s.arrivals {
		levels = append(levels, a.priority)
	}
	slices.Sort(levels)
	levels = slices.Compact(levels)
	if policy == PreemptionLowerPriority && len(levels) < 2 {
		return nil
	}
	p := &preemption{
		policy:  policy,
		levels:  levels,
		usage:   make([]int64, len(levels)*s.dims),
		runOpts: make([][]int32, len(s.running)),
		need:    make([]bool, s.dims),
		max:     4*(len(s.entries)+len(s.running)) + 256,
		restart: q.PreemptedRestart,
		delay:   q.PreemptionDelaySeconds,
	}
	if p.delay == 0 {
		p.delay = 2 * q.AdmissionLatencySeconds
	}
	p.evict = max(p.delay-q.AdmissionLatencySeconds, 0)
	// Running workloads of equal usage share one option list, so that a
	// failed walk skips all of them (see stepPreempting).
	byUsage := make(map[string][]int32)
	var key []byte
	for i, r := range s.running {
		key = key[:0]
		for _, x := range s.vec(r.vec) {
			key = binary.LittleEndian.AppendUint64(key, uint64(x))
		}
		opts, ok := byUsage[string(key)]
		if !ok {
			opts = []int32{r.vec}
			byUsage[string(key)] = opts
		}
		p.runOpts[i] = opts
	}
	return p
}

// level is the index of priority prio in p.levels.
func (p *preemption) level(prio int32) int32 {
	l, _ := p.search(prio)
	return int32(l)
}

// search is slices.BinarySearch(p.levels, prio): where prio is or would
// be in the ascending levels, and whether it is there. A queue has few
// priorities, and a scan of a few is cheaper than the search.
func (p *preemption) search(prio int32) (int, bool) {
	if len(p.levels) > 8 {
		return slices.BinarySearch(p.levels, prio)
	}
	for i, l := range p.levels {
		if l >= prio {
			return i, l == prio
		}
	}
	return len(p.levels), false
}

// hold adds (sign 1) or removes (−1) vector v to the quota held at level l.
func (ro *roller) hold(l int32, v int32, sign int64) {
	u := ro.pre.usage[int(l)*ro.s.dims:]
	for d, x := range ro.vecs[v] {
		u[d] += sign * x
	}
}

// resetPreemption starts a replica: the running workloads become records
// 0..N_run−1 (their heap events carry those indexes).
func (ro *roller) resetPreemption() {
	p := ro.pre
	p.recs = p.recs[:0]
	p.back = p.back[:0]
	p.count = 0
	clear(p.usage)
	for i, run := range ro.s.running {
		l := p.level(run.priority)
		p.recs = append(p.recs, runRec{
			prio: run.priority, level: l, vec: run.vec,
			tier: tierRunning, seq: -run.age, ref: int32(i), opts: p.runOpts[i], maxExec: run.maxExec,
			reservedAt: -run.age, start: -run.age, end: ro.heap[i].t,
		})
		ro.hold(l, run.vec, 1)
	}
}

// complete ends the service of the workload of event ev, unless it was
// preempted meanwhile.
func (ro *roller) complete(ev event) {
	r := &ro.pre.recs[ev.rec]
	if r.evicted {
		return
	}
	ro.release(ev.vec)
	ro.hold(r.level, ev.vec, -1)
}

// stepPreempting is one admission opportunity at time t with preemption:
// it admits the first waiting workload in Kueue's order that fits, or lets
// it preempt (StrictFIFO: only the first one). It reports whether it
// acted, the entry admitted for the first time (−1 if none) with its
// admission time, and the number of victims.
//
// The heads of the shapes and arrival classes (p.heads) and the preempted
// workloads (p.back) are each kept in Kueue's order as they change, and
// the two are merged. A workload whose option list and priority already
// failed (neither fits nor can preempt) in this walk is skipped: one
// behind it in order has no more candidates to preempt.
func (ro *roller) stepPreempting(t float64) (acted bool, j int, at float64, victims int) {
	p := ro.pre
	p.failed = p.failed[:0]
	h, b := 0, 0
	for h < len(p.heads) || b < len(p.back) {
		var w *waiter
		head := -1
		if b >= len(p.back) || (h < len(p.heads) && p.heads[h].before(&p.back[b])) {
			w, head = &p.heads[h], h
			h++
		} else {
			w = &p.back[b]
			w.src, w.idx = srcBack, int32(b)
			b++
		}
		if p.hasFailed(w) {
			continue
		}
		if v := ro.firstFit(w.opts); v >= 0 {
			entry := -1
			if w.src == srcHead || w.src == srcShape {
				entry = int(w.ref)
			}
			j, at = ro.admitWaiter(w, v, t, ro.latencyOf(entry, t))
			ro.advanceHead(head)
			return true, j, at, 0
		}
		if p.count < p.max {
			// The scheduler reacts to the preemptor (its arrival, or the
			// event that made it the head): a measured reaction, or one
			// admission latency, to the preemption decision, then the
			// delay.
			entry := -1
			if w.src == srcHead || w.src == srcShape {
				entry = int(w.ref)
			}
			if v := ro.chooseVictims(w); v >= 0 {
				reaction := ro.reactionOf(entry, t)
				delay, evict := ro.preemptionDelay()
				n := ro.evictVictims(t + reaction + evict)
				p.count++
				j, at = ro.admitWaiter(w, v, t, reaction+delay)
				ro.advanceHead(head)
				return true, j, at, n
			}
		}
		if ro.policy == StrictFIFO {
			break
		}
		p.failed = append(p.failed, failure{opts: w.opts, prio: w.prio})
	}
	return false, -1, 0, 0
}

// resetHeads fills p.heads with the first waiting workload of every shape
// (BestEffortFIFO) or the first entry (StrictFIFO), in Kueue's order, at
// the start of a replica; no arrival is waiting yet.
func (ro *roller) resetHeads() {
	p := ro.pre
	p.heads = p.heads[:0]
	if ro.policy == StrictFIFO {
		if len(ro.s.entries) > 0 {
			p.insertHead(ro.entryWaiter(0, srcHead, 0))
		}
		return
	}
	for si := range ro.s.shapes {
		if sh := &ro.s.shapes[si]; len(sh.members) > 0 {
			p.insertHead(ro.entryWaiter(int(sh.members[0]), srcShape, int32(si)))
		}
	}
}

// arrivalHead is the oldest waiting arrival of class c as a waiter; the
// caller checks that there is one.
func (ro *roller) arrivalHead(c int) waiter {
	a := &ro.s.arrivals[c]
	return waiter{
		prio: a.priority, tier: tierArrival, src: srcArrival, seq: ro.arrQ[c][ro.arrHead[c]],
		ref: int32(c), opts: a.opts, maxExec: a.maxExec, service: -1,
	}
}

// advanceHead replaces p.heads[i], just admitted, by the next waiting
// workload of its source, if any, at its place in Kueue's order. A
// negative i (a preempted workload was admitted) changes nothing.
func (ro *roller) advanceHead(i int) {
	if i < 0 {
		return
	}
	p := ro.pre
	w := &p.heads[i]
	switch c := int(w.ref); {
	case w.src == srcShape && int(ro.cursor[w.idx]) < len(ro.s.shapes[w.idx].members):
		*w = ro.entryWaiter(int(ro.s.shapes[w.idx].members[ro.cursor[w.idx]]), srcShape, w.idx)
	case w.src == srcHead && ro.head < len(ro.s.entries):
		*w = ro.entryWaiter(ro.head, srcHead, 0)
	case w.src == srcArrival && ro.arrHead[c] < len(ro.arrQ[c]):
		*w = ro.arrivalHead(c)
	default:
		p.heads = slices.Delete(p.heads, i, i+1)
		return
	}
	// In Kueue's order the next one of a source comes after the one it
	// replaces, so it usually moves back; a caller's list out of that
	// order may move it forward.
	for ; i+1 < len(p.heads) && p.heads[i+1].before(&p.heads[i]); i++ {
		p.heads[i], p.heads[i+1] = p.heads[i+1], p.heads[i]
	}
	for ; i > 0 && p.heads[i].before(&p.heads[i-1]); i-- {
		p.heads[i], p.heads[i-1] = p.heads[i-1], p.heads[i]
	}
}

// insertHead puts w into p.heads at its place in Kueue's order.
func (p *preemption) insertHead(w waiter) { p.heads = insertWaiter(p.heads, w) }

// insertWaiter inserts w into ws, which is in Kueue's order, after the
// waiters that do not come after it, and returns the slice.
func insertWaiter(ws []waiter, w waiter) []waiter {
	i := len(ws)
	ws = append(ws, w)
	for i > 0 && w.before(&ws[i-1]) {
		ws[i] = ws[i-1]
		i--
	}
	ws[i] = w
	return ws
}

// preemptionDelay is the delay of one preemption from its decision to the
// preemptor's admission, and from the decision to the end of the victims'
// eviction: a uniform draw d from Queue.PreemptionDelaySample and
// max(d − AdmissionLatencySeconds, 0) when there is one, the fixed delays
// otherwise.
func (ro *roller) preemptionDelay() (delay, evict float64) {
	if n := len(ro.delays); n > 0 {
		d := ro.delays[ro.rng.IntN(n)]
		return d, max(d-ro.latency, 0)
	}
	return ro.pre.delay, ro.pre.evict
}

// failure is an option list and priority that neither fits nor can
// preempt at this admission opportunity.
type failure struct {
	opts []int32
	prio int32
}

func (p *preemption) hasFailed(w *waiter) bool {
	for _, f := range p.failed {
		if f.prio == w.prio && len(f.opts) == len(w.opts) && &f.opts[0] == &w.opts[0] {
			return true
		}
	}
	return false
}

// lawOf is the service class of a waiting workload that has not run: a
// pending entry's or an arrival's (a preempted one has its remaining
// service and draws nothing).
func (ro *roller) lawOf(w *waiter) int32 {
	switch w.src {
	case srcShape, srcHead:
		return ro.s.entries[w.ref].law
	case srcArrival:
		return ro.s.arrivals[w.ref].law
	}
	return 0
}

// requeue inserts a preempted workload into back, which stays in Kueue's
// order.
func (p *preemption) requeue(w waiter) { p.back = insertWaiter(p.back, w) }

func (ro *roller) entryWaiter(j int, src int8, shape int32) waiter {
	e := &ro.s.entries[j]
	return waiter{
		prio: e.priority, tier: tierPending, src: src, seq: float64(j), ref: int32(j), idx: shape,
		opts: ro.s.shapes[e.shape].opts, maxExec: e.maxExec, service: -1,
	}
}

// admitWaiter reserves option v for w at t and starts its service delay
// later; it returns the entry admitted for the first time (−1 if none) and
// the admission time.
func (ro *roller) admitWaiter(w *waiter, v int32, t, delay float64) (int, float64) {
	p := ro.pre
	ro.take(v)
	l := p.level(w.prio)
	ro.hold(l, v, 1)
	at := t + delay
	svc := w.service
	if svc < 0 {
		svc = ro.clean(ro.serviceOf(ro.lawOf(w), w.prio).Sample(ro.rng), w.maxExec)
	}
	end := at + svc
	ro.push(event{t: end, vec: v, rec: int32(len(p.recs))})
	p.recs = append(p.recs, runRec{
		prio: w.prio, level: l, vec: v, tier: w.tier, seq: w.seq, ref: w.ref, opts: w.opts, maxExec: w.maxExec,
		reservedAt: t, start: at, end: end,
	})
	first := -1
	switch w.src {
	case srcShape:
		ro.cursor[w.idx]++
		first = int(w.ref)
	case srcHead:
		ro.head++
		first = int(w.ref)
	case srcArrival:
		ro.arrHead[w.ref]++
	case srcBack:
		p.back = slices.Delete(p.back, int(w.idx), int(w.idx)+1)
	}
	return first, at
}

// mayPreempt reports whether the policy lets w preempt record r.
func (ro *roller) mayPreempt(w *waiter, r *runRec) bool {
	if r.prio < w.prio {
		return true
	}
	if ro.pre.policy != PreemptionLowerOrNewerEqualPriority || r.prio != w.prio {
		return false
	}
	return r.tier > w.tier || (r.tier == w.tier && r.seq > w.seq)
}

// chooseVictims tries to make one of w's options fit by preempting running
// workloads as Kueue's classical within-ClusterQueue preemption does. On
// success it releases the victims' quota, leaves them in p.cands (−1 for a
// candidate kept) for evictVictims and returns the option; otherwise it
// changes nothing and returns −1. It draws nothing from the random source,
// so that a failed attempt costs no draws.
func (ro *roller) chooseVictims(w *waiter) int32 {
	p := ro.pre
	dims := ro.s.dims
	for _, v := range w.opts {
		if !ro.mayFitAfterPreemption(w, v) {
			continue
		}
		vec := ro.vecs[v]
		for d, x := range vec {
			p.need[d] = x > 0 && x > ro.free[d]
		}
		p.cands = p.cands[:0]
		for _, ev := range ro.heap {
			r := &p.recs[ev.rec]
			if r.evicted || !ro.mayPreempt(w, r) {
				continue
			}
			rv := ro.vecs[r.vec]
			for d := range dims {
				if p.need[d] && rv[d] > 0 {
					p.cands = append(p.cands, ev.rec)
					break
				}
			}
		}
		// Kueue's candidate order: lower priority first, then the most
		// recently admitted; the record index breaks ties
		// deterministically. Victims are few: select them one at a time
		// rather than sorting every candidate.
		removed, fits := 0, false
		for removed < len(p.cands) {
			best := removed
			for k := removed + 1; k < len(p.cands); k++ {
				if ro.evictBefore(p.cands[k], p.cands[best]) {
					best = k
				}
			}
			p.cands[removed], p.cands[best] = p.cands[best], p.cands[removed]
			ro.release(p.recs[p.cands[removed]].vec)
			removed++
			if fits = ro.fits(v); fits {
				break
			}
		}
		if !fits {
			for _, c := range p.cands[:removed] {
				ro.take(p.recs[c].vec)
			}
			continue
		}
		victims := p.cands[:removed]
		for i := len(victims) - 2; i >= 0; i-- {
			ro.take(p.recs[victims[i]].vec)
			if ro.fits(v) {
				victims[i] = -1 // kept: the option fits without it
				continue
			}
			ro.release(p.recs[victims[i]].vec)
		}
		p.cands = victims
		return v
	}
	return -1
}

// evictVictims evicts the victims chooseVictims left in p.cands and puts
// them back into the waiting order with the service they have left when
// they stop running at resume (all of it when preempted workloads
// restart); it returns their number.
func (ro *roller) evictVictims(resume float64) int {
	p := ro.pre
	n := 0
	for _, c := range p.cands {
		if c < 0 {
			continue
		}
		n++
		r := &p.recs[c]
		r.evicted = true
		ro.hold(r.level, r.vec, -1)
		service := r.end - max(r.start, resume)
		if p.restart {
			service = r.end - r.start
		}
		p.requeue(waiter{
			prio: r.prio, tier: r.tier, seq: r.seq, ref: r.ref, opts: r.opts, maxExec: r.maxExec,
			service: ro.clean(service, 0),
		})
	}
	return n
}

// evictBefore reports whether record a comes before record b in Kueue's
// candidate order: lower priority first, then the most recently admitted,
// then (for determinism) the later record.
func (ro *roller) evictBefore(a, b int32) bool {
	ra, rb := &ro.pre.recs[a], &ro.pre.recs[b]
	if ra.prio != rb.prio {
		return ra.prio < rb.prio
	}
	if ra.reservedAt != rb.reservedAt {
		return ra.reservedAt > rb.reservedAt
	}
	return a > b
}

// mayFitAfterPreemption is a quick necessary condition for chooseVictims: vector
// v fits in the free quota plus all the quota held at the priorities w may
// preempt.
func (ro *roller) mayFitAfterPreemption(w *waiter, v int32) bool {
	p := ro.pre
	dims := ro.s.dims
	top := len(p.levels)
	if p.policy == PreemptionLowerPriority {
		top, _ = p.search(w.prio)
	} else if l, found := p.search(w.prio); found {
		top = l + 1
	} else {
		top = l
	}
	for d, x := range ro.vecs[v] {
		if x <= 0 || x <= ro.free[d] {
			continue
		}
		avail := ro.free[d]
		for l := range top {
			avail = satAdd(avail, p.usage[l*dims+d])
		}
		if avail < x {
			return false
		}
	}
	return true
}
