package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// TestClassTableMix checks the a-priori model's mix: every class some
// workload counts in, weighted by its count, in the order of their shapes
// (pod set name, then count); a class nothing counts in is left out.
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
	if diff := cmp.Diff(want, table.mix()); diff != "" {
		t.Errorf("mix (-want,+got):\n%s", diff)
	}
}

// TestCompareShapes checks the order of demand shapes the mix is summed in:
// pod set by pod set, name, count, then requests by resource name and
// amount, a prefix first; 0 only for equal shapes; and the mix of the same
// classes found in every order is the same.
func TestCompareShapes(t *testing.T) {
	ps := func(name string, count int64, requests map[string]int64) capacity.PodSet {
		return capacity.PodSet{Name: name, Count: count, Requests: requests}
	}
	w := func(podSets ...capacity.PodSet) capacity.Workload { return capacity.Workload{PodSets: podSets} }
	cases := map[string]struct {
		a, b capacity.Workload
		want int
	}{
		"equal":                   {a: w(ps("main", 2, map[string]int64{"cpu": 1, "memory": 2})), b: w(ps("main", 2, map[string]int64{"memory": 2, "cpu": 1})), want: 0},
		"pod set name first":      {a: w(ps("driver", 9, map[string]int64{"cpu": 9})), b: w(ps("main", 1, map[string]int64{"cpu": 1})), want: -1},
		"then count":              {a: w(ps("main", 3, map[string]int64{"cpu": 1})), b: w(ps("main", 2, map[string]int64{"cpu": 9})), want: 1},
		"then the resource names": {a: w(ps("main", 1, map[string]int64{"cpu": 5})), b: w(ps("main", 1, map[string]int64{"gpu": 1})), want: -1},
		"then the amount":         {a: w(ps("main", 1, map[string]int64{"cpu": 5, "memory": 1})), b: w(ps("main", 1, map[string]int64{"cpu": 5, "memory": 2})), want: -1},
		"fewer requests first":    {a: w(ps("main", 1, map[string]int64{"cpu": 5})), b: w(ps("main", 1, map[string]int64{"cpu": 5, "memory": 1})), want: -1},
		"a zero request is one":   {a: w(ps("main", 1, map[string]int64{"cpu": 5, "gpu": 0})), b: w(ps("main", 1, map[string]int64{"cpu": 5})), want: 1},
		"fewer pod sets first":    {a: w(ps("main", 1, nil), ps("workers", 2, nil)), b: w(ps("main", 1, nil)), want: 1},
		"the second pod set":      {a: w(ps("main", 1, nil), ps("workers", 2, nil)), b: w(ps("main", 1, nil), ps("workers", 4, nil)), want: -1},
		"no pod sets":             {a: w(), b: w(), want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := compareShapes(tc.a, tc.b); got != tc.want {
				t.Errorf("compareShapes(a, b) = %d, want %d", got, tc.want)
			}
			if got := compareShapes(tc.b, tc.a); got != -tc.want {
				t.Errorf("compareShapes(b, a) = %d, want %d", got, -tc.want)
			}
		})
	}

	shapes := []capacity.Workload{
		w(ps("main", 2, map[string]int64{"cpu": 1000})),
		w(ps("main", 2, map[string]int64{"cpu": 1000, "memory": 1 << 30})),
		w(ps("driver", 1, map[string]int64{"cpu": 500}), ps("workers", 4, map[string]int64{"cpu": 2000})),
		w(ps("main", 1, map[string]int64{"cpu": 4000})),
	}
	var first []capacity.Class
	for _, order := range [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {2, 0, 3, 1}, {1, 3, 0, 2}} {
		found := make([]capacity.Workload, len(order))
		for i, k := range order {
			found[i] = shapes[k]
		}
		table := newClassTable(&capacity.ClusterQueue{Name: "cq"}, found)
		for i, k := range order {
			for range k + 1 {
				table.count(i)
			}
		}
		got := table.mix()
		if first == nil {
			first = got
			continue
		}
		if diff := cmp.Diff(first, got); diff != "" {
			t.Errorf("the mix of the classes found in the order %v differs from the first (-first,+got):\n%s", order, diff)
		}
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
