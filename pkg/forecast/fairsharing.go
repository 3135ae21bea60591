package forecast

import (
	"fmt"
	"math"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// AdmissionFairSharing is the state of Kueue's admission fair sharing
// (AFS) in a ClusterQueue whose admissionScope.admissionMode is
// UsageBasedAdmissionFairSharing, with the manager's Configuration's
// admissionFairSharing set. Given as [Queue.AdmissionFairSharing], it
// makes the roll order the pending workloads as Kueue v0.19.2 does.
//
// # Kueue's semantics
//
// Ordering (pkg/cache/queue/cluster_queue.go, queueOrderingFunc and the
// snapshot sort of buildSnapshotSort): two pending workloads compare first
// by the AFS usage of their LocalQueues, the lower first, and only on equal
// usage by the order without AFS (baseCompareFunc: a sticky preemptor
// first, then higher priority, then the earlier queue-order timestamp, then
// the UID). Usage comes before priority: a low-priority workload of an idle
// LocalQueue goes ahead of a high-priority one of a busy LocalQueue.
//
// Usage (pkg/util/admissionfairsharing, CalculateUsage, and
// workload.Info.CalcLocalQueueFSUsage) of a LocalQueue ℓ is
//
//	U_ℓ = Σ_r w_r · (C_ℓ,r + P_ℓ,r) / weight_ℓ
//
// over resource names r (flavors summed), with w_r the Configuration's
// resourceWeights (1 for a resource not listed), quantities in the units
// of their Kubernetes quantity (cpu in cores, memory in bytes, whole units
// otherwise), C the LocalQueue's decayed consumed resources and P its
// pending entry penalties (pkg/cache/queue/afs, UsageLedgerEntry's
// Resources and PendingPenalty), and weight_ℓ the LocalQueue's
// spec.fairSharing.weight (1 when unset or when the LocalQueue is
// missing); a weight ≤ 0 gives U = +Inf (last). A LocalQueue without a
// ledger entry has C = P = 0.
//
// Decay (pkg/controller/core/localqueue_controller.go,
// reconcileConsumedUsage, and CalculateDecayedConsumed): every
// usageSamplingInterval s (default 5 min) after the entry's LastUpdate, the
// LocalQueue reconciler folds the LocalQueue's admitted usage A (the
// scheduler cache's LocalQueue.GetAdmittedUsage: the requests of its
// workloads that are Admitted, flavors summed) into C,
//
//	C ← (1−α(Δ))·C + α(Δ)·A,   α(Δ) = 1 − 2^(−Δ/T½),
//
// Δ the seconds since LastUpdate and T½ the usageHalfLifeTime, then sets
// LastUpdate to now. C is thus an exponentially weighted mean of the
// admitted usage — a level in resource units, not an integral of it —
// that halves in one half-life while the LocalQueue runs nothing. Between
// these updates C does not change: the ordering sees C as last stored.
// With T½ = 0 every update resets C to empty.
//
// Entry penalty (pkg/scheduler/scheduler.go, updateEntryPenalty, and
// CalculateEntryPenalty): when the scheduler reserves quota for a workload
// of an AFS ClusterQueue it pushes P += α(s)·R for its total requests R
// (α(s) = 1 − 2^(−s/T½); 0 when T½ = 0), so that the LocalQueue's next
// workloads fall back at once rather than after the next sample; the
// penalty does not decay while pending. When the workload becomes
// Admitted (pkg/controller/core/workload_controller.go,
// updateAfsConsumedUsage) the workload reconciler settles it: it folds the
// admitted usage, now with the workload, as above over the time since
// LastUpdate, adds the workload's penalty to C, drops it from P and sets
// LastUpdate to now. Completions change A only; C follows at the next
// sample.
//
// # The roll's model
//
// Each replica keeps, per LocalQueue, the weighted sums c = Σ_r w_r·C_r
// (with the pending penalties), a = Σ_r w_r·A_r and the time of the last
// update. The next sample falls s after it: at the roll's admission
// opportunity at t it applies the k = ⌊(t − last)/s⌋ samples due, c ← a +
// (c − a)·2^(−k·s/T½) (a is constant between the roll's events, so k
// samples compose into one), last ← last + k·s; a completion first applies
// the samples due, then lowers a. An admission decided at t settles at
// once: c ← a' + (c − a')·2^(−(t − last)/T½) + α(s)·r, a' = a + r, last ←
// t, where r is the workload's weighted requests (its first option, whose
// requests every option shares, flavors summed). The next candidate is
// the first, in the order (U_ℓ = c/weight_ℓ ascending, priority
// descending, position in Queue.Pending), of the workloads that fit
// (BestEffortFIFO) or the first one only (StrictFIFO).
//
// Approximations: Kueue pushes the penalty at the quota reservation and
// settles it and counts the workload in A at the admission, one admission
// latency later; the roll does both at the decision (an error of order
// latency/T½ in c). The position in Queue.Pending stands for the queue
// order timestamp: within a LocalQueue, and among LocalQueues of equal
// usage now, Kueue's order lists the workloads in the order without AFS,
// which is all the tie-break needs (LocalQueues that come to equal usage
// later in the roll, a coincidence of floating point, tie by position). A
// sticky preemptor is not modelled. [Arrival] classes have no LocalQueue:
// they pass pending workloads of lower priority as without AFS. With a
// within-ClusterQueue preemption policy that can preempt, the roll orders
// by priority as without AFS (Kueue's preemption under AFS is not
// modelled), and the workloads behind the count horizon are extrapolated
// in Queue.Pending's order.
type AdmissionFairSharing struct {
	// HalfLifeSeconds is the Configuration's usageHalfLifeTime T½ in
	// seconds; 0 resets the consumed usage at every sample and makes the
	// entry penalty 0.
	HalfLifeSeconds float64
	// SamplingIntervalSeconds is the Configuration's usageSamplingInterval
	// s in seconds (Kueue's default is 300). 0 samples continuously (and
	// makes the entry penalty 0).
	SamplingIntervalSeconds float64
	// ResourceWeights are the Configuration's resourceWeights by resource
	// name; a resource not listed weighs 1.
	ResourceWeights map[string]float64
	// LocalQueues are the ClusterQueue's LocalQueues that workloads name
	// by their LocalQueue, counted from 1 (see Pending.LocalQueue). A
	// workload that names none (0, or an index out of range) counts in one
	// further LocalQueue of no history and weight 1.
	LocalQueues []LocalQueueUsage
}

// LocalQueueUsage is one LocalQueue's AFS state now.
type LocalQueueUsage struct {
	// Consumed is Σ_r w_r·(C_r + P_r): the weighted decayed consumed
	// resources and pending entry penalties of its ledger entry, in the
	// units of [AdmissionFairSharing] (cpu in cores, memory in bytes), not
	// divided by Weight. NaN, negative: 0.
	Consumed float64
	// SinceUpdateSeconds is how long ago the entry's consumed resources
	// were last updated (its LastUpdate); the next sample falls
	// SamplingIntervalSeconds after it. NaN, negative: 0.
	SinceUpdateSeconds float64
	// Weight is its spec.fairSharing.weight (1 when unset); ≤ 0 puts it
	// last (U = +Inf). NaN: 1.
	Weight float64
}

// validateFairSharing checks the settings of an AdmissionFairSharing
// (nil: none).
func validateFairSharing(a *AdmissionFairSharing) error {
	if a == nil {
		return nil
	}
	if !nonNegativeFinite(a.HalfLifeSeconds) {
		return fmt.Errorf("%w: admission fair sharing half-life %v s must be finite and >= 0", ErrInvalidQueue, a.HalfLifeSeconds)
	}
	if !nonNegativeFinite(a.SamplingIntervalSeconds) {
		return fmt.Errorf("%w: admission fair sharing sampling interval %v s must be finite and >= 0", ErrInvalidQueue, a.SamplingIntervalSeconds)
	}
	for r, w := range a.ResourceWeights {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return fmt.Errorf("%w: admission fair sharing weight %v of resource %q must be finite", ErrInvalidQueue, w, r)
		}
	}
	return nil
}

