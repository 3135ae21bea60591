package forecast

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

func pendingAt(id string, priority int32, maxExec float64, demand capacity.Quantities) Pending {
	return Pending{ID: id, Options: []capacity.Quantities{demand}, Quotable: true, Priority: priority, MaxExecutionSeconds: maxExec}
}

// untried marks p as not tried yet, waited seconds ago.
func untried(p Pending, waited float64) Pending {
	p.Untried, p.WaitedSeconds = true, waited
	return p
}

// TestPreemptionDeterministic checks the roll's preemption where the
// arithmetic is exact: a Deterministic service of 100 s (Residual = 100 −
// age), so every replica is the same and the expected wait is the one
// admission time.
func TestPreemptionDeterministic(t *testing.T) {
	f := mustNew(t, WithSamples(4))
	svc := mustDeterministic(t, 100)
	cases := map[string]struct {
		queue Queue
		want  []float64
	}{
		// Two low-priority workloads fill 2 CPU for 100 s more. The
		// scheduler reacts to the urgent one after the admission latency
		// (1 s), it evicts one of them (1 s) and is admitted 1 s later.
		"high priority preempts a full queue of low priority": {
			queue: Queue{
				Capacity:                cpu(2000),
				Running:                 []Running{{Usage: cpu(1000)}, {Usage: cpu(1000)}},
				Pending:                 []Pending{pendingAt("urgent", 10, 0, cpu(1000))},
				Service:                 svc,
				AdmissionLatencySeconds: 1,
				WithinClusterQueue:      PreemptionLowerPriority,
			},
			want: []float64{3},
		},
		// A measured preemption delay of 5 s replaces twice the latency.
		// The decision comes at 1; the victim stops when its eviction
		// ends, 5 − 1 = 4 s after the decision, with 65 s left; the
		// urgent workload runs 6..106, the victim 107..172, and the batch
		// workload is admitted at 173.
		"measured preemption delay": {
			queue: Queue{
				Capacity:                cpu(1000),
				Running:                 []Running{{Usage: cpu(1000), AgeSeconds: 30}},
				Pending:                 []Pending{pendingAt("urgent", 10, 0, cpu(1000)), pendingAt("batch", 0, 0, cpu(1000))},
				Service:                 svc,
				AdmissionLatencySeconds: 1,
				PreemptionDelaySeconds:  5,
				WithinClusterQueue:      PreemptionLowerPriority,
			},
			want: []float64{6, 173},
		},
		// A sample of measured delays replaces the fixed delay (9 s
		// here): as with a fixed 5 s, the decision at 1, the victim
		// stopped at 5 with 65 s left, the urgent workload admitted at 6
		// and the batch one at 173.
		"sampled preemption delay": {
			queue: Queue{
				Capacity:                cpu(1000),
				Running:                 []Running{{Usage: cpu(1000), AgeSeconds: 30}},
				Pending:                 []Pending{pendingAt("urgent", 10, 0, cpu(1000)), pendingAt("batch", 0, 0, cpu(1000))},
				Service:                 svc,
				AdmissionLatencySeconds: 1,
				PreemptionDelaySeconds:  9,
				PreemptionDelaySample:   []float64{5},
				WithinClusterQueue:      PreemptionLowerPriority,
			},
			want: []float64{6, 173},
		},
		// A measured reaction (arrival to decision) of 0.25 s replaces
		// the admission latency: decided at 0.25, admitted 5 s later.
		"measured preemption reaction": {
			queue: Queue{
				Capacity:                 cpu(1000),
				Running:                  []Running{{Usage: cpu(1000), AgeSeconds: 30}},
				Pending:                  []Pending{pendingAt("urgent", 10, 0, cpu(1000))},
				Service:                  svc,
				AdmissionLatencySeconds:  1,
				PreemptionDelaySeconds:   5,
				PreemptionReactionSample: []float64{0.25},
				WithinClusterQueue:       PreemptionLowerPriority,
			},
			want: []float64{5.25},
		},
		// An untried preemptor that has waited 0.25 s takes the rest of a
		// reaction above 0.25: of 0.1 and 0.75 only 0.75, so it is decided
		// 0.5 s from now and admitted at 5.5.
		"untried preemptor takes the rest of a reaction above its wait": {
			queue: Queue{
				Capacity:                 cpu(1000),
				Running:                  []Running{{Usage: cpu(1000), AgeSeconds: 30}},
				Pending:                  []Pending{untried(pendingAt("urgent", 10, 0, cpu(1000)), 0.25)},
				Service:                  svc,
				AdmissionLatencySeconds:  1,
				PreemptionDelaySeconds:   5,
				PreemptionReactionSample: []float64{0.1, 0.75, 0.1},
				WithinClusterQueue:       PreemptionLowerPriority,
			},
			want: []float64{5.5},
		},
		// One that has waited longer than every measured reaction takes a
		// plain draw (the only value, 0.5): admitted at 5.5 from now.
		"untried preemptor that waited past every reaction": {
			queue: Queue{
				Capacity:                 cpu(1000),
				Running:                  []Running{{Usage: cpu(1000), AgeSeconds: 30}},
				Pending:                  []Pending{untried(pendingAt("urgent", 10, 0, cpu(1000)), 1)},
				Service:                  svc,
				AdmissionLatencySeconds:  1,
				PreemptionDelaySeconds:   5,
				PreemptionReactionSample: []float64{0.5},
				WithinClusterQueue:       PreemptionLowerPriority,
			},
			want: []float64{5.5},
		},
		// Kueue requeues a preemptor at once and it stays its
		// ClusterQueue's head until it is admitted: the second urgent
		// workload cannot preempt before the first is admitted at 1 + 5 =
		// 6, and is admitted at 6 + 1 + 5 = 12, not at 0.1 + 6 (the next
		// cycle).
		"preemptors wait for the one ahead to be admitted": {
			queue: Queue{
				Capacity:                cpu(2000),
				Running:                 []Running{{Usage: cpu(1000)}, {Usage: cpu(1000)}},
				Pending:                 []Pending{pendingAt("urgent-1", 10, 0, cpu(1000)), pendingAt("urgent-2", 10, 0, cpu(1000))},
				Service:                 svc,
				CyclePeriodSeconds:      0.1,
				AdmissionLatencySeconds: 1,
				PreemptionDelaySeconds:  5,
				WithinClusterQueue:      PreemptionLowerPriority,
			},
			want: []float64{6, 12},
		},
		"never waits for a completion": {
			queue: Queue{
				Capacity:                cpu(2000),
				Running:                 []Running{{Usage: cpu(1000)}, {Usage: cpu(1000)}},
				Pending:                 []Pending{pendingAt("urgent", 10, 0, cpu(1000))},
				Service:                 svc,
				AdmissionLatencySeconds: 1,
			},
			want: []float64{101},
		},
		"equal priority is not preempted under LowerPriority": {
			queue: Queue{
				Capacity:                cpu(2000),
				Running:                 []Running{{Usage: cpu(1000), Priority: 10}, {Usage: cpu(1000), Priority: 10, AgeSeconds: 20}},
				Pending:                 []Pending{pendingAt("urgent", 10, 0, cpu(1000))},
				Service:                 svc,
				AdmissionLatencySeconds: 1,
				WithinClusterQueue:      PreemptionLowerPriority,
			},
			want: []float64{81},
		},
		// One slot. The running batch workload (70 s left) is evicted by
		// the decision at 1 and stops at 2 with 68 s left; the urgent one
		// runs 3..103; the victim, ahead of the pending batch one (created
		// before it), comes back at 104 and runs its 68 s, not a fresh
		// 100 s; the pending batch workload is admitted at 172 + 1.
		"victim returns with its remaining service": {
			queue: Queue{
				Capacity:                cpu(1000),
				Running:                 []Running{{Usage: cpu(1000), AgeSeconds: 30}},
				Pending:                 []Pending{pendingAt("urgent", 10, 0, cpu(1000)), pendingAt("batch", 0, 0, cpu(1000))},
				Service:                 svc,
				AdmissionLatencySeconds: 1,
				WithinClusterQueue:      PreemptionLowerPriority,
			},
			want: []float64{3, 173},
		},
		"victim returns with its remaining service under StrictFIFO": {
			queue: Queue{
				Capacity:                cpu(1000),
				Running:                 []Running{{Usage: cpu(1000), AgeSeconds: 30}},
				Pending:                 []Pending{pendingAt("urgent", 10, 0, cpu(1000)), pendingAt("batch", 0, 0, cpu(1000))},
				Service:                 svc,
				Policy:                  StrictFIFO,
				AdmissionLatencySeconds: 1,
				WithinClusterQueue:      PreemptionLowerPriority,
			},
			want: []float64{3, 173},
		},
		// The same with restarts: the victim runs its whole 100 s again
		// (104..204) and the batch workload is admitted at 205.
		"victim restarts its whole service with PreemptedRestart": {
			queue: Queue{
				Capacity:                cpu(1000),
				Running:                 []Running{{Usage: cpu(1000), AgeSeconds: 30}},
				Pending:                 []Pending{pendingAt("urgent", 10, 0, cpu(1000)), pendingAt("batch", 0, 0, cpu(1000))},
				Service:                 svc,
				AdmissionLatencySeconds: 1,
				WithinClusterQueue:      PreemptionLowerPriority,
				PreemptedRestart:        true,
			},
			want: []float64{3, 205},
		},
		"without preemption the batch workload waits behind the urgent one only": {
			queue: Queue{
				Capacity:                cpu(1000),
				Running:                 []Running{{Usage: cpu(1000), AgeSeconds: 30}},
				Pending:                 []Pending{pendingAt("urgent", 10, 0, cpu(1000)), pendingAt("batch", 0, 0, cpu(1000))},
				Service:                 svc,
				AdmissionLatencySeconds: 1,
			},
			want: []float64{71, 172},
		},
		// Kueue evicts the lowest priority first: the priority-0 workload,
		// not the priority-1 one. The pending priority-1 workload then
		// goes first when the priority-1 one ends at 50 (with the wrong
		// victim, that one would requeue ahead of it and it would wait for
		// the urgent one to end at 102).
		"lowest priority is preempted first": {
			queue: Queue{
				Capacity: cpu(2000),
				Running: []Running{
					{Usage: cpu(1000), AgeSeconds: 50, Priority: 1},
					{Usage: cpu(1000), AgeSeconds: 50, Priority: 0},
				},
				Pending:                 []Pending{pendingAt("urgent", 10, 0, cpu(1000)), pendingAt("mid", 1, 0, cpu(1000))},
				Service:                 svc,
				AdmissionLatencySeconds: 1,
				WithinClusterQueue:      PreemptionLowerPriority,
			},
			want: []float64{3, 51},
		},
		// Of two equal-priority workloads the most recently admitted (age
		// 10, 90 s left) is evicted and comes back with 88 s when the
		// urgent one (bounded to 5 s) ends at 8; the pending batch
		// workload takes the slot of the older one when it ends at 60.
		// Evicting the older one instead would give 91.
		"most recently admitted is preempted first": {
			queue: Queue{
				Capacity:                cpu(2000),
				Running:                 []Running{{Usage: cpu(1000), AgeSeconds: 40}, {Usage: cpu(1000), AgeSeconds: 10}},
				Pending:                 []Pending{pendingAt("urgent", 10, 5, cpu(1000)), pendingAt("batch", 0, 0, cpu(1000))},
				Service:                 svc,
				AdmissionLatencySeconds: 1,
				WithinClusterQueue:      PreemptionLowerPriority,
			},
			want: []float64{3, 61},
		},
		// The urgent workload (bounded to 5 s) needs 2 CPU of 3, held by
		// a 2-CPU workload and a 1-CPU one admitted more recently (ending
		// at 5, bounded to 15 s). Kueue removes the 1-CPU one first, then
		// the 2-CPU one, and then keeps the 1-CPU one, as the urgent one
		// fits without evicting it. Under StrictFIFO the 2-CPU victim
		// (78 s left) blocks the head until the urgent one ends at 8; the
		// 1-CPU batch workload is admitted at 9 beside it. Had the 1-CPU
		// one been evicted too, it would requeue ahead of the batch
		// workload and the batch workload would wait longer.
		"only the victims needed are preempted": {
			queue: Queue{
				Capacity: cpu(3000),
				Running: []Running{
					{Usage: cpu(2000), AgeSeconds: 20},
					{Usage: cpu(1000), AgeSeconds: 10, MaxExecutionSeconds: 15},
				},
				Pending:                 []Pending{pendingAt("urgent", 10, 5, cpu(2000)), pendingAt("batch", 0, 0, cpu(1000))},
				Service:                 svc,
				Policy:                  StrictFIFO,
				AdmissionLatencySeconds: 1,
				WithinClusterQueue:      PreemptionLowerPriority,
			},
			want: []float64{3, 9},
		},
		// Equal priorities: under LowerOrNewerEqualPriority the head A may
		// evict B, which BestEffortFIFO let pass it at 0.5 (B is behind A
		// in queue order, hence newer); it does so when the running
		// workload ends at 10 and frees the other half: the decision comes
		// at 10.5, A is admitted at 11.5. Under LowerPriority A waits for B
		// to end at 100.5.
		"newer equal priority is preempted under LowerOrNewerEqualPriority": {
			queue: Queue{
				Capacity:                cpu(2000),
				Running:                 []Running{{Usage: cpu(1000), AgeSeconds: 90, Priority: 5}},
				Pending:                 []Pending{pendingAt("a", 5, 0, cpu(1500)), pendingAt("b", 5, 0, cpu(1000))},
				Service:                 svc,
				AdmissionLatencySeconds: 0.5,
				WithinClusterQueue:      PreemptionLowerOrNewerEqualPriority,
			},
			want: []float64{11.5, 0.5},
		},
		"newer equal priority is kept under LowerPriority": {
			queue: Queue{
				Capacity:                cpu(2000),
				Running:                 []Running{{Usage: cpu(1000), AgeSeconds: 90, Priority: 5}},
				Pending:                 []Pending{pendingAt("a", 5, 0, cpu(1500)), pendingAt("b", 5, 0, cpu(1000))},
				Service:                 svc,
				AdmissionLatencySeconds: 0.5,
				WithinClusterQueue:      PreemptionLowerPriority,
			},
			want: []float64{101, 0.5},
		},
		// A workload running at the start counts as created before every
		// pending one of its priority: not newer, so not preempted.
		"older equal priority is kept under LowerOrNewerEqualPriority": {
			queue: Queue{
				Capacity:                cpu(1000),
				Running:                 []Running{{Usage: cpu(1000), AgeSeconds: 90, Priority: 5}},
				Pending:                 []Pending{pendingAt("a", 5, 0, cpu(1000))},
				Service:                 svc,
				AdmissionLatencySeconds: 0.5,
				WithinClusterQueue:      PreemptionLowerOrNewerEqualPriority,
			},
			want: []float64{10.5},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := waits(mustForecast(t, f, tc.queue, 1))
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("expected waits (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPreemptingArrivalsDelayLowPriority: when preempted workloads restart,
// higher-priority arrivals that may preempt make a low-priority pending
// workload wait longer than the same arrivals that may not (the victims
// requeue ahead of it and run again what they had run), and a
// high-priority pending workload wait less. Without restarts preemption
// conserves work: the low-priority waits grow less.
func TestPreemptingArrivalsDelayLowPriority(t *testing.T) {
	base := Queue{
		Capacity: cpu(2000),
		Running:  []Running{{Usage: cpu(1000), AgeSeconds: 1}, {Usage: cpu(1000), AgeSeconds: 3}},
		Pending: []Pending{
			pendingAt("urgent", 10, 0, cpu(1000)),
			pendingAt("batch-0", 0, 0, cpu(1000)),
			pendingAt("batch-1", 0, 0, cpu(1000)),
			pendingAt("batch-2", 0, 0, cpu(1000)),
		},
		Arrivals:                []Arrival{{RatePerSecond: 0.06, Options: []capacity.Quantities{cpu(1000)}, Priority: 10}},
		Service:                 mustExponential(t, 10),
		AdmissionLatencySeconds: 0.2,
		PreemptedRestart:        true,
	}
	f := mustNew(t, WithSamples(4000))
	for _, policy := range []Policy{BestEffortFIFO, StrictFIFO} {
		t.Run(policy.String(), func(t *testing.T) {
			never := base
			never.Policy = policy
			preempting := never
			preempting.WithinClusterQueue = PreemptionLowerPriority
			without := waits(mustForecast(t, f, never, 5))
			with := waits(mustForecast(t, f, preempting, 5))
			// With preemption: one latency to the decision and a delay of
			// twice the latency, 0.6 s.
			if with[0] > 0.7 || without[0] < 3 {
				t.Errorf("urgent waits %.2f s with preemption, %.2f s without; want ≤ 0.7 and ≥ 3", with[0], without[0])
			}
			resuming := preempting
			resuming.PreemptedRestart = false
			resumed := waits(mustForecast(t, f, resuming, 5))
			for i := 1; i < len(with); i++ {
				if with[i] < 1.1*without[i] {
					t.Errorf("%s waits %.2f s with preemption, %.2f s without; want ≥ 10%% more", base.Pending[i].ID, with[i], without[i])
				}
				if resumed[i] >= with[i] {
					t.Errorf("%s waits %.2f s when victims resume, %.2f s when they restart; want less", base.Pending[i].ID, resumed[i], with[i])
				}
			}
		})
	}
}

// TestPreemptionProperties: random queues with mixed priorities, both
// policies, every preemption policy and arrivals keep the guarantees
// (finite, within [0, horizon], P50 ≤ P90) and are reproducible.
func TestPreemptionProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(91, 92))
	emp, err := NewEmpirical([]float64{0, 1, 3, 8, 20, 40, 100})
	if err != nil {
		t.Fatal(err)
	}
	models := []ServiceModel{mustExponential(t, 15), emp, mustDeterministic(t, 12)}
	for trial := range 80 {
		q := Queue{
			Capacity:                cpuMem(int64(1000+r.IntN(8000)), int64(1+r.IntN(16))*gi),
			Service:                 models[r.IntN(len(models))],
			Policy:                  Policy(r.IntN(2)),
			WithinClusterQueue:      PreemptionPolicy(1 + r.IntN(2)),
			CyclePeriodSeconds:      []float64{0, 0.5}[r.IntN(2)],
			AdmissionLatencySeconds: []float64{0, 1}[r.IntN(2)],
		}
		demand := func() capacity.Quantities {
			return cpuMem(int64(100+r.IntN(3000)), int64(r.IntN(4))*gi)
		}
		for range r.IntN(12) {
			q.Running = append(q.Running, Running{Usage: demand(), AgeSeconds: 50 * r.Float64(), Priority: int32(r.IntN(3)), MaxExecutionSeconds: []float64{0, 30}[r.IntN(2)]})
		}
		n := r.IntN(200)
		for i := range n {
			// Kueue's order: priorities do not increase along the queue.
			q.Pending = append(q.Pending, Pending{ID: fmt.Sprint(i), Options: []capacity.Quantities{demand(), demand()}[:1+r.IntN(2)], Quotable: r.IntN(10) > 0, Priority: int32(2 - 3*i/max(n, 1))})
		}
		for range r.IntN(3) {
			q.Arrivals = append(q.Arrivals, Arrival{RatePerSecond: 0.5 * r.Float64(), Options: []capacity.Quantities{demand()}, Priority: int32(r.IntN(4))})
		}
		f := mustNew(t, WithSamples(1+r.IntN(32)), WithHorizonCount(1+r.IntN(64)), WithHorizonSeconds(3600))
		a := mustForecast(t, f, q, uint64(trial))
		b := mustForecast(t, f, q, uint64(trial))
		if diff := cmp.Diff(a, b); diff != "" {
			t.Fatalf("trial %d: the same seed gave different forecasts (-first +second):\n%s", trial, diff)
		}
	}
}

func TestForecastRejectsBadPreemption(t *testing.T) {
	base := Queue{Capacity: cpu(1000), Pending: pendingOf(cpu(500)), Service: mustDeterministic(t, 1)}
	cases := map[string]func(*Queue){
		"unknown policy":             func(q *Queue) { q.WithinClusterQueue = PreemptionPolicy(7) },
		"negative delay":             func(q *Queue) { q.PreemptionDelaySeconds = -1 },
		"infinite delay":             func(q *Queue) { q.PreemptionDelaySeconds = math.Inf(1) },
		"not-a-number delay":         func(q *Queue) { q.PreemptionDelaySeconds = math.NaN() },
		"negative reaction":          func(q *Queue) { q.PreemptionReactionSample = []float64{0.1, -1} },
		"infinite reaction":          func(q *Queue) { q.PreemptionReactionSample = []float64{math.Inf(1)} },
		"negative sampled delay":     func(q *Queue) { q.PreemptionDelaySample = []float64{-0.5} },
		"not-a-number sampled delay": func(q *Queue) { q.PreemptionDelaySample = []float64{1, math.NaN()} },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			q := base
			mutate(&q)
			_, err := mustNew(t).Forecast(q, rand.New(rand.NewPCG(1, 2)))
			if !errors.Is(err, ErrInvalidQueue) {
				t.Fatalf("Forecast error = %v, want one wrapping ErrInvalidQueue", err)
			}
		})
	}
}

