package convert

import (
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// TestClusterQueueCapacity checks the one converter of the estimator and
// plan: resources in name order whatever the spec's order (so a k_eff tie
// names the same bottleneck in both), flavors in the spec's order, and the
// borrowable and expected borrowable amounts of a cohort.
func TestClusterQueueCapacity(t *testing.T) {
	memoryFirst := utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceMemory, "2Gi").Resource(corev1.ResourceCPU, "4").Obj()
	cases := map[string]struct {
		cqs           []*kueue.ClusterQueue
		want          *capacity.ClusterQueue
		tieBottleneck string
	}{
		"resources in name order, flavors in spec order": {
			cqs: []*kueue.ClusterQueue{utiltestingapi.MakeClusterQueue("a").ResourceGroup(
				*utiltestingapi.MakeFlavorQuotas("spot").Resource(corev1.ResourceMemory, "1Gi").Resource(corev1.ResourceCPU, "2").Obj(),
				*memoryFirst,
			).Obj()},
			want: &capacity.ClusterQueue{Name: "a", ResourceGroups: []capacity.ResourceGroup{{
				Resources: []string{"cpu", "memory"},
				Flavors: []capacity.FlavorQuotas{
					{Name: "spot", Quotas: []capacity.Quota{{Nominal: 2000}, {Nominal: 1 << 30}}},
					{Name: "default", Quotas: []capacity.Quota{{Nominal: 4000}, {Nominal: 2 << 30}}},
				},
			}}},
		},
		"a tie names the first resource by name, not by spec order": {
			cqs: []*kueue.ClusterQueue{utiltestingapi.MakeClusterQueue("a").ResourceGroup(*memoryFirst).Obj()},
			want: &capacity.ClusterQueue{Name: "a", ResourceGroups: []capacity.ResourceGroup{{
				Resources: []string{"cpu", "memory"},
				Flavors:   []capacity.FlavorQuotas{{Name: "default", Quotas: []capacity.Quota{{Nominal: 4000}, {Nominal: 2 << 30}}}},
			}}},
			// 1 cpu and 512Mi: 4 fit by either resource.
			tieBottleneck: "cpu",
		},
		"an idle cohort: all that is borrowable is expected": {
			cqs: []*kueue.ClusterQueue{
				utiltestingapi.MakeClusterQueue("a").Cohort("team").ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, "2").Obj()).Obj(),
				utiltestingapi.MakeClusterQueue("b").Cohort("team").ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, "4").Obj()).Obj(),
			},
			want: &capacity.ClusterQueue{Name: "a", ResourceGroups: []capacity.ResourceGroup{{
				Resources: []string{"cpu"},
				Flavors:   []capacity.FlavorQuotas{{Name: "default", Quotas: []capacity.Quota{{Nominal: 2000, Borrowable: 4000, ExpectedBorrowable: 4000}}}},
			}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap := snapshotOf(t, snapshotObjects{
				flavors: []*kueue.ResourceFlavor{utiltestingapi.MakeResourceFlavor("default").Obj(), utiltestingapi.MakeResourceFlavor("spot").Obj()},
				cqs:     tc.cqs,
			})
			got := ClusterQueueCapacity(snap.ClusterQueue("a"))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("capacity (-want,+got):\n%s", diff)
			}
			if tc.tieBottleneck == "" {
				return
			}
			k, err := capacity.KEff(got, capacity.Workload{PodSets: []capacity.PodSet{{Name: "main", Count: 1, Requests: map[string]int64{"cpu": 1000, "memory": 512 << 20}}}}, capacity.BasisNominal)
			if err != nil {
				t.Fatal(err)
			}
			if k.Servers != 4 || k.Resource != tc.tieBottleneck {
				t.Errorf("k_eff = %d by %s, want 4 by %s", k.Servers, k.Resource, tc.tieBottleneck)
			}
		})
	}
}