// fairRequests is Σ_r w_r·q_r over the flavor-resources of q (flavors
// summed), in Kueue's quantity units: cpu in cores (capacity's milli-cpu
// over 1000), anything else as counted. Negative amounts count as 0,
// Unlimited as the largest finite amount.
func fairRequests(q capacity.Quantities, weights map[string]float64) float64 {
	sum := 0.0
	for fr, v := range q {
		if v <= 0 {
			continue
		}
		x := float64(v)
		if fr.Resource == "cpu" {
			x /= 1000
		}
		w, ok := weights[fr.Resource]
		if !ok {
			w = 1
		}
		sum += w * x
	}
	return clampFinite(sum, math.MaxFloat64)
}

// fairness is the roll's AFS state (see AdmissionFairSharing): the
// scene's inputs, read only, then each replica's state.
type fairness struct {
	halfLife, interval float64
	// penalty is α(s), the share of its requests a workload adds to its
	// LocalQueue's consumed usage at admission.
	penalty float64
	// Per LocalQueue: the inputs (the last one is the LocalQueue of the
	// workloads that name none) and 1/weight (+Inf for a weight ≤ 0).
	consumed0, since0, invWeight []float64
	// Per running workload (by its index in the scene) and per entry:
	// its LocalQueue and weighted requests.
	runQueue   []int32
	runSize    []float64
	entryQueue []int32
	entrySize  []float64
	// lanes group the entries by demand shape and LocalQueue, in queue
	// order: within a lane Kueue's order is the position's.
	lanes []lane

	// The replica's state: per LocalQueue c, a, the last update and the
	// usage U = c/weight at the current opportunity; per lane the next
	// member.
	consumed, admitted, last, usage []float64
	cursor                          []int32
	// fitVec[shape] is the option the shape takes at the current
	// opportunity (−1: none fits), valid when fitAt[shape] is the
	// opportunity's number opportunity: the lanes of one shape share it.
	fitVec      []int32
	fitAt       []uint32
	opportunity uint32
}

