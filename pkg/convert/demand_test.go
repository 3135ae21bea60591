package convert

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"
)

// TestDemandClassesGroupByPrintedShape checks that two workloads share a
// demand class exactly when WorkloadDemand prints their pod sets alike (how
// the a-priori model's mix was built before demand classes), and that a
// class's shape is each member's WorkloadDemand.
func TestDemandClassesGroupByPrintedShape(t *testing.T) {
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
	classes := NewClasses()
	classOf := make([]int, len(infos))
	for i, info := range infos {
		classOf[i] = classes.Of(DemandOf(info))
		if diff := cmp.Diff(WorkloadDemand(info), classes.Shapes[classOf[i]]); diff != "" {
			t.Errorf("workload %d: class shape (-WorkloadDemand +class):\n%s", i, diff)
		}
	}
	printed := make(map[string]bool)
	for i := range infos {
		key := fmt.Sprint(WorkloadDemand(infos[i]).PodSets)
		printed[key] = true
		for j := range infos {
			if same := key == fmt.Sprint(WorkloadDemand(infos[j]).PodSets); same != (classOf[i] == classOf[j]) {
				t.Errorf("workloads %d and %d: printed alike %v, same class %v", i, j, same, classOf[i] == classOf[j])
			}
		}
	}
	if len(classes.Shapes) != len(printed) {
		t.Errorf("%d classes for %d printed shapes", len(classes.Shapes), len(printed))
	}
}
