package estimator

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// lendingObjects is a cohort of two 2-CPU ClusterQueues: "borrower" runs
// runningCPU worth of 500m workloads (so borrows beyond 2 CPU from
// "lender"), and "lender" has one 500m workload pending.
func lendingObjects(runningCPU int, reclaim kueue.PreemptionPolicy) envObjects {
	return lendingObjectsOf(2*runningCPU, "500m", reclaim)
}

// lendingObjectsOf is lendingObjects with the borrower running n workloads
// of the given CPU each.
func lendingObjectsOf(n int, cpu string, reclaim kueue.PreemptionPolicy) envObjects {
	lender := cpuQueue("lender", "2")
	lender.Spec.CohortName = "shared"
	if reclaim != "" {
		lender.Spec.Preemption = &kueue.ClusterQueuePreemption{ReclaimWithinCohort: reclaim}
	}
	borrower := cpuQueue("borrower", "2")
	borrower.Spec.CohortName = "shared"
	objs := envObjects{
		flavors: []*kueue.ResourceFlavor{utiltestingapi.MakeResourceFlavor("default").Obj()},
		cohorts: []*kueue.Cohort{utiltestingapi.MakeCohort("shared").Obj()},
		cqs:     []*kueue.ClusterQueue{lender, borrower},
		lqs:     []*kueue.LocalQueue{utiltestingapi.MakeLocalQueue("lq", "ns").ClusterQueue("lender").Obj()},
		pending: []*kueue.Workload{pendingWorkload("l0", "500m", t0.Add(-time.Second))},
	}
	for i := range n {
		objs.running = append(objs.running, runningWorkload(fmt.Sprintf("b%03d", i), "borrower", cpu, t0.Add(-time.Second)))
	}
	return objs
}

func TestLentQuota(t *testing.T) {
	cases := map[string]struct {
		runningCPU int
		want       capacity.Quantities
	}{
		"the borrower holds both lent CPUs": {runningCPU: 4, want: capacity.Quantities{{Flavor: "default", Resource: "cpu"}: 2000}},
		"one of them":                       {runningCPU: 3, want: capacity.Quantities{{Flavor: "default", Resource: "cpu"}: 1000}},
		"nothing borrowed, nothing lent":    {runningCPU: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := newTestEnv(t, lendingObjects(tc.runningCPU, ""))
			snap, err := env.cache.Snapshot(env.ctx)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, lentQuota(snap.ClusterQueue("lender"))); diff != "" {
				t.Errorf("lent quota (-want,+got):\n%s", diff)
			}
			if got := lentQuota(snap.ClusterQueue("borrower")); got != nil {
				t.Errorf("the borrower's lent quota = %v, want none", got)
			}
		})
	}
}

// A lender whose 2 CPU a borrower holds waits for the borrower's workloads
// to end (the first of 8 ends in about 20 s / 8 with the 20 s prior), not
// zero as when its nominal quota was taken as free; with
// reclaimWithinCohort: Any it takes the quota back by preemption, which
// the roll takes as free at once.
func TestLenderWaitsForItsLentQuota(t *testing.T) {
	wait := func(t *testing.T, reclaim kueue.PreemptionPolicy) time.Duration {
		env := newTestEnv(t, lendingObjects(4, reclaim))
		e := env.estimator(t, WithPriorMeanService(20*time.Second))
		e.markWarmed()
		h := e.ClusterQueueEventHandler()
		for _, cq := range lendingObjects(4, reclaim).cqs {
			h.OnAdd(cq, true)
		}
		e.Refresh(env.ctx)
		est, ok := e.Results().Workload(workload.NewReference("ns", "l0"))
		if !ok || !est.HasWait {
			t.Fatalf("no wait for l0: %+v", est)
		}
		return est.ExpectedWait
	}
	never := wait(t, "")
	if never < time.Second || never > 8*time.Second {
		t.Errorf("lender without reclaim waits %v; want 1–8 s (the first of 8 borrowed workloads to end, 2.5 s on average)", never)
	}
	if any := wait(t, kueue.PreemptionPolicyAny); any != 0 {
		t.Errorf("lender that reclaims waits %v; want 0 (no admission latency measured yet)", any)
	}
}

// The holders of lent quota are maxLentHolders of the borrowers' workloads,
// or more until their usage covers what is lent: 2 CPU lent to 160
// workloads of 25m take 80 of them.
func TestLentHoldersCoverTheLentQuota(t *testing.T) {
	cases := map[string]struct {
		n    int
		cpu  string
		want int
	}{
		"the cap covers it": {n: 8, cpu: "500m", want: 8},
		"beyond the cap":    {n: 160, cpu: "25m", want: 80},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := newTestEnv(t, lendingObjectsOf(tc.n, tc.cpu, ""))
			snap, err := env.cache.Snapshot(env.ctx)
			if err != nil {
				t.Fatal(err)
			}
			lender := snap.ClusterQueue("lender")
			lent := lentQuota(lender)
			holders := lentHolders(lender, lent, t0)
			if len(holders) != tc.want {
				t.Errorf("%d holders, want %d", len(holders), tc.want)
			}
			var held int64
			for _, h := range holders {
				held += h.Usage[capacity.FlavorResource{Flavor: "default", Resource: "cpu"}]
			}
			if want := lent[capacity.FlavorResource{Flavor: "default", Resource: "cpu"}]; held < want {
				t.Errorf("holders hold %dm, less than the %dm lent", held, want)
			}
		})
	}
}

