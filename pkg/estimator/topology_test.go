package estimator

import (
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	tasindexer "sigs.k8s.io/kueue/pkg/controller/tas/indexer"
	"sigs.k8s.io/kueue/pkg/features"
	preemptexpectations "sigs.k8s.io/kueue/pkg/scheduler/preemption/expectations"
	utiltesting "sigs.k8s.io/kueue/pkg/util/testing"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
	testingnode "sigs.k8s.io/kueue/pkg/util/testingjobs/node"
	"sigs.k8s.io/kueue/pkg/workload"
)

const (
	tasBlockLabel = "cloud.com/topology-block"
	tasRackLabel  = "cloud.com/topology-rack"
	tasGPU        = corev1.ResourceName("nvidia.com/gpu")
	// tasTopologyMiss is what Kueue v0.19.2 writes when a topology did not
	// fit a workload at this attempt.
	tasTopologyMiss = `couldn't assign flavors to pod set main: topology "default" allows to fit only 1 out of 2 pod(s)`
)

// tasEnv is Kueue's real scheduler cache and queue manager with
// Topology-Aware Scheduling: one block of two racks, one node of 8 GPUs in
// each, and a ClusterQueue "tas" whose flavor "tas-gpu" (those nodes) has
// 16 GPUs of quota, so that 16 GPUs fit the quota but not one rack.
func tasEnv(t *testing.T) *testEnv {
	t.Helper()
	ctx := t.Context()
	log := logr.Discard()
	builder := utiltesting.NewClientBuilder()
	if err := tasindexer.SetupIndexes(ctx, utiltesting.AsIndexer(builder)); err != nil {
		t.Fatalf("TAS indexes: %v", err)
	}
	cq := utiltestingapi.MakeClusterQueue("tas").ResourceGroup(
		*utiltestingapi.MakeFlavorQuotas("tas-gpu").Resource(tasGPU, "16").Resource(corev1.ResourceCPU, "64").Obj()).Obj()
	cl := builder.WithLists(&kueue.ClusterQueueList{Items: []kueue.ClusterQueue{*cq.DeepCopy()}}).Build()
	cache := schdcache.New(cl)
	queues := qcache.NewManagerForUnitTests(cl, cache, qcache.WithPreemptionExpectations(preemptexpectations.New()))
	for _, rack := range []string{"r1", "r2"} {
		node := testingnode.MakeNode("b1-"+rack+"-x").
			Label("tas-node", "true").
			Label(tasBlockLabel, "b1").
			Label(tasRackLabel, rack).
			Label(corev1.LabelHostname, "b1-"+rack+"-x").
			StatusAllocatable(corev1.ResourceList{
				tasGPU:              resource.MustParse("8"),
				corev1.ResourceCPU:  resource.MustParse("32"),
				corev1.ResourcePods: resource.MustParse("110"),
			}).
			Ready().
			Obj()
		cache.TASCache().SyncNode(node)
	}
	cache.AddOrUpdateResourceFlavor(log, utiltestingapi.MakeResourceFlavor("tas-gpu").
		NodeLabel("tas-node", "true").TopologyName("default").Obj())
	cache.AddOrUpdateTopology(log, utiltestingapi.MakeTopology("default").
		Levels(tasBlockLabel, tasRackLabel, corev1.LabelHostname).Obj())
	if err := cache.AddClusterQueue(ctx, cq); err != nil {
		t.Fatalf("adding cluster queue to cache: %v", err)
	}
	if err := queues.AddClusterQueue(ctx, cq); err != nil {
		t.Fatalf("adding cluster queue to queues: %v", err)
	}
	if err := queues.AddLocalQueue(ctx, utiltestingapi.MakeLocalQueue("lq", "default").ClusterQueue("tas").Obj()); err != nil {
		t.Fatalf("adding local queue: %v", err)
	}
	return &testEnv{ctx: ctx, cache: cache, queues: queues}
}

// gpuWorkload is a pending workload of pods of 8 GPUs each in LocalQueue
// "lq", its one pod set shaped by topology.
func gpuWorkload(name string, pods int32, topology func(*utiltestingapi.PodSetWrapper) *utiltestingapi.PodSetWrapper) *kueue.Workload {
	ps := utiltestingapi.MakePodSet("main", int(pods)).Request(tasGPU, "8")
	if topology != nil {
		ps = topology(ps)
	}
	return utiltestingapi.MakeWorkload(name, "default").Queue("lq").Creation(t0).PodSets(*ps.Obj()).Obj()
}

