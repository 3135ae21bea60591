package engine

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// TestClassTableMix checks the a-priori model's mix: every class some
// workload counts in, weighted by its count, in the order of the printed
// pod sets; a class nothing counts in is left out.
func TestClassTableMix(t *testing.T) {
	shape := func(name string, count int64, cpu int64) capacity.Workload {
		return capacity.Workload{PodSets: []capacity.PodSet{{Name: name, Count: count, Requests: map[string]int64{"cpu": cpu}}}}
	}
	shapes := []capacity.Workload{shape("main", 2, 1000), shape("driver", 1, 500), shape("main", 1, 4000), shape("idle", 1, 1)}
	table := newClassTable(&capacity.ClusterQueue{Name: "cq"}, shapes)
	for _, i := range []int{0, 2, 1, 0, 0, 2} {
		table.count(i)
	}
	want := []capacity.Class{{Rate: 1, Workload: shapes[1]}, {Rate: 2, Workload: shapes[2]}, {Rate: 3, Workload: shapes[0]}}
	if fmt.Sprint(shapes[2].PodSets) > fmt.Sprint(shapes[0].PodSets) {
		want[1], want[2] = want[2], want[1]
	}
	if diff := cmp.Diff(want, table.mix()); diff != "" {
		t.Errorf("mix (-want,+got):\n%s", diff)
	}
}

func TestClassTableClassifiesAsCapacityDoes(t *testing.T) {
	cq := &capacity.ClusterQueue{Name: "cq", ResourceGroups: []capacity.ResourceGroup{{
		Resources: []string{"cpu"},
		Flavors: []capacity.FlavorQuotas{
			{Name: "a", Quotas: []capacity.Quota{{Nominal: 2000}}},
			{Name: "b", Quotas: []capacity.Quota{{Nominal: 8000}}},
		},
	}}}
	cpu := func(m int64) capacity.Workload {
		return capacity.Workload{PodSets: []capacity.PodSet{{Name: "main", Count: 1, Requests: map[string]int64{"cpu": m}}}}
	}
	shapes := []capacity.Workload{cpu(1000), cpu(20000)}
	table := newClassTable(cq, shapes)
	for _, i := range []int{0, 1, 0} {
		got := table.classify(i)
		if diff := cmp.Diff(capacity.Classify(cq, shapes[i]), got.classification); diff != "" {
			t.Errorf("class %d: classification (-direct +table):\n%s", i, diff)
		}
		if diff := cmp.Diff(demandOptions(cq, shapes[i]), got.options); diff != "" {
			t.Errorf("class %d: options (-direct +table):\n%s", i, diff)
		}
	}
	if got := table.classify(1).classification.Admissibility; got != capacity.Unfeasible {
		t.Errorf("20 CPUs on a quota of 8: %v, want Unfeasible", got)
	}
}