// lane is the entries of one demand shape and LocalQueue, in queue order.
type lane struct {
	queue   int32
	shape   int32
	members []int32
}

// fairEntryRec is an event's rec for the end of entry j's service in a
// roll with fairness; the running workloads at the start keep rec = their
// index, and an arrival's end (no LocalQueue) is fairNoQueue.
func fairEntryRec(j int) int32 { return int32(-2 - j) }

const fairNoQueue = math.MinInt32

// newFairness returns the AFS state of the scene s rolled from q (nil when
// q has none), or nil when q may preempt (the roll then orders as without
// AFS; see AdmissionFairSharing).
func newFairness(s *scene, q *Queue, preempting bool) *fairness {
	a := q.AdmissionFairSharing
	if a == nil || preempting {
		return nil
	}
	n := len(a.LocalQueues) + 1
	f := &fairness{
		halfLife:   a.HalfLifeSeconds,
		interval:   a.SamplingIntervalSeconds,
		consumed0:  make([]float64, n),
		since0:     make([]float64, n),
		invWeight:  make([]float64, n),
		runQueue:   make([]int32, len(s.running)),
		runSize:    make([]float64, len(s.running)),
		entryQueue: make([]int32, len(s.entries)),
		entrySize:  make([]float64, len(s.entries)),
		consumed:   make([]float64, n),
		admitted:   make([]float64, n),
		last:       make([]float64, n),
		usage:      make([]float64, n),
	}
	f.penalty = decayAlpha(f.interval, f.halfLife)
	for i, lq := range a.LocalQueues {
		f.consumed0[i] = nonNegative(lq.Consumed)
		f.since0[i] = nonNegative(lq.SinceUpdateSeconds)
		w := lq.Weight
		if math.IsNaN(w) {
			w = 1
		}
		f.invWeight[i] = 1 / w
		if !(w > 0) {
			f.invWeight[i] = math.Inf(1)
		}
	}
	f.invWeight[n-1] = 1
	queueOf := func(lq int32) int32 {
		if lq >= 1 && int(lq) < n {
			return lq - 1
		}
		return int32(n - 1)
	}
	for i := range s.running {
		f.runQueue[i] = queueOf(q.Running[i].LocalQueue)
		f.runSize[i] = fairRequests(q.Running[i].Usage, a.ResourceWeights)
	}
	// Two passes, so that the lanes' members share one array: each
	// entry's lane, then the members.
	laneOf := make(map[[2]int32]int32, len(s.shapes))
	var counts []int32
	entryLane := make([]int32, len(s.entries))
	for j := range s.entries {
		e := &s.entries[j]
		p := &q.Pending[e.pos]
		lq := queueOf(p.LocalQueue)
		f.entryQueue[j] = lq
		if len(p.Options) > 0 {
			f.entrySize[j] = fairRequests(p.Options[0], a.ResourceWeights)
		}
		key := [2]int32{e.shape, lq}
		l, ok := laneOf[key]
		if !ok {
			l = int32(len(f.lanes))
			laneOf[key] = l
			f.lanes = append(f.lanes, lane{queue: lq, shape: e.shape})
			counts = append(counts, 0)
		}
		entryLane[j] = l
		counts[l]++
	}
	storage := make([]int32, len(s.entries))
	start := int32(0)
	for l := range f.lanes {
		f.lanes[l].members = storage[start : start : start+counts[l]]
		start += counts[l]
	}
	for j, l := range entryLane {
		f.lanes[l].members = append(f.lanes[l].members, int32(j))
	}
	f.cursor = make([]int32, len(f.lanes))
	f.fitVec = make([]int32, len(s.shapes))
	f.fitAt = make([]uint32, len(s.shapes))
	return f
}

