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

func mustForecastCohort(t testing.TB, f *Forecaster, c Cohort, seed uint64) [][]Estimate {
	t.Helper()
	outs, err := f.ForecastCohort(c, rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)))
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != len(c.Members) {
		t.Fatalf("got %d member forecasts for %d members", len(outs), len(c.Members))
	}
	for i, est := range outs {
		checkInvariants(t, c.Members[i].Queue, est, f.horizonSeconds)
	}
	return outs
}

// member is a cohort member with a deterministic service of 100 s.
func member(t testing.TB, nominal int64, running []Running, pending ...capacity.Quantities) CohortMember {
	return CohortMember{
		Queue: Queue{
			Running: running,
			Pending: pendingOf(pending...),
			Service: mustDeterministic(t, 100),
		},
		Nominal: cpu(nominal),
	}
}

func withLimits(m CohortMember, borrowing, lending capacity.Quantities) CohortMember {
	m.BorrowingLimit, m.LendingLimit = borrowing, lending
	return m
}

// TestCohortDeterministicScenarios: exact admission times of joint rolls
// with a deterministic service of 100 s, no cycle cap and no latency.
func TestCohortDeterministicScenarios(t *testing.T) {
	f := mustNew(t, WithSamples(8))
	cases := map[string]struct {
		cohort Cohort
		want   [][]float64
	}{
		// An idle lender of 4 CPU; two borrowers with no quota want 4 CPU
		// each. The first takes the whole pool; the second waits for it
		// to end instead of counting the same idle quota.
		"siblings borrow one idle lender's quota in turn": {
			cohort: Cohort{Members: []CohortMember{
				member(t, 4000, nil),
				member(t, 0, nil, cpu(4000)),
				member(t, 0, nil, cpu(4000)),
			}},
			want: [][]float64{{}, {0}, {100}},
		},
		// A may borrow 1 CPU, so its second workload waits although the
		// pool has room; B takes the rest of the pool (3 CPU) at once.
		"borrowing limit bounds a borrower and leaves the pool to its sibling": {
			cohort: Cohort{Members: []CohortMember{
				member(t, 4000, nil),
				withLimits(member(t, 0, nil, cpu(1000), cpu(1000)), cpu(1000), nil),
				member(t, 0, nil, cpu(1000), cpu(1000), cpu(1000), cpu(1000)),
			}},
			want: [][]float64{{}, {0, 100}, {0, 0, 0, 100}},
		},
		// The lender lends 1 of its 4 CPU: the pool holds one 1-CPU
		// workload at a time.
		"lending limit bounds the pool": {
			cohort: Cohort{Members: []CohortMember{
				withLimits(member(t, 4000, nil), nil, cpu(1000)),
				member(t, 0, nil, cpu(1000)),
				member(t, 0, nil, cpu(1000)),
			}},
			want: [][]float64{{}, {0}, {100}},
		},
		// Borrower first in member order, but the lender's workload fits
		// within its nominal quota: Kueue tries heads that do not borrow
		// first, so the lender gets its quota and the borrower waits.
		"a head within nominal goes before a borrowing head": {
			cohort: Cohort{Members: []CohortMember{
				member(t, 0, nil, cpu(2000)),
				member(t, 2000, nil, cpu(2000)),
			}},
			want: [][]float64{{100}, {0}},
		},
		// A borrower runs a 4-CPU workload on the lender's quota for 100
		// more seconds. Without reclaim, the lender's own workload waits
		// for it to end.
		"a lender waits for the borrowed quota to come back": {
			cohort: Cohort{Members: []CohortMember{
				member(t, 0, []Running{{Usage: cpu(4000)}}),
				member(t, 4000, nil, cpu(4000)),
			}},
			want: [][]float64{{}, {100}},
		},
		// Cohort quota of its own (RootQuota beyond what members lend).
		"root quota adds to the pool": {
			cohort: Cohort{
				Members: []CohortMember{
					member(t, 0, nil, cpu(1000), cpu(1000)),
					member(t, 0, nil, cpu(1000)),
				},
				RootQuota: cpu(2000),
			},
			want: [][]float64{{0, 100}, {0}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			outs := mustForecastCohort(t, f, tc.cohort, 1)
			got := make([][]float64, len(outs))
			for i, est := range outs {
				got[i] = waits(est)
				for j, e := range est {
					if e.P50Seconds != e.ExpectedWaitSeconds || e.P90Seconds != e.ExpectedWaitSeconds {
						t.Errorf("member %d workload %d: P50 %v, P90 %v, want both %v (deterministic)", i, j, e.P50Seconds, e.P90Seconds, e.ExpectedWaitSeconds)
					}
				}
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCohortPoolMatchesKueueArithmetic: Available and PotentialAvailable
// of the flattened pool against values worked out by hand from Kueue
// v0.19.2's resource_node.go.
func TestCohortPoolMatchesKueueArithmetic(t *testing.T) {
	// Member 0: nominal 10, lending limit 4 (guaranteed 6), borrowing
	// limit 3. Member 1: nominal 6, no limits. Pool S = 4 + 6 = 10.
	c := Cohort{Members: []CohortMember{
		{Nominal: cpu(10), LendingLimit: cpu(4), BorrowingLimit: cpu(3)},
		{Nominal: cpu(6)},
	}}
	p, _ := newCohortPool(c)
	type avail struct{ Potential0, Potential1, Available0, Available1 int64 }
	check := func(step string, want avail) {
		t.Helper()
		got := avail{p.potential(0, 0), p.potential(1, 0), p.available(0, 0), p.available(1, 0)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", step, diff)
		}
	}
	// P0 = min(g + S, n + b) = min(16, 13) = 13; P1 = min(0 + 10, ∞) = 10.
	check("idle", avail{13, 10, 13, 10})
	// Member 1 uses 8: U = 8. A0 = 6 + min(10 − 8, 4 − 0 + 3) = 8;
	// A1 = 0 + (10 − 8) = 2.
	p.add(1, []int64{8}, 1)
	check("member 1 uses 8", avail{13, 10, 8, 2})
	// Member 0 uses 7 (1 beyond its guaranteed 6): U = 9.
	// A0 = 0 + min(10 − 9, 4 − 1 + 3) = 1; A1 = 1.
	p.add(0, []int64{7}, 1)
	check("member 0 uses 7", avail{13, 10, 1, 1})
	// Member 1 ends its 8: U = 1. A0 = min(9, 6) = 6 (borrowing limit);
	// A1 = 9.
	p.add(1, []int64{8}, -1)
	check("member 1 ends", avail{13, 10, 6, 9})
}

func TestForecastCohortRejectsBadInput(t *testing.T) {
	f := mustNew(t, WithSamples(2))
	good := func() CohortMember { return member(t, 1000, nil, cpu(500)) }
	cases := map[string]Cohort{
		"negative nominal": {Members: []CohortMember{good(), {Queue: good().Queue, Nominal: cpu(-1)}}},
		"unlimited nominal": {Members: []CohortMember{
			{Queue: good().Queue, Nominal: capacity.Quantities{cpuFR: capacity.Unlimited}},
		}},
		"negative borrowing limit": {Members: []CohortMember{withLimits(good(), cpu(-1), nil)}},
		"negative lending limit":   {Members: []CohortMember{good(), withLimits(good(), nil, cpu(-5))}},
		"negative root quota":      {Members: []CohortMember{good()}, RootQuota: cpu(-1)},
		"member without service":   {Members: []CohortMember{good(), {Queue: Queue{Pending: pendingOf(cpu(1))}, Nominal: cpu(1)}}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := f.ForecastCohort(c, rand.New(rand.NewPCG(1, 2)))
			if !errors.Is(err, ErrInvalidQueue) {
				t.Fatalf("error %v, want one wrapping ErrInvalidQueue", err)
			}
			if out != nil {
				t.Errorf("estimates %v with the error", out)
			}
		})
	}
}

// TestCohortMemberPreemptsWithinItsQueue: within-ClusterQueue preemption
// keeps working per member. Member 1 borrows the whole pool with a
// priority-0 workload; its priority-1 workload preempts it at once instead
// of waiting 100 s, while member 0's workload waits for the pool.
func TestCohortMemberPreemptsWithinItsQueue(t *testing.T) {
	f := mustNew(t, WithSamples(4))
	lender := member(t, 2000, nil, cpu(2000))
	borrower := member(t, 0, []Running{{Usage: cpu(2000), Priority: 0}})
	borrower.Queue.Pending = []Pending{{ID: "high", Options: []capacity.Quantities{cpu(2000)}, Quotable: true, Priority: 1}}
	borrower.Queue.WithinClusterQueue = PreemptionLowerPriority
	borrower.Queue.AdmissionLatencySeconds = 1
	lender.Queue.AdmissionLatencySeconds = 1
	outs := mustForecastCohort(t, f, Cohort{Members: []CohortMember{lender, borrower}}, 3)
	got := [][]float64{waits(outs[0]), waits(outs[1])}
	// Preemption delay 2·latency = 2 s; the lender's head waits for the
	// preemptor's 100 s run: 2 + 100, then 1 s of latency.
	want := [][]float64{{103}, {2}}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
}

// TestCohortWithoutSiblingsMatchesForecast: a single member that owns the
// whole pool (nominal, no limits) rolls exactly as the queue alone with
// its nominal as capacity.
func TestCohortWithoutSiblingsMatchesForecast(t *testing.T) {
	f := mustNew(t, WithSamples(16))
	alone := busyQueue(t, 4, 40, 30)
	alone.CyclePeriodSeconds, alone.AdmissionLatencySeconds = 0.5, 0.2
	q := alone
	q.Capacity = nil
	want := mustForecast(t, f, alone, 9)
	got := mustForecastCohort(t, f, Cohort{Members: []CohortMember{{Queue: q, Nominal: alone.Capacity}}}, 9)
	if diff := cmp.Diff(want, got[0]); diff != "" {
		t.Errorf("estimates (-alone +cohort):\n%s", diff)
	}
}

// rollJointReplicaNaive is the joint roll without the event-driven
// bookkeeping: every member is settled and tried at every instant.
func rollJointReplicaNaive(ros []*roller, pool *cohortPool, _ *jointState, rep int, horizon float64) {
	for _, ro := range ros {
		ro.begin(rep)
	}
	acted := make([]bool, len(ros))
	t := 0.0
	for {
		for _, ro := range ros {
			ro.settle(t)
		}
		any := false
		clear(acted)
		for pass := range 2 {
			pool.noBorrow = pass == 0
			for i, ro := range ros {
				if ro.done || acted[i] || t < ro.nextAllowed {
					continue
				}
				if ro.admitOnce(t) {
					acted[i], any = true, true
				}
			}
		}
		pool.noBorrow = false
		if any {
			continue
		}
		next, open := math.Inf(1), false
		for _, ro := range ros {
			open = open || !ro.done
			next = min(next, ro.nextEvent(t, true))
		}
		if !open || !(next <= horizon) {
			break
		}
		t = next
	}
	for _, ro := range ros {
		ro.end()
	}
}

// TestEventDrivenJointRollMatchesNaive: with deterministic service and no
// arrivals the roll draws nothing at random, so the event-driven joint
// roll must give exactly the admission times of trying every member at
// every instant, on random cohorts (limits, running workloads, cycles,
// latencies, StrictFIFO, preemption within ClusterQueues).
func TestEventDrivenJointRollMatchesNaive(t *testing.T) {
	f := mustNew(t, WithSamples(2), WithHorizonCount(40))
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 500 {
		var c Cohort
		for range 1 + r.IntN(6) {
			svc := mustDeterministic(t, float64(1+r.IntN(50)))
			q := Queue{Service: svc, Policy: Policy(r.IntN(2)), WithinClusterQueue: PreemptionPolicy(r.IntN(3))}
			if r.IntN(2) == 0 {
				q.CyclePeriodSeconds = float64(r.IntN(3))
				q.AdmissionLatencySeconds = float64(r.IntN(3))
			}
			for range r.IntN(4) {
				q.Running = append(q.Running, Running{Usage: cpuMem(int64(500*(1+r.IntN(4))), int64(1+r.IntN(4))*gi), AgeSeconds: float64(r.IntN(40)), Priority: int32(r.IntN(2))})
			}
			for j := range r.IntN(30) {
				q.Pending = append(q.Pending, Pending{
					ID: fmt.Sprint(j), Quotable: true, Priority: int32(r.IntN(3)),
					Options: []capacity.Quantities{cpuMem(int64(500*(1+r.IntN(6))), int64(1+r.IntN(4))*gi)},
				})
			}
			slices.SortStableFunc(q.Pending, func(a, b Pending) int { return int(b.Priority - a.Priority) })
			m := CohortMember{Queue: q, Nominal: cpuMem(int64(1000*r.IntN(5)), int64(r.IntN(9))*gi)}
			if r.IntN(3) == 0 {
				m.BorrowingLimit = cpu(int64(1000 * r.IntN(3)))
			}
			if r.IntN(3) == 0 {
				m.LendingLimit = cpuMem(int64(1000*r.IntN(3)), int64(r.IntN(4))*gi)
			}
			c.Members = append(c.Members, m)
		}
		want, err := f.forecastCohort(c, rand.New(rand.NewPCG(1, 1)), rollJointReplicaNaive)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.forecastCohort(c, rand.New(rand.NewPCG(1, 1)), rollJointReplica)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			for i, m := range c.Members {
				t.Logf("member %d: nominal %v bl %v ll %v policy %v pre %v cycle %v lat %v run %v pend %v", i, m.Nominal, m.BorrowingLimit, m.LendingLimit, m.Queue.Policy, m.Queue.WithinClusterQueue, m.Queue.CyclePeriodSeconds, m.Queue.AdmissionLatencySeconds, len(m.Queue.Running), len(m.Queue.Pending))
			}
			t.Fatalf("trial %d: estimates (-naive +event-driven):\n%s", trial, diff)
		}
	}
}