// TestPreemptionHeadsStayInKueuesOrder checks the waiting heads the roll
// keeps up to date as workloads are admitted and arrive against the heads
// rebuilt and sorted from scratch, with pending lists in any order of
// priority (the caller's order is Kueue's, but nothing relies on it).
func TestPreemptionHeadsStayInKueuesOrder(t *testing.T) {
	sorted := func(ro *roller) []waiter {
		var ws []waiter
		if ro.policy == StrictFIFO {
			if ro.head < len(ro.s.entries) {
				ws = append(ws, ro.entryWaiter(ro.head, srcHead, 0))
			}
		} else {
			for si := range ro.s.shapes {
				if cur := int(ro.cursor[si]); cur < len(ro.s.shapes[si].members) {
					ws = append(ws, ro.entryWaiter(int(ro.s.shapes[si].members[cur]), srcShape, int32(si)))
				}
			}
		}
		for c := range ro.s.arrivals {
			if ro.arrHead[c] < len(ro.arrQ[c]) {
				ws = append(ws, ro.arrivalHead(c))
			}
		}
		slices.SortStableFunc(ws, func(a, b waiter) int {
			switch {
			case a.before(&b):
				return -1
			case b.before(&a):
				return 1
			}
			return 0
		})
		return ws
	}
	for _, policy := range []Policy{BestEffortFIFO, StrictFIFO} {
		for seed := range uint64(50) {
			r := rand.New(rand.NewPCG(seed, 11))
			s := newScene(cpu(64000), 0)
			for i := range 2 + r.IntN(40) {
				s.addPending(i, []capacity.Quantities{cpu(int64(1000 * (1 + r.IntN(4))))}, 0, int32(r.IntN(4)), 0, 1)
			}
			for c := range 3 {
				s.addArrival(Arrival{RatePerSecond: 1, Options: []capacity.Quantities{cpu(int64(1000 * (1 + c)))}, Priority: int32(r.IntN(4))}, 0)
			}
			q := Queue{Capacity: cpu(64000), Service: mustExponential(t, 1), Policy: policy, WithinClusterQueue: PreemptionLowerPriority}
			ro := newRoller(s, q, mustNew(t), r)
			if ro.pre == nil {
				continue
			}
			clear(ro.cursor)
			ro.head = 0
			for c := range s.arrivals {
				ro.arrQ[c], ro.arrHead[c] = ro.arrQ[c][:0], 0
			}
			ro.resetHeads()
			for step := range 200 {
				if c := r.IntN(len(s.arrivals)); r.IntN(3) == 0 {
					ro.arrQ[c] = append(ro.arrQ[c], float64(step))
					if ro.arrHead[c] == len(ro.arrQ[c])-1 {
						ro.pre.insertHead(ro.arrivalHead(c))
					}
				} else if len(ro.pre.heads) > 0 {
					i := r.IntN(len(ro.pre.heads))
					switch w := ro.pre.heads[i]; w.src {
					case srcShape:
						ro.cursor[w.idx]++
					case srcHead:
						ro.head++
					case srcArrival:
						ro.arrHead[w.ref]++
					}
					ro.advanceHead(i)
				}
				if diff := cmp.Diff(sorted(ro), ro.pre.heads, cmp.AllowUnexported(waiter{}), cmpopts.EquateEmpty()); diff != "" {
					t.Fatalf("policy %v seed %d step %d: heads (-rebuilt +kept):\n%s", policy, seed, step, diff)
				}
			}
		}
	}
}

// TestPreemptionLevelSearchMatchesBinarySearch checks the scan that finds
// a priority among a few levels against slices.BinarySearch, below, among,
// between and above the levels, for short and long level lists.
func TestPreemptionLevelSearchMatchesBinarySearch(t *testing.T) {
	for n := range 20 {
		p := &preemption{}
		for i := range n {
			p.levels = append(p.levels, int32(10*i-50))
		}
		for prio := int32(-70); prio <= int32(10*n-30); prio += 5 {
			wantAt, wantFound := slices.BinarySearch(p.levels, prio)
			gotAt, gotFound := p.search(prio)
			if gotAt != wantAt || gotFound != wantFound {
				t.Errorf("%d levels, priority %d: search = (%d, %v), BinarySearch = (%d, %v)", n, prio, gotAt, gotFound, wantAt, wantFound)
			}
		}
	}
}
