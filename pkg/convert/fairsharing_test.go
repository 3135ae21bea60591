package convert

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"sigs.k8s.io/kueue/pkg/util/admissionfairsharing"
)

// TestWeightedUsageIsKueuesUsageTimesTheWeight checks WeightedUsage
// against Kueue's own admissionfairsharing.CalculateUsage: with a
// LocalQueue of weight 1 the two are equal, for consumed resources and
// penalties on the same and on different resources, with and without
// resource weights.
func TestWeightedUsageIsKueuesUsageTimesTheWeight(t *testing.T) {
	list := func(kv ...string) corev1.ResourceList {
		out := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return out
	}
	cases := map[string]struct {
		consumed, penalty corev1.ResourceList
		weights           map[string]float64
		want              float64
	}{
		"none":                           {want: 0},
		"cpu in cores":                   {consumed: list("cpu", "1500m"), want: 1.5},
		"a penalty on the same resource": {consumed: list("cpu", "2"), penalty: list("cpu", "500m"), want: 2.5},
		"memory in bytes, weighted":      {consumed: list("cpu", "1", "memory", "1Ki"), weights: map[string]float64{"memory": 0.5}, want: 1 + 512},
		"a resource weighted zero":       {consumed: list("cpu", "4", "nvidia.com/gpu", "2"), penalty: list("nvidia.com/gpu", "1"), weights: map[string]float64{"cpu": 0, "nvidia.com/gpu": 3}, want: 9},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := WeightedUsage(tc.consumed, tc.penalty, tc.weights)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("WeightedUsage (-want,+got):\n%s", diff)
			}
			kueueWeights := map[corev1.ResourceName]float64{}
			for r, w := range tc.weights {
				kueueWeights[corev1.ResourceName(r)] = w
			}
			kueue := admissionfairsharing.CalculateUsage(tc.consumed, tc.penalty, 1, kueueWeights)
			if diff := cmp.Diff(kueue, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("WeightedUsage against Kueue's CalculateUsage at weight 1 (-kueue,+got):\n%s", diff)
			}
		})
	}
}