// shapeFit is ro.firstFit of shape sh's options, computed once per
// admission opportunity.
func (ro *roller) shapeFit(sh int32) int32 {
	f := ro.fair
	if f.fitAt[sh] != f.opportunity {
		f.fitAt[sh] = f.opportunity
		f.fitVec[sh] = ro.firstFit(ro.s.shapes[sh].opts)
	}
	return f.fitVec[sh]
}

// decayAlpha is Kueue's α(Δ) = 1 − 2^(−Δ/T½): the weight of the admitted
// usage in a consumed-usage update after Δ seconds; 0 when T½ = 0.
func decayAlpha(elapsed, halfLife float64) float64 {
	if halfLife == 0 {
		return 0
	}
	return -math.Expm1(-elapsed / halfLife * math.Ln2)
}

func nonNegative(x float64) float64 {
	if x > 0 {
		return min(x, math.MaxFloat64)
	}
	return 0
}

// reset starts a replica: every LocalQueue at its input state, its
// admitted usage that of its running workloads.
func (f *fairness) reset() {
	copy(f.consumed, f.consumed0)
	clear(f.admitted)
	for i := range f.last {
		f.last[i] = -f.since0[i]
	}
	for i, q := range f.runQueue {
		f.admitted[q] = min(f.admitted[q]+f.runSize[i], math.MaxFloat64)
	}
	clear(f.cursor)
}

// sample applies to LocalQueue q the samples due by t (see
// AdmissionFairSharing): k = ⌊(t − last)/s⌋ of them at once.
func (f *fairness) sample(q int32, t float64) {
	elapsed := t - f.last[q]
	if !(elapsed > 0) {
		return
	}
	if f.interval <= 0 {
		f.consumed[q] = f.decayed(q, elapsed)
		f.last[q] = t
		return
	}
	if elapsed < f.interval {
		return
	}
	k := math.Floor(elapsed / f.interval)
	f.consumed[q] = f.decayed(q, k*f.interval)
	// At most t: with an absurd age the product may round past it.
	f.last[q] = min(f.last[q]+k*f.interval, t)
}

// decayed is LocalQueue q's consumed usage folded toward its admitted
// usage over elapsed seconds: a + (c − a)·2^(−elapsed/T½), or 0 when T½ =
// 0 (Kueue resets it).
func (f *fairness) decayed(q int32, elapsed float64) float64 {
	if f.halfLife == 0 {
		return 0
	}
	c, a := f.consumed[q], f.admitted[q]
	keep := 1 - decayAlpha(elapsed, f.halfLife)
	return max(a+(c-a)*keep, 0)
}