func TestInadmissibleConditionFindsAWorkloadNoTopologyDomainCanHold(t *testing.T) {
	features.SetFeatureGateDuringTest(t, features.TopologyAwareScheduling, true)
	env := tasEnv(t)
	snap, err := env.cache.Snapshot(env.ctx)
	if err != nil {
		t.Fatal(err)
	}
	cqs := snap.ClusterQueue("tas")
	if len(cqs.TASFlavors) != 1 {
		t.Fatalf("the snapshot has %d TAS flavors, want 1 (the test's setup)", len(cqs.TASFlavors))
	}
	required := func(ps *utiltestingapi.PodSetWrapper) *utiltestingapi.PodSetWrapper {
		return ps.RequiredTopologyRequest(tasRackLabel)
	}
	preferred := func(ps *utiltestingapi.PodSetWrapper) *utiltestingapi.PodSetWrapper {
		return ps.PreferredTopologyRequest(tasRackLabel)
	}
	cases := map[string]struct {
		wl            *kueue.Workload
		reason, msg   string
		observability bool
		wantReason    string
		wantMsg       string
		// wantVerdict is the start of the reason the refresh keeps, "" for
		// none.
		wantVerdict string
	}{
		"16 GPUs required in one rack of 8: never placed": {
			wl: gpuWorkload("two-in-a-rack", 2, required), msg: tasTopologyMiss,
			wantMsg:     tasTopologyMiss + ". Wait time estimation: the workload is Unfeasible: topology: pod set main cannot be placed even with no workload placed by topology-aware scheduling (flavor tas-gpu: topology \"default\" allows to fit only 1 out of 2 pod(s))",
			wantVerdict: "topology: pod set main cannot be placed",
		},
		"16 GPUs preferred in one rack: placed across both": {
			wl: gpuWorkload("two-preferred", 2, preferred), msg: tasTopologyMiss,
			wantMsg: tasTopologyMiss + ". Wait time estimation: the workload is Quotable",
		},
		"8 GPUs required in one rack: placed when a rack frees": {
			wl: gpuWorkload("one-in-a-rack", 1, required), msg: tasTopologyMiss,
			wantMsg: tasTopologyMiss + ". Wait time estimation: the workload is Quotable",
		},
		"no topology request: not checked": {
			wl: gpuWorkload("no-topology", 2, nil), msg: tasTopologyMiss,
			wantMsg: tasTopologyMiss + ". Wait time estimation: the workload is Quotable",
		},
		"Kueue's message not about topology: not checked": {
			wl: gpuWorkload("waiting-for-quota", 2, required), msg: "insufficient unused quota",
			wantMsg: "insufficient unused quota. Wait time estimation: the workload is Quotable",
		},
		"with observability Kueue's own reason and message stay": {
			wl: gpuWorkload("observed", 2, required), reason: kueue.WorkloadQuotaReservedReasonTopologyPlacementFailed,
			msg: tasTopologyMiss, observability: true,
			wantReason:  kueue.WorkloadQuotaReservedReasonTopologyPlacementFailed,
			wantMsg:     tasTopologyMiss,
			wantVerdict: "topology: pod set main cannot be placed",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			features.SetFeatureGateDuringTest(t, features.UnadmittedWorkloadsObservability, tc.observability)
			e, err := New(env.cache, env.queues)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			gotReason, gotMsg := e.InadmissibleCondition(tc.reason, tc.msg, workload.NewInfo(tc.wl), cqs)
			if diff := cmp.Diff([]string{tc.wantReason, tc.wantMsg}, []string{gotReason, gotMsg}); diff != "" {
				t.Errorf("InadmissibleCondition (-want,+got):\n%s", diff)
			}
			verdict, kept := e.topology.Load()[workload.Key(tc.wl)]
			if kept != (tc.wantVerdict != "") || !strings.HasPrefix(verdict, tc.wantVerdict) {
				t.Errorf("kept verdict %q (%v), want one starting %q", verdict, kept, tc.wantVerdict)
			}
		})
	}
}

