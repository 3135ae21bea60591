package convert

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

func TestAdmittedDemandIsPerPodAndKeyedByShape(t *testing.T) {
	admission := func(count int32, cpu, memory string) *kueue.Admission {
		return &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{{
			Name:  "main",
			Count: ptr.To(count),
			ResourceUsage: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse(cpu),
				corev1.ResourceMemory: resource.MustParse(memory),
			},
		}}}
	}
	key, demand, ok := AdmittedDemand(admission(4, "2", "4Gi"))
	if !ok {
		t.Fatal("no demand read from an admission with usage")
	}
	want := capacity.Workload{PodSets: []capacity.PodSet{{Name: "main", Count: 4, Requests: map[string]int64{"cpu": 500, "memory": 1 << 30}}}}
	if diff := cmp.Diff(want, demand); diff != "" {
		t.Errorf("demand (-want,+got):\n%s", diff)
	}
	if again, _, _ := AdmittedDemand(admission(4, "2000m", "4096Mi")); again != key {
		t.Errorf("equal usage written otherwise: key %q, want %q", again, key)
	}
	if other, _, _ := AdmittedDemand(admission(2, "1", "2Gi")); other == key {
		t.Errorf("two pods of the same size share the key %q of four", key)
	}
	if _, _, ok := AdmittedDemand(nil); ok {
		t.Error("a demand read from no admission")
	}
	if _, _, ok := AdmittedDemand(&kueue.Admission{ClusterQueue: "cq"}); ok {
		t.Error("a demand read from an admission without pod set assignments")
	}
}