// TestConversionsIntoReusedValuesEqualFreshOnes converts ClusterQueues and
// workloads of different shapes one after another into the same values,
// as Classify does through its scratch, and checks that each result equals
// a fresh conversion: nothing of a larger earlier shape (a second group or
// flavor, a pod set, a request) is left behind.
func TestConversionsIntoReusedValuesEqualFreshOnes(t *testing.T) {
	wide := utiltestingapi.MakeClusterQueue("wide").ResourceGroup(
		*utiltestingapi.MakeFlavorQuotas("spot").Resource(corev1.ResourceCPU, "8").Resource(corev1.ResourceMemory, "32Gi").Obj(),
		*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, "4").Resource(corev1.ResourceMemory, "16Gi").Obj(),
	).ResourceGroup(
		*utiltestingapi.MakeFlavorQuotas("gpu").Resource("nvidia.com/gpu", "4").Obj(),
	).Obj()
	narrow := utiltestingapi.MakeClusterQueue("narrow").ResourceGroup(
		*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, "2").Obj(),
	).Obj()
	snap := snapshotOf(t, snapshotObjects{
		flavors: []*kueue.ResourceFlavor{
			utiltestingapi.MakeResourceFlavor("default").Obj(),
			utiltestingapi.MakeResourceFlavor("spot").Obj(),
			utiltestingapi.MakeResourceFlavor("gpu").Obj(),
		},
		cqs: []*kueue.ClusterQueue{wide, narrow},
	})
	training := workload.NewInfo(utiltestingapi.MakeWorkload("training", "default").PodSets(
		*utiltestingapi.MakePodSet("driver", 1).Request(corev1.ResourceCPU, "1").Request(corev1.ResourceMemory, "2Gi").Obj(),
		*utiltestingapi.MakePodSet("workers", 4).Request(corev1.ResourceCPU, "2").Request("nvidia.com/gpu", "1").Obj(),
	).Obj())
	small := workload.NewInfo(utiltestingapi.MakeWorkload("small", "default").Request(corev1.ResourceCPU, "500m").Obj())
	idle := workload.NewInfo(utiltestingapi.MakeWorkload("idle", "default").PodSets(
		*utiltestingapi.MakePodSet("main", 0).Request(corev1.ResourceCPU, "1").Obj(),
	).Obj())

	var reusedCapacity capacity.ClusterQueue
	for i, name := range []kueue.ClusterQueueReference{"wide", "narrow", "wide", "narrow"} {
		cqs := snap.ClusterQueue(name)
		CapacityInto(&reusedCapacity, cqs)
		if diff := cmp.Diff(ClusterQueueCapacity(cqs), &reusedCapacity); diff != "" {
			t.Errorf("conversion %d (%s) into a reused ClusterQueue (-fresh,+reused):\n%s", i, name, diff)
		}
	}
	var reusedDemand capacity.Workload
	add := NewConverter()
	for i, info := range []*workload.Info{training, small, training, idle, small} {
		add.Into(&reusedDemand, DemandOf(info))
		if diff := cmp.Diff(WorkloadDemand(info), reusedDemand); diff != "" {
			t.Errorf("conversion %d (%s) into a reused Workload (-fresh,+reused):\n%s", i, info.Obj.Name, diff)
		}
	}
	if got, want := len(reusedDemand.PodSets), 1; got != want {
		t.Fatalf("the last conversion left %d pod sets, want %d", got, want)
	}
	if diff := cmp.Diff(map[string]int64{"cpu": 500}, reusedDemand.PodSets[0].Requests); diff != "" {
		t.Errorf("the last conversion's requests (-want,+got):\n%s", diff)
	}
}

// TestRunningUsageSumsWhatKueueSums checks RunningUsages.of against Kueue's own
// Info.FlavorResourceUsage, converted, on admitted workloads whose pod sets
// share a flavor or use different flavors, and one whose admission assigns
// only one of the resources it requests (Kueue counts what was admitted).
func TestRunningUsageSumsWhatKueueSums(t *testing.T) {
	reservedAt := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		wl   *kueue.Workload
		want capacity.Quantities
	}{
		"two pod sets on one flavor add up": {
			wl: utiltestingapi.MakeWorkload("w", "ns").PodSets(
				*utiltestingapi.MakePodSet("driver", 1).Request(corev1.ResourceCPU, "1").Obj(),
				*utiltestingapi.MakePodSet("workers", 3).Request(corev1.ResourceCPU, "2").Request(corev1.ResourceMemory, "1Gi").Obj(),
			).ReserveQuotaAt(utiltestingapi.MakeAdmission("cq").PodSets(
				utiltestingapi.MakePodSetAssignment("driver").Assignment(corev1.ResourceCPU, "default", "1").Obj(),
				utiltestingapi.MakePodSetAssignment("workers").Count(3).Assignment(corev1.ResourceCPU, "default", "6").Assignment(corev1.ResourceMemory, "default", "3Gi").Obj(),
			).Obj(), reservedAt).Obj(),
			want: capacity.Quantities{
				{Flavor: "default", Resource: "cpu"}:    7000,
				{Flavor: "default", Resource: "memory"}: 3 << 30,
			},
		},
		"pod sets on different flavors": {
			wl: utiltestingapi.MakeWorkload("w", "ns").PodSets(
				*utiltestingapi.MakePodSet("a", 2).Request(corev1.ResourceCPU, "1").Obj(),
				*utiltestingapi.MakePodSet("b", 1).Request(corev1.ResourceCPU, "4").Obj(),
			).ReserveQuotaAt(utiltestingapi.MakeAdmission("cq").PodSets(
				utiltestingapi.MakePodSetAssignment("a").Count(2).Assignment(corev1.ResourceCPU, "spot", "2").Obj(),
				utiltestingapi.MakePodSetAssignment("b").Assignment(corev1.ResourceCPU, "default", "4").Obj(),
			).Obj(), reservedAt).Obj(),
			want: capacity.Quantities{
				{Flavor: "spot", Resource: "cpu"}:    2000,
				{Flavor: "default", Resource: "cpu"}: 4000,
			},
		},
		"a requested resource the admission does not assign is not held": {
			wl: utiltestingapi.MakeWorkload("w", "ns").Request(corev1.ResourceCPU, "1").Request(corev1.ResourceMemory, "2Gi").
				ReserveQuotaAt(utiltestingapi.MakeAdmission("cq").PodSets(
					utiltestingapi.MakePodSetAssignment(kueue.DefaultPodSetName).Assignment(corev1.ResourceCPU, "default", "1").Obj(),
				).Obj(), reservedAt).Obj(),
			want: capacity.Quantities{
				{Flavor: "default", Resource: "cpu"}: 1000,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			info := workload.NewInfo(tc.wl)
			got := NewRunningUsages().Of(info)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("RunningUsages.of (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(kueueUsage(info), got); diff != "" {
				t.Errorf("RunningUsages.of differs from Kueue's FlavorResourceUsage (-Kueue,+of):\n%s", diff)
			}
		})
	}
}