// neighbourObjects is a cohort of "borrower" (nominal 1 CPU, one 1-CPU
// workload running, one pending) and "neighbour" (nominal 2 CPU, four
// 500m workloads of its own running, busyPending of 500m pending): the
// borrower may borrow the neighbour's 2 CPU, and can borrow none now.
func neighbourObjects(busyPending int) envObjects {
	neighbour := cpuQueue("neighbour", "2")
	neighbour.Spec.CohortName = "shared"
	borrower := cpuQueue("borrower", "1")
	borrower.Spec.CohortName = "shared"
	objs := envObjects{
		flavors: []*kueue.ResourceFlavor{utiltestingapi.MakeResourceFlavor("default").Obj()},
		cohorts: []*kueue.Cohort{utiltestingapi.MakeCohort("shared").Obj()},
		cqs:     []*kueue.ClusterQueue{neighbour, borrower},
		lqs: []*kueue.LocalQueue{
			utiltestingapi.MakeLocalQueue("lq", "ns").ClusterQueue("borrower").Obj(),
			utiltestingapi.MakeLocalQueue("nq", "ns").ClusterQueue("neighbour").Obj(),
		},
		running: []*kueue.Workload{runningWorkload("own", "borrower", "1", t0.Add(-time.Second))},
		pending: []*kueue.Workload{pendingWorkload("b0", "1", t0.Add(-time.Second))},
	}
	for i := range 4 {
		objs.running = append(objs.running, runningWorkload(fmt.Sprintf("n%d", i), "neighbour", "500m", t0.Add(-time.Second)))
	}
	for i := range busyPending {
		w := pendingWorkload(fmt.Sprintf("nw%d", i), "500m", t0.Add(-time.Second))
		w.Spec.QueueName = "nq"
		objs.pending = append(objs.pending, w)
	}
	return objs
}

func TestBorrowableHoldersAreTheIdleNeighboursWorkloads(t *testing.T) {
	env := newTestEnv(t, neighbourObjects(0))
	snap, err := env.cache.Snapshot(env.ctx)
	if err != nil {
		t.Fatal(err)
	}
	borrower := snap.ClusterQueue("borrower")
	held := ClusterQueueCapacity(borrower).HeldBorrowable()
	cpu := capacity.FlavorResource{Flavor: "default", Resource: "cpu"}
	if held[cpu] != 2000 {
		t.Fatalf("borrowable CPU held by others: %dm, want the neighbour's 2000m (all held: %v)", held[cpu], held)
	}
	idle := borrowableHolders(borrower, held, t0, func(kueue.ClusterQueueReference) bool { return true })
	if len(idle) != 4 {
		t.Errorf("%d holders of an idle neighbour, want its 4 workloads", len(idle))
	}
	if busy := borrowableHolders(borrower, held, t0, func(kueue.ClusterQueueReference) bool { return false }); len(busy) != 0 {
		t.Errorf("%d holders of a neighbour with work pending, want none: it keeps what its workloads free", len(busy))
	}
}

// The borrower's pending workload waits for its own running one to end
// (20 s on average with the prior) while its neighbour has work pending;
// with the neighbour idle, also for enough of the neighbour's workloads to
// end, which comes sooner.
func TestBorrowerWaitsLessWhenItsNeighbourIsIdle(t *testing.T) {
	wait := func(t *testing.T, busyPending int) time.Duration {
		objs := neighbourObjects(busyPending)
		env := newTestEnv(t, objs)
		e := env.estimator(t, WithPriorMeanService(20*time.Second))
		e.markWarmed()
		for _, cq := range objs.cqs {
			e.ClusterQueueEventHandler().OnAdd(cq, true)
		}
		// The first refresh counts each ClusterQueue's pending workloads;
		// the second reads them.
		e.Refresh(env.ctx)
		e.Refresh(env.ctx)
		est, ok := e.Results().Workload(workload.NewReference("ns", "b0"))
		if !ok || !est.HasWait {
			t.Fatalf("no wait for b0: %+v", est)
		}
		return est.ExpectedWait
	}
	busy, idle := wait(t, 2), wait(t, 0)
	if busy < 15*time.Second || busy > 25*time.Second {
		t.Errorf("with the neighbour busy, b0 waits %v; want about 20 s, its own running workload's service", busy)
	}
	if idle > busy/2 {
		t.Errorf("with the neighbour idle, b0 waits %v; want under half the %v it waits with it busy", idle, busy)
	}
}