// admit settles the admission of entry j decided at t.
func (f *fairness) admit(j int, t float64) {
	q, r := f.entryQueue[j], f.entrySize[j]
	f.sample(q, t)
	f.admitted[q] = min(f.admitted[q]+r, math.MaxFloat64)
	if elapsed := t - f.last[q]; elapsed > 0 && f.halfLife > 0 {
		f.consumed[q] = f.decayed(q, elapsed)
	}
	f.consumed[q] = min(f.consumed[q]+f.penalty*r, math.MaxFloat64)
	f.last[q] = max(f.last[q], t)
}

// complete ends at t the service of the workload whose event carries rec.
func (f *fairness) complete(rec int32, t float64) {
	var q int32
	var r float64
	switch {
	case rec >= 0:
		q, r = f.runQueue[rec], f.runSize[rec]
	case rec != fairNoQueue && rec <= -2:
		j := int(-2 - rec)
		q, r = f.entryQueue[j], f.entrySize[j]
	default:
		return
	}
	f.sample(q, t)
	f.admitted[q] = max(f.admitted[q]-r, 0)
}

// before reports whether entry a of usage ua comes before entry b of
// usage ub in Kueue's AFS order: lower usage, then higher priority, then
// earlier position.
func (ro *roller) fairBefore(ua float64, a int32, ub float64, b int32) bool {
	if ua != ub {
		return ua < ub
	}
	pa, pb := ro.s.entries[a].priority, ro.s.entries[b].priority
	if pa != pb {
		return pa > pb
	}
	return a < b
}

// pickFair is pickBestEffort (pickStrict when strict) in Kueue's AFS
// order at time t: it brings every LocalQueue's usage to t, then takes the
// first lane head in that order that fits (strict: the first one, if it
// fits). It returns the lane of the entry taken; passedOver says that a
// head before it in that order did not fit.
func (ro *roller) pickFair(t float64, strict bool) (j, c int, v int32, ln int, passedOver bool) {
	f, s := ro.fair, ro.s
	if f.opportunity++; f.opportunity == 0 {
		clear(f.fitAt)
		f.opportunity = 1
	}
	for q := range f.usage {
		f.sample(int32(q), t)
		f.usage[q] = f.consumed[q] * f.invWeight[q]
		if math.IsNaN(f.usage[q]) { // 0·Inf: a weight ≤ 0 puts it last
			f.usage[q] = math.Inf(1)
		}
	}
	j, c, ln = -1, -1, -1
	first, firstLane := int32(-1), -1
	var firstUsage, fitUsage float64
	for l := range f.lanes {
		la := &f.lanes[l]
		cur := int(f.cursor[l])
		if cur >= len(la.members) {
			continue
		}
		cand := la.members[cur]
		u := f.usage[la.queue]
		if first < 0 || ro.fairBefore(u, cand, firstUsage, first) {
			first, firstUsage, firstLane = cand, u, l
		}
		if strict || (j >= 0 && !ro.fairBefore(u, cand, fitUsage, int32(j))) {
			continue
		}
		if o := ro.shapeFit(la.shape); o >= 0 {
			j, v, ln, fitUsage = int(cand), o, l, u
		}
	}
	if strict {
		j, ln = -1, -1
		if first >= 0 {
			if o := ro.firstFit(s.shapes[s.entries[first].shape].opts); o >= 0 {
				j, v, ln = int(first), o, firstLane
			}
		}
	}
	// Arrivals pass pending workloads of lower priority (they have no
	// LocalQueue), as in pickBestEffort and pickStrict.
	if strict {
		if c = ro.nextArrival(); c >= 0 && (first < 0 || s.entries[first].priority < s.arrivals[c].priority) {
			if o := ro.firstFit(s.arrivals[c].opts); o >= 0 {
				return -1, c, o, -1, false
			}
			return -1, -1, -1, -1, false
		}
		return j, -1, v, ln, false
	}
	c, av := ro.nextFittingArrival()
	if c >= 0 && (j < 0 || s.entries[j].priority < s.arrivals[c].priority) {
		return -1, c, av, -1, false
	}
	return j, -1, v, ln, j >= 0 && int32(j) != first
}
