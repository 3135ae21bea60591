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
	"github.com/kueue-waittime/kueue-waittime/pkg/convert"
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
			if diff := cmp.Diff(tc.want, convert.LentQuota(snap.ClusterQueue("lender"))); diff != "" {
				t.Errorf("lent quota (-want,+got):\n%s", diff)
			}
			if got := convert.LentQuota(snap.ClusterQueue("borrower")); got != nil {
				t.Errorf("the borrower's lent quota = %v, want none", got)
			}
		})
	}
}

// A lender whose 2 CPU a borrower holds waits for the borrower's workloads
// to end (the first of 8 ends in about 20 s / 8 with the 20 s prior), not
// zero as when its nominal quota was taken as free. With
// reclaimWithinCohort: Any it takes the quota back by preemption: the
// scheduler's reaction (the lender's admission latency), the eviction's
// write, the victim's release, then the admission; with nothing measured
// yet that is 0. LowerPriority does not reclaim from a borrower of the
// same priority.
func TestLenderWaitsForItsLentQuota(t *testing.T) {
	cases := map[string]struct {
		reclaim  kueue.PreemptionPolicy
		measured bool // admission latency 0.1 s and write lag 0.05 s in lender, release 0.3 s in borrower
		min, max time.Duration
	}{
		"no reclaim":                  {min: time.Second, max: 8 * time.Second},
		"no reclaim, delays measured": {measured: true, min: time.Second, max: 8 * time.Second},
		"reclaims, nothing measured":  {reclaim: kueue.PreemptionPolicyAny},
		// 0.1 + 0.05 + 0.3 + 0.1 s, less in the replicas where a holder
		// ends sooner (1 − e^(−8·0.45/20) ≈ 16 % of them).
		"reclaims, delays measured":                     {reclaim: kueue.PreemptionPolicyAny, measured: true, min: 450 * time.Millisecond, max: 550 * time.Millisecond},
		"reclaims only from lower priorities":           {reclaim: kueue.PreemptionPolicyLowerPriority, min: time.Second, max: 8 * time.Second},
		"reclaims only from lower priorities, measured": {reclaim: kueue.PreemptionPolicyLowerPriority, measured: true, min: time.Second, max: 8 * time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := newTestEnv(t, lendingObjects(4, tc.reclaim))
			e := env.estimator(t, WithPriorMeanService(20*time.Second))
			e.markWarmed()
			h := e.ClusterQueueEventHandler()
			for _, cq := range lendingObjects(4, tc.reclaim).cqs {
				h.OnAdd(cq, true)
			}
			if tc.measured {
				e.mu.Lock()
				e.statsFor("lender").AdmissionLatency.ObserveAt(env.clock.Now(), 0.1)
				e.state.Stats.Shared().AdmissionLatency.ObserveAt(env.clock.Now(), 0.1)
				e.statsFor("lender").WriteLag.Observe(0.05)
				e.statsFor("borrower").ReleaseDelay.Observe(0.3)
				e.mu.Unlock()
			}
			e.Refresh(env.ctx)
			est, ok := e.Results().Workload(workload.NewReference("ns", "l0"))
			if !ok || !est.HasWait {
				t.Fatalf("no wait for l0: %+v", est)
			}
			if est.ExpectedWait < tc.min || est.ExpectedWait > tc.max {
				t.Errorf("lender waits %v; want %v–%v", est.ExpectedWait, tc.min, tc.max)
			}
		})
	}
}

// The holders of lent quota are cohortview.HolderSet's bound (64) of the borrowers' workloads,
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
			lent := convert.LentQuota(lender)
			holders, _ := convert.LentHolders(lender, lent, t0)
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
