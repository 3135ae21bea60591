package estimator

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// printedMix is how the a-priori model's mix was built before demand
// classes: one class per distinct fmt.Sprint of workloadDemand's pod sets,
// counted, in the order of those strings.
func printedMix(infos []*workload.Info) []capacity.Class {
	classes := make(map[string]*capacity.Class)
	for _, info := range infos {
		w := workloadDemand(info)
		k := fmt.Sprint(w.PodSets)
		if c, ok := classes[k]; ok {
			c.Rate++
			continue
		}
		classes[k] = &capacity.Class{Workload: w, Rate: 1}
	}
	var mix []capacity.Class
	for _, k := range slices.Sorted(maps.Keys(classes)) {
		mix = append(mix, *classes[k])
	}
	return mix
}

func TestDemandClassesGiveThePrintedMix(t *testing.T) {
	podSet := func(name string, count int, requests ...string) kueue.PodSet {
		ps := utiltestingapi.MakePodSet(kueue.PodSetReference(name), count)
		for i := 0; i < len(requests); i += 2 {
			ps.Request(corev1.ResourceName(requests[i]), requests[i+1])
		}
		return *ps.Obj()
	}
	shape := func(podSets ...kueue.PodSet) *workload.Info {
		return workload.NewInfo(utiltestingapi.MakeWorkload("w", "ns").PodSets(podSets...).Obj())
	}
	infos := []*workload.Info{
		shape(podSet("main", 1, "cpu", "1", "memory", "1Gi")),
		shape(podSet("main", 1, "memory", "1Gi", "cpu", "1")), // the same, requests in another order
		shape(podSet("main", 2, "cpu", "1", "memory", "1Gi")), // another count
		shape(podSet("main", 1, "cpu", "2", "memory", "1Gi")),
		shape(podSet("main", 1, "cpu", "1")),                   // one resource fewer
		shape(podSet("other", 1, "cpu", "1", "memory", "1Gi")), // another name
		shape(podSet("driver", 1, "cpu", "1"), podSet("workers", 4, "cpu", "2", "memory", "4Gi")),
		shape(podSet("driver", 1, "cpu", "1"), podSet("workers", 4, "cpu", "2", "memory", "4Gi")),
		shape(podSet("workers", 4, "cpu", "2", "memory", "4Gi"), podSet("driver", 1, "cpu", "1")), // pod sets swapped
		shape(podSet("main", 3, "cpu", "500m", "memory", "1Gi")),
		shape(podSet("main", 1, "cpu", "1", "memory", "1Gi")),
		shape(podSet("main", 1, "cpu", "1", "memory", "1Gi", "nvidia.com/gpu", "1")),
	}
	classes := newDemandClasses()
	for _, info := range infos {
		classes.of(info).class.Rate++
	}
	want := printedMix(infos)
	got := classes.mix()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("mix (-printed +classes):\n%s", diff)
	}

	cq := &capacity.ClusterQueue{Name: "cq", ResourceGroups: []capacity.ResourceGroup{{
		Resources: []string{"cpu", "memory", "nvidia.com/gpu"},
		Flavors: []capacity.FlavorQuotas{{Name: "default", Quotas: []capacity.Quota{
			{Nominal: 64000, Borrowable: 16000, ExpectedBorrowable: 8000},
			{Nominal: 256 << 30},
			{Nominal: 8},
		}}},
	}}}
	for _, basis := range []capacity.CapacityBasis{capacity.BasisNominal, capacity.BasisExpectedBorrowing} {
		wantK, wantErr := capacity.KEffMix(cq, want, basis)
		gotK, gotErr := capacity.KEffMix(cq, got, basis)
		if diff := cmp.Diff(wantK, gotK, cmpopts.EquateEmpty()); diff != "" || (wantErr == nil) != (gotErr == nil) {
			t.Errorf("k_eff on basis %v (-printed +classes):\n%s\nerrors %v, %v", basis, diff, wantErr, gotErr)
		}
	}
}

func TestDemandClassesClassifyOncePerShape(t *testing.T) {
	cq := &capacity.ClusterQueue{Name: "cq", ResourceGroups: []capacity.ResourceGroup{{
		Resources: []string{"cpu"},
		Flavors: []capacity.FlavorQuotas{
			{Name: "a", Quotas: []capacity.Quota{{Nominal: 2000}}},
			{Name: "b", Quotas: []capacity.Quota{{Nominal: 8000}}},
		},
	}}}
	small := workload.NewInfo(utiltestingapi.MakeWorkload("s", "ns").Request(corev1.ResourceCPU, "1").Obj())
	huge := workload.NewInfo(utiltestingapi.MakeWorkload("h", "ns").Request(corev1.ResourceCPU, "20").Obj())
	classes := newDemandClasses()
	for _, info := range []*workload.Info{small, huge, small} {
		gotClass, gotOptions := classes.of(info).classify(cq)
		demand := workloadDemand(info)
		if diff := cmp.Diff(capacity.Classify(cq, demand), gotClass); diff != "" {
			t.Errorf("classification (-direct +class):\n%s", diff)
		}
		if diff := cmp.Diff(demandOptions(cq, demand), gotOptions); diff != "" {
			t.Errorf("options (-direct +class):\n%s", diff)
		}
	}
	if got := len(classes.all); got != 2 {
		t.Errorf("%d classes, want 2", got)
	}
}