func TestTopologyVerdictReachesTheRefreshUntilTheWorkloadLeaves(t *testing.T) {
	features.SetFeatureGateDuringTest(t, features.TopologyAwareScheduling, true)
	env := tasEnv(t)
	stuck := gpuWorkload("two-in-a-rack", 2, func(ps *utiltestingapi.PodSetWrapper) *utiltestingapi.PodSetWrapper {
		return ps.RequiredTopologyRequest(tasRackLabel)
	})
	fits := gpuWorkload("one-in-a-rack", 1, func(ps *utiltestingapi.PodSetWrapper) *utiltestingapi.PodSetWrapper {
		return ps.RequiredTopologyRequest(tasRackLabel)
	})
	for _, wl := range []*kueue.Workload{stuck, fits} {
		if err := env.queues.AddOrUpdateWorkload(logr.Discard(), wl); err != nil {
			t.Fatalf("adding pending workload: %v", err)
		}
	}
	snap, err := env.cache.Snapshot(env.ctx)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(env.cache, env.queues, WithPriorMeanService(60e9))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	for _, wl := range []*kueue.Workload{stuck, fits} {
		e.InadmissibleCondition("", tasTopologyMiss, workload.NewInfo(wl), snap.ClusterQueue("tas"))
	}
	e.Refresh(env.ctx)
	got := e.Results()
	stuckEst, ok := got.Workload(workload.Key(stuck))
	if !ok || stuckEst.Admissibility != Unfeasible || !strings.HasPrefix(stuckEst.Reason, "topology: pod set main cannot be placed") {
		t.Errorf("the workload no rack can hold: %+v (found %v); want Unfeasible for its topology", stuckEst, ok)
	}
	fitsEst, ok := got.Workload(workload.Key(fits))
	if !ok || fitsEst.Admissibility != Quotable {
		t.Errorf("the workload a rack can hold: %+v (found %v); want Quotable", fitsEst, ok)
	}

	e.onWorkloadDelete(stuck)
	if len(e.topology.Load()) != 0 {
		t.Errorf("verdicts after the workload's deletion: %v, want none", e.topology.Load())
	}
}

func TestTopologyVerdictIsTakenBackWhenANodeMakesRoom(t *testing.T) {
	features.SetFeatureGateDuringTest(t, features.TopologyAwareScheduling, true)
	env := tasEnv(t)
	stuck := workload.NewInfo(gpuWorkload("two-in-a-rack", 2, func(ps *utiltestingapi.PodSetWrapper) *utiltestingapi.PodSetWrapper {
		return ps.RequiredTopologyRequest(tasRackLabel)
	}))
	e, err := New(env.cache, env.queues)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	snap, err := env.cache.Snapshot(env.ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.InadmissibleCondition("", tasTopologyMiss, stuck, snap.ClusterQueue("tas"))
	if len(e.topology.Load()) != 1 {
		t.Fatalf("verdicts before the node came: %v, want one", e.topology.Load())
	}
	// Checked again on the same nodes, the verdict stands.
	if _, msg := e.InadmissibleCondition("", "insufficient unused quota", stuck, snap.ClusterQueue("tas")); !strings.Contains(msg, "the workload is Unfeasible: topology:") {
		t.Fatalf("message before the node came %q, want the topology verdict", msg)
	}
	env.cache.TASCache().SyncNode(testingnode.MakeNode("b1-r1-y").
		Label("tas-node", "true").
		Label(tasBlockLabel, "b1").
		Label(tasRackLabel, "r1").
		Label(corev1.LabelHostname, "b1-r1-y").
		StatusAllocatable(corev1.ResourceList{
			tasGPU:              resource.MustParse("8"),
			corev1.ResourceCPU:  resource.MustParse("32"),
			corev1.ResourcePods: resource.MustParse("110"),
		}).
		Ready().
		Obj())
	snap, err = env.cache.Snapshot(env.ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Kueue's message no longer names the topology (the quota is in use
	// now): the known verdict is checked again all the same.
	_, msg := e.InadmissibleCondition("", "insufficient unused quota", stuck, snap.ClusterQueue("tas"))
	if want := "insufficient unused quota. Wait time estimation: the workload is Quotable"; msg != want {
		t.Errorf("message %q, want %q", msg, want)
	}
	if len(e.topology.Load()) != 0 {
		t.Errorf("verdicts once rack r1 holds 16 GPUs: %v, want none", e.topology.Load())
	}
}
