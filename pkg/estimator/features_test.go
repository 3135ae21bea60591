package estimator

import (
	"slices"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/features"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"

	"github.com/kueue-waittime/kueue-waittime/pkg/estimates"
)

// featureNames are the names of a queue model's features, in order.
func featureNames(m QueueModel) []estimates.FeatureName {
	var out []estimates.FeatureName
	for _, f := range m.Features {
		out = append(out, f.Name)
	}
	return out
}

// The queue model lists the features each ClusterQueue uses, read from
// Kueue's snapshot (preemption policies, the cohort tree, admission
// checks) and the manager's settings (fair sharing, waitForPodsReady).
func TestQueueModelListsTheFeaturesTheClusterQueueUses(t *testing.T) {
	every := cpuQueue("every-policy", "2")
	every.Spec.CohortName = "team"
	every.Spec.Preemption = &kueue.ClusterQueuePreemption{
		WithinClusterQueue:  kueue.PreemptionPolicyLowerPriority,
		ReclaimWithinCohort: kueue.PreemptionPolicyAny,
		BorrowWithinCohort:  &kueue.BorrowWithinCohort{Policy: kueue.BorrowWithinCohortPolicyLowerPriority},
	}
	never := cpuQueue("never-preempts", "2")
	never.Spec.CohortName = "org"
	never.Spec.Preemption = &kueue.ClusterQueuePreemption{
		WithinClusterQueue:  kueue.PreemptionPolicyNever,
		ReclaimWithinCohort: kueue.PreemptionPolicyNever,
		BorrowWithinCohort:  &kueue.BorrowWithinCohort{Policy: kueue.BorrowWithinCohortPolicyNever},
	}
	checked := utiltestingapi.MakeClusterQueue("checked").
		ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, "2").Obj()).
		AdmissionChecks("provisioning").Obj()
	objs := envObjects{
		flavors: []*kueue.ResourceFlavor{utiltestingapi.MakeResourceFlavor("default").Obj()},
		cohorts: []*kueue.Cohort{
			utiltestingapi.MakeCohort("org").Obj(),
			utiltestingapi.MakeCohort("team").Parent("org").Obj(),
		},
		cqs: []*kueue.ClusterQueue{every, never, checked, cpuQueue("plain", "2")},
	}
	// own are the features each ClusterQueue's own spec and cohort tree
	// give it; the manager's settings add theirs, which come after them
	// in the order of the FeatureName constants.
	own := map[kueue.ClusterQueueReference][]estimates.FeatureName{
		"every-policy": {estimates.FeaturePreemption, estimates.FeatureCohortBorrowing, estimates.FeatureHierarchicalCohorts,
			estimates.FeatureReclaimWithinCohort, estimates.FeatureBorrowWithinCohort},
		"never-preempts": {estimates.FeatureCohortBorrowing},
		"checked":        {estimates.FeatureAdmissionChecks},
		"plain":          nil,
	}
	tests := map[string]struct {
		opts []Option
		// added is what the options add to each ClusterQueue's own
		// features.
		added map[kueue.ClusterQueueReference][]estimates.FeatureName
	}{
		"the ClusterQueues' own features": {},
		"the manager's fair sharing, only in a cohort, and waitForPodsReady, everywhere": {
			opts: []Option{WithFairSharing(true), WithWaitForPodsReady(true)},
			added: map[kueue.ClusterQueueReference][]estimates.FeatureName{
				"every-policy":   {estimates.FeatureFairSharing, estimates.FeatureWaitForPodsReady},
				"never-preempts": {estimates.FeatureFairSharing, estimates.FeatureWaitForPodsReady},
				"checked":        {estimates.FeatureWaitForPodsReady},
				"plain":          {estimates.FeatureWaitForPodsReady},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := newTestEnv(t, objs)
			env.cache.AddOrUpdateAdmissionCheck(logr.Discard(), utiltestingapi.MakeAdmissionCheck("provisioning").
				ControllerName("kueue.x-k8s.io/provisioning-request").Active(metav1.ConditionTrue).Obj())
			e := env.estimator(t, tc.opts...)
			h := e.ClusterQueueEventHandler()
			for _, cq := range objs.cqs {
				h.OnAdd(cq, true)
			}
			e.Refresh(env.ctx)
			got := map[kueue.ClusterQueueReference][]estimates.FeatureName{}
			for name, m := range e.Results().Queues() {
				got[name] = featureNames(m)
			}
			want := map[kueue.ClusterQueueReference][]estimates.FeatureName{}
			for cq, features := range own {
				want[cq] = append(slices.Clone(features), tc.added[cq]...)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("features (-want,+got):\n%s", diff)
			}
		})
	}
}

// A ClusterQueue whose flavor has a topology says that topology-aware
// scheduling is approximated.
func TestQueueModelSaysTopologyAwareSchedulingIsApproximated(t *testing.T) {
	features.SetFeatureGateDuringTest(t, features.TopologyAwareScheduling, true)
	env := tasEnv(t)
	e, err := New(env.cache, env.queues, WithPriorMeanService(60e9))
	if err != nil {
		t.Fatal(err)
	}
	e.Refresh(env.ctx)
	m, ok := e.Results().Queue("tas")
	if !ok {
		t.Fatal("no model of ClusterQueue tas")
	}
	want := []estimates.Feature{{
		Name:     estimates.FeatureTopologyAwareScheduling,
		Coverage: estimates.Approximated,
		Note:     "a workload no topology domain can ever hold is Unfeasible; waits count the flavor's whole quota, not each domain's",
	}}
	if diff := cmp.Diff(want, m.Features); diff != "" {
		t.Errorf("features (-want,+got):\n%s", diff)
	}
}
