package estimator

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"
)

// borrowerObjects is a cohort "team" of an idle lender with 4 CPU and two
// borrowers without quota, each with one pending 4-CPU workload.
func borrowerObjects() envObjects {
	member := func(name, cpu string) *kueue.ClusterQueue {
		return utiltestingapi.MakeClusterQueue(name).Cohort("team").
			ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, cpu).Resource(corev1.ResourceMemory, "1Gi").Obj()).
			Obj()
	}
	objs := envObjects{
		flavors: []*kueue.ResourceFlavor{utiltestingapi.MakeResourceFlavor("default").Obj()},
		cqs:     []*kueue.ClusterQueue{member("x-borrower", "0"), member("y-borrower", "0"), member("z-lender", "4")},
	}
	for _, cq := range []string{"x-borrower", "y-borrower"} {
		objs.lqs = append(objs.lqs, utiltestingapi.MakeLocalQueue("lq-"+cq, "ns").ClusterQueue(cq).Obj())
		w := pendingWorkload("wl-"+cq, "4", t0.Add(-time.Second))
		w.Spec.QueueName = kueue.LocalQueueName("lq-" + cq)
		objs.pending = append(objs.pending, w)
	}
	return objs
}

// TestCohortSiblingsAreRolledTogether: two borrowers cannot both use the
// lender's idle 4 CPU; rolled together, the second waits for the first's
// workload (prior mean service 100 s) instead of both being admitted now.
func TestCohortSiblingsAreRolledTogether(t *testing.T) {
	env := newTestEnv(t, borrowerObjects())
	e := env.estimator(t, WithPriorMeanService(100*time.Second))
	e.Refresh(env.ctx)
	res := e.Results()
	first, ok1 := res.Workload(workload.NewReference("ns", "wl-x-borrower"))
	second, ok2 := res.Workload(workload.NewReference("ns", "wl-y-borrower"))
	if !ok1 || !ok2 || !first.HasWait || !second.HasWait {
		t.Fatalf("estimates %+v, %+v: want both with a wait", first, second)
	}
	if first.ExpectedWait > 5*time.Second {
		t.Errorf("first borrower's expected wait %v, want about the admission latency (it fits now)", first.ExpectedWait)
	}
	if second.ExpectedWait < 50*time.Second {
		t.Errorf("second borrower's expected wait %v, want about the first's service (100 s mean)", second.ExpectedWait)
	}
}

// TestClusterQueueWithoutCohortForecastsAsAlone: a ClusterQueue without a
// cohort gets the same estimates whether or not a cohort is rolled beside
// it in the same refresh.
func TestClusterQueueWithoutCohortForecastsAsAlone(t *testing.T) {
	estimates := func(objs envObjects) []WorkloadEstimate {
		env := newTestEnv(t, objs)
		e := env.estimator(t, WithPriorMeanService(20*time.Second))
		e.Refresh(env.ctx)
		var out []WorkloadEstimate
		for _, name := range []string{"p0", "p1", "p2", "huge"} {
			est, ok := e.Results().Workload(workload.NewReference("ns", name))
			if !ok {
				t.Fatalf("no estimate for %s", name)
			}
			out = append(out, est)
		}
		return out
	}
	alone := estimates(paperObjects())
	withCohort := paperObjects()
	c := borrowerObjects()
	withCohort.cqs = append(withCohort.cqs, c.cqs...)
	withCohort.lqs = append(withCohort.lqs, c.lqs...)
	withCohort.pending = append(withCohort.pending, c.pending...)
	beside := estimates(withCohort)
	if !alone[0].HasWait {
		t.Fatalf("estimate %+v: want one with a wait", alone[0])
	}
	if diff := cmp.Diff(alone, beside); diff != "" {
		t.Errorf("estimates of the ClusterQueue without cohort (-alone +beside a cohort):\n%s", diff)
	}
}