// kueueUsage is Kueue's Info.FlavorResourceUsage, converted.
func kueueUsage(info *workload.Info) capacity.Quantities {
	out := capacity.Quantities{}
	for fr, v := range info.FlavorResourceUsage() {
		out[capacity.FlavorResource{Flavor: string(fr.Flavor), Resource: string(fr.Resource)}] += v.Int64()
	}
	return out
}

// TestRunningUsagesShareOneMapPerDistinctUsage hands RunningUsages the
// running workloads of a ClusterQueue: two of one usage (their pod sets in
// a different order) get the same map, one on another flavor and one of
// another size their own, each equal to Kueue's sum; after a reset the
// first usage gets a new map.
func TestRunningUsagesShareOneMapPerDistinctUsage(t *testing.T) {
	reservedAt := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	admitted := func(name, flavor, cpu string, first, second string) *workload.Info {
		return workload.NewInfo(utiltestingapi.MakeWorkload(name, "ns").PodSets(
			*utiltestingapi.MakePodSet(kueue.PodSetReference(first), 1).Request(corev1.ResourceCPU, cpu).Obj(),
			*utiltestingapi.MakePodSet(kueue.PodSetReference(second), 1).Request(corev1.ResourceMemory, "1Gi").Obj(),
		).ReserveQuotaAt(utiltestingapi.MakeAdmission("cq").PodSets(
			utiltestingapi.MakePodSetAssignment(kueue.PodSetReference(first)).Assignment(corev1.ResourceCPU, kueue.ResourceFlavorReference(flavor), cpu).Obj(),
			utiltestingapi.MakePodSetAssignment(kueue.PodSetReference(second)).Assignment(corev1.ResourceMemory, kueue.ResourceFlavorReference(flavor), "1Gi").Obj(),
		).Obj(), reservedAt).Obj())
	}
	infos := []*workload.Info{
		admitted("a", "default", "1", "x", "y"),
		admitted("b", "default", "1", "y", "x"),
		admitted("c", "spot", "1", "x", "y"),
		admitted("d", "default", "2", "x", "y"),
	}
	u := NewRunningUsages()
	got := make([]capacity.Quantities, len(infos))
	for i, info := range infos {
		got[i] = u.Of(info)
		if diff := cmp.Diff(kueueUsage(info), got[i]); diff != "" {
			t.Errorf("%s: RunningUsages.of (-Kueue's FlavorResourceUsage,+of):\n%s", info.Obj.Name, diff)
		}
	}
	same := func(a, b capacity.Quantities) bool {
		return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}
	if !same(got[0], got[1]) {
		t.Errorf("a and b hold the same usage and got two maps")
	}
	for _, i := range []int{2, 3} {
		if same(got[0], got[i]) {
			t.Errorf("a and %s hold different usages and share a map", infos[i].Obj.Name)
		}
	}
	u.Reset()
	if again := u.Of(infos[0]); same(again, got[0]) {
		t.Errorf("after a reset a's usage is the map handed out before it")
	}
}
