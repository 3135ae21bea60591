package capacity

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClassify(t *testing.T) {
	cpuMem := res("cpu", "memory")
	cpuOnly := res("cpu")
	paperCQ := cq(group(cpuMem, flavor("default", nominal(cores(2)), nominal(4*gi))))
	twoFlavors := cq(group(cpuOnly, flavor("small", nominal(cores(2))), flavor("large", nominal(cores(8)))))
	twoGroups := cq(
		group(cpuMem, flavor("std", nominal(cores(16)), nominal(64*gi))),
		group(res("nvidia.com/gpu"), flavor("t4", nominal(2)), flavor("a100", nominal(8))),
	)
	withPods := cq(group(res("cpu", "pods"), flavor("default", nominal(cores(100)), nominal(4))))
	borrowing := func(b int64) *ClusterQueue {
		return cq(group(cpuOnly, flavor("default", Quota{Nominal: cores(2), Borrowable: b})))
	}
	sameSize := cq(group(cpuOnly, flavor("a", nominal(cores(4))), flavor("b", nominal(cores(4)))))
	uneven := cq(group(cpuOnly, flavor("a", nominal(cores(5))), flavor("b", nominal(cores(3)))))
	fives := cq(group(cpuOnly, flavor("a", nominal(cores(5))), flavor("b", nominal(cores(5)))))

	cases := map[string]struct {
		cq          *ClusterQueue
		w           Workload
		want        Admissibility
		reason      string
		assignments []Assignment
	}{
		"paper: 20 cpu against 2 cpu nominal is Unfeasible": {
			cq:     paperCQ,
			w:      one(map[string]int64{"cpu": cores(20)}),
			want:   Unfeasible,
			reason: "flavor default: cpu 20 > potential 2 (nominal 2, borrowable 0)",
		},
		"paper: 500m/64Mi is Quotable": {
			cq:          paperCQ,
			w:           one(map[string]int64{"cpu": 500, "memory": 64 * mi}),
			want:        Quotable,
			assignments: []Assignment{{PodSet: 0, Group: 0, Flavor: "default"}},
		},
		"memory reported when cpu fits": {
			cq:     paperCQ,
			w:      one(map[string]int64{"cpu": 500, "memory": 5 * gi}),
			want:   Unfeasible,
			reason: "flavor default: memory 5Gi > potential 4Gi (nominal 4Gi, borrowable 0)",
		},
		"borrowing makes a workload Quotable": {
			cq:          borrowing(cores(4)),
			w:           one(map[string]int64{"cpu": cores(5)}),
			want:        Quotable,
			assignments: []Assignment{{Flavor: "default"}},
		},
		"too little borrowing": {
			cq:     borrowing(cores(2)),
			w:      one(map[string]int64{"cpu": cores(5)}),
			want:   Unfeasible,
			reason: "flavor default: cpu 5 > potential 4 (nominal 2, borrowable 2)",
		},
		"only the second flavor fits": {
			cq:          twoFlavors,
			w:           one(map[string]int64{"cpu": cores(4)}),
			want:        Quotable,
			assignments: []Assignment{{Flavor: "large"}},
		},
		"first flavor wins when both fit": {
			cq:          twoFlavors,
			w:           one(map[string]int64{"cpu": 1500}),
			want:        Quotable,
			assignments: []Assignment{{Flavor: "small"}},
		},
		"no flavor fits: every flavor's failure listed": {
			cq:     twoFlavors,
			w:      one(map[string]int64{"cpu": 10500}),
			want:   Unfeasible,
			reason: "flavor small: cpu 10500m > potential 2 (nominal 2, borrowable 0); flavor large: cpu 10500m > potential 8 (nominal 8, borrowable 0)",
		},
		"two resource groups each get a flavor": {
			cq:   twoGroups,
			w:    one(map[string]int64{"cpu": cores(4), "memory": 8 * gi, "nvidia.com/gpu": 4}),
			want: Quotable,
			assignments: []Assignment{
				{PodSet: 0, Group: 0, Flavor: "std"},
				{PodSet: 0, Group: 1, Flavor: "a100"},
			},
		},
		"two resource groups: only the gpu group fails": {
			cq:     twoGroups,
			w:      one(map[string]int64{"cpu": cores(4), "nvidia.com/gpu": 16}),
			want:   Unfeasible,
			reason: "flavor t4: nvidia.com/gpu 16 > potential 2 (nominal 2, borrowable 0); flavor a100: nvidia.com/gpu 16 > potential 8 (nominal 8, borrowable 0)",
		},
		"untouched group gets no assignment": {
			cq:          twoGroups,
			w:           one(map[string]int64{"nvidia.com/gpu": 1}),
			want:        Quotable,
			assignments: []Assignment{{PodSet: 0, Group: 1, Flavor: "t4"}},
		},
		"pods resource counts pods": {
			cq:     withPods,
			w:      workload(podSet("workers", 5, map[string]int64{"cpu": 100})),
			want:   Unfeasible,
			reason: "flavor default: pods 5 > potential 4 (nominal 4, borrowable 0)",
		},
		"pods resource: explicit pods request ignored": {
			cq:          withPods,
			w:           workload(podSet("workers", 4, map[string]int64{"cpu": 100, "pods": 1000})),
			want:        Quotable,
			assignments: []Assignment{{Flavor: "default"}},
		},
		"pods resource: pods alone touch the group": {
			cq:          withPods,
			w:           workload(podSet("sleepers", 2, nil)),
			want:        Quotable,
			assignments: []Assignment{{Flavor: "default"}},
		},
		"pods not covered: explicit pods request ignored": {
			cq:          paperCQ,
			w:           workload(podSet("p", 1, map[string]int64{"cpu": 100, "pods": 7})),
			want:        Quotable,
			assignments: []Assignment{{Flavor: "default"}},
		},
		"uncovered resource": {
			cq:     paperCQ,
			w:      one(map[string]int64{"cpu": 100, "example.com/foo": 1}),
			want:   Unfeasible,
			reason: "resource example.com/foo is not covered by any resource group of ClusterQueue",
		},
		"uncovered resources sorted, then group failures": {
			cq:     paperCQ,
			w:      one(map[string]int64{"cpu": cores(3), "example.com/foo": 1, "example.com/bar": 2}),
			want:   Unfeasible,
			reason: "resource example.com/bar is not covered by any resource group of ClusterQueue; resource example.com/foo is not covered by any resource group of ClusterQueue; flavor default: cpu 3 > potential 2 (nominal 2, borrowable 0)",
		},
		"zero request of an uncovered resource is ignored": {
			cq:          paperCQ,
			w:           one(map[string]int64{"cpu": 100, "example.com/foo": 0}),
			want:        Quotable,
			assignments: []Assignment{{Flavor: "default"}},
		},
		"unlimited borrowing always fits": {
			cq:          borrowing(Unlimited),
			w:           one(map[string]int64{"cpu": cores(1_000_000)}),
			want:        Quotable,
			assignments: []Assignment{{Flavor: "default"}},
		},
		"unlimited nominal always fits, even an overflowing demand": {
			cq:          cq(group(cpuOnly, flavor("default", nominal(Unlimited)))),
			w:           workload(podSet("huge", 1<<40, map[string]int64{"cpu": 1 << 40})),
			want:        Quotable,
			assignments: []Assignment{{Flavor: "default"}},
		},
		"overflowing demand against a finite quota": {
			cq:     paperCQ,
			w:      workload(podSet("huge", 1<<40, map[string]int64{"cpu": 1 << 40})),
			want:   Unfeasible,
			reason: "flavor default: cpu overflowing int64 > potential 2 (nominal 2, borrowable 0)",
		},
		"no pod sets: nothing demanded": {
			cq:   paperCQ,
			w:    Workload{},
			want: Quotable,
		},
		"zero count: nothing demanded": {
			cq:   withPods,
			w:    workload(podSet("none", 0, map[string]int64{"cpu": cores(1000), "example.com/foo": 3})),
			want: Quotable,
		},
		"zero requests: nothing demanded": {
			cq:   paperCQ,
			w:    one(map[string]int64{"cpu": 0, "memory": 0}),
			want: Quotable,
		},
		"pod sets on one flavor accumulate, so the second moves on": {
			cq:   sameSize,
			w:    workload(podSet("driver", 1, map[string]int64{"cpu": cores(3)}), podSet("workers", 1, map[string]int64{"cpu": cores(3)})),
			want: Quotable,
			assignments: []Assignment{
				{PodSet: 0, Group: 0, Flavor: "a"},
				{PodSet: 1, Group: 0, Flavor: "b"},
			},
		},
		"pod sets sharing a flavor when they fit": {
			cq:   sameSize,
			w:    workload(podSet("driver", 1, map[string]int64{"cpu": cores(1)}), podSet("workers", 3, map[string]int64{"cpu": cores(1)})),
			want: Quotable,
			assignments: []Assignment{
				{PodSet: 0, Group: 0, Flavor: "a"},
				{PodSet: 1, Group: 0, Flavor: "a"},
			},
		},
		"backtracking finds what a greedy pass misses": {
			cq:   uneven,
			w:    workload(podSet("p1", 1, map[string]int64{"cpu": cores(2)}), podSet("p2", 1, map[string]int64{"cpu": cores(4)})),
			want: Quotable,
			assignments: []Assignment{
				{PodSet: 0, Group: 0, Flavor: "b"},
				{PodSet: 1, Group: 0, Flavor: "a"},
			},
		},
		"pod sets exceed the summed capacity": {
			cq: sameSize,
			w: workload(
				podSet("p1", 1, map[string]int64{"cpu": cores(3)}),
				podSet("p2", 1, map[string]int64{"cpu": cores(3)}),
				podSet("p3", 1, map[string]int64{"cpu": cores(3)})),
			want:   Unfeasible,
			reason: "pod sets p1, p2, p3 together: flavor a: cpu 9 > potential 4 (nominal 4, borrowable 0); flavor b: cpu 9 > potential 4 (nominal 4, borrowable 0)",
		},
		"pod sets fit the summed capacity but no assignment": {
			cq: fives,
			w: workload(
				podSet("p1", 1, map[string]int64{"cpu": cores(3)}),
				podSet("p2", 1, map[string]int64{"cpu": cores(3)}),
				podSet("p3", 1, map[string]int64{"cpu": cores(3)})),
			want:   Unfeasible,
			reason: "pod sets p1, p2, p3 together: flavor a: cpu 9 > potential 5 (nominal 5, borrowable 0); flavor b: cpu 9 > potential 5 (nominal 5, borrowable 0)",
		},
		"one pod set fits no flavor on its own": {
			cq:     paperCQ,
			w:      workload(podSet("driver", 1, map[string]int64{"cpu": 500}), podSet("workers", 4, map[string]int64{"cpu": cores(10)})),
			want:   Unfeasible,
			reason: "pod set workers: flavor default: cpu 40 > potential 2 (nominal 2, borrowable 0)",
		},
		"unnamed pod sets are numbered": {
			cq:     twoFlavors,
			w:      workload(podSet("", 1, map[string]int64{"cpu": 500}), podSet("", 1, map[string]int64{"cpu": cores(9)})),
			want:   Unfeasible,
			reason: "pod set #1: flavor small: cpu 9 > potential 2 (nominal 2, borrowable 0); flavor large: cpu 9 > potential 8 (nominal 8, borrowable 0)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Classify(tc.cq, tc.w)
			if got.Admissibility != tc.want {
				t.Fatalf("Admissibility = %v, want %v (reason %q)", got.Admissibility, tc.want, got.Reason)
			}
			if got.Reason != tc.reason {
				t.Errorf("Reason = %q\nwant     %q", got.Reason, tc.reason)
			}
			if !slices.Equal(got.Assignments, tc.assignments) {
				t.Errorf("Assignments = %+v, want %+v", got.Assignments, tc.assignments)
			}
			if got.Unproven || got.Err != nil {
				t.Errorf("Unproven = %v, Err = %v", got.Unproven, got.Err)
			}
			if (tc.want == Unfeasible) != (len(got.Failures) > 0) {
				t.Errorf("Failures = %+v for %v", got.Failures, tc.want)
			}
			if tc.want == Quotable {
				if ok, why := fitsAssignments(tc.cq, tc.w, got); !ok {
					t.Errorf("assignments do not fit: %s", why)
				}
			}
			if bf := bruteForceQuotable(tc.cq, tc.w); bf != (tc.want == Quotable) {
				t.Errorf("brute force says Quotable=%v", bf)
			}
		})
	}
}

func TestClassifyFailuresAsData(t *testing.T) {
	q := cq(
		group(res("cpu", "memory"),
			flavor("small", nominal(cores(2)), nominal(8*gi)),
			flavor("big", Quota{Nominal: cores(8), Borrowable: cores(4)}, nominal(2*gi))),
	)
	got := Classify(q, workload(podSet("main", 2, map[string]int64{"cpu": cores(2), "memory": 2 * gi})))
	want := []Failure{
		{Kind: ExceedsPotential, PodSets: []string{"main"}, Group: 0, Flavor: "small", Resource: "cpu", Demand: cores(4), Quota: nominal(cores(2))},
		{Kind: ExceedsPotential, PodSets: []string{"main"}, Group: 0, Flavor: "big", Resource: "memory", Demand: 4 * gi, Quota: nominal(2 * gi)},
	}
	if got.Admissibility != Unfeasible || len(got.Failures) != len(want) {
		t.Fatalf("got %v with failures %+v", got.Admissibility, got.Failures)
	}
	for i := range want {
		g, w := got.Failures[i], want[i]
		if g.Kind != w.Kind || !slices.Equal(g.PodSets, w.PodSets) || g.Group != w.Group || g.Flavor != w.Flavor ||
			g.Resource != w.Resource || g.Demand != w.Demand || g.Quota != w.Quota {
			t.Errorf("failure %d = %+v, want %+v", i, g, w)
		}
	}
	const reason = "flavor small: cpu 4 > potential 2 (nominal 2, borrowable 0); flavor big: memory 4Gi > potential 2Gi (nominal 2Gi, borrowable 0)"
	if got.Reason != reason {
		t.Errorf("Reason = %q, want %q", got.Reason, reason)
	}

	got = Classify(cq(group(res("cpu"), flavor("default", nominal(1)))), one(map[string]int64{"example.com/foo": 3}))
	if len(got.Failures) != 1 || got.Failures[0].Kind != UncoveredResource || got.Failures[0].Group != -1 ||
		got.Failures[0].Resource != "example.com/foo" {
		t.Errorf("uncovered failure = %+v", got.Failures)
	}
}

func TestClassifyInvalid(t *testing.T) {
	good := cq(group(res("cpu"), flavor("default", nominal(cores(2)))))
	cases := map[string]struct {
		cq      *ClusterQueue
		w       Workload
		wantErr error
	}{
		"nil ClusterQueue":      {cq: nil, w: one(map[string]int64{"cpu": 1}), wantErr: ErrInvalidCapacity},
		"negative nominal":      {cq: cq(group(res("cpu"), flavor("default", nominal(-1)))), w: one(map[string]int64{"cpu": 1}), wantErr: ErrInvalidCapacity},
		"negative count":        {cq: good, w: workload(podSet("p", -1, map[string]int64{"cpu": 1})), wantErr: ErrInvalidWorkload},
		"negative request":      {cq: good, w: one(map[string]int64{"cpu": -5}), wantErr: ErrInvalidWorkload},
		"group without flavors": {cq: cq(group(res("cpu"))), w: Workload{}, wantErr: ErrInvalidCapacity},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Classify(tc.cq, tc.w)
			if got.Admissibility != Invalid {
				t.Fatalf("Admissibility = %v, want Invalid", got.Admissibility)
			}
			if !errors.Is(got.Err, tc.wantErr) || got.Reason != got.Err.Error() {
				t.Errorf("Err = %v, Reason = %q", got.Err, got.Reason)
			}
		})
	}
}

func TestClassifySearchBudget(t *testing.T) {
	old := searchBudget
	t.Cleanup(func() { searchBudget = old })
	searchBudget = 3
	q := cq(group(res("cpu"), flavor("a", nominal(5)), flavor("b", nominal(5)), flavor("c", nominal(5))))
	// Seven pod sets of distinct sizes that pass the capacity-sum check
	// (total 14 ≤ 15) but need a real search.
	var ps []PodSet
	for i, v := range []int64{1, 2, 3, 1, 2, 3, 2} {
		ps = append(ps, podSet(string(rune('p'+i)), 1, map[string]int64{"cpu": v}))
	}
	got := Classify(q, workload(ps...))
	if got.Admissibility != Quotable || !got.Unproven || got.Reason == "" {
		t.Fatalf("with a tiny budget: %v unproven=%v reason=%q", got.Admissibility, got.Unproven, got.Reason)
	}
	searchBudget = old
	got = Classify(q, workload(ps...))
	if got.Unproven || got.Admissibility != Quotable {
		t.Fatalf("with the default budget: %v unproven=%v", got.Admissibility, got.Unproven)
	}
	if ok, why := fitsAssignments(q, workload(ps...), got); !ok {
		t.Errorf("assignments do not fit: %s", why)
	}
}

func TestAdmissibilityString(t *testing.T) {
	for a, want := range map[Admissibility]string{Invalid: "Invalid", Quotable: "Quotable", Unfeasible: "Unfeasible", 9: "Invalid"} {
		if got := a.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(a), got, want)
		}
	}
}

func TestVerdict(t *testing.T) {
	q := cq(
		group(res("cpu", "memory"), flavor("small", nominal(cores(4)), nominal(8*gi)), flavor("large", nominal(cores(16)), nominal(64*gi))),
		group(res("nvidia.com/gpu"), flavor("a100", nominal(4))))
	cases := map[string]struct {
		w    Workload
		want Admissibility
	}{
		"quotable on the first flavor": {
			w:    one(map[string]int64{"cpu": cores(2), "memory": 4 * gi}),
			want: Quotable,
		},
		"quotable with two pod sets over both groups": {
			w: workload(
				podSet("driver", 1, map[string]int64{"cpu": cores(2), "memory": 4 * gi}),
				podSet("workers", 2, map[string]int64{"cpu": cores(4), "memory": 16 * gi, "nvidia.com/gpu": 2})),
			want: Quotable,
		},
		"unfeasible on the gpus": {
			w:    one(map[string]int64{"cpu": cores(1), "nvidia.com/gpu": 5}),
			want: Unfeasible,
		},
		"invalid with a negative count": {
			w:    workload(podSet("main", -1, map[string]int64{"cpu": cores(1)})),
			want: Invalid,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Verdict(q, tc.w)
			if got.Admissibility != tc.want {
				t.Fatalf("Verdict = %v, want %v (reason %q)", got.Admissibility, tc.want, got.Reason)
			}
			if got.Assignments != nil {
				t.Errorf("Verdict returned assignments %v", got.Assignments)
			}
			full := Classify(q, tc.w)
			full.Assignments = nil
			if diff := cmp.Diff(full, got, sameErrorMessage); diff != "" {
				t.Errorf("Verdict differs from Classify without its assignments (-Classify +Verdict):\n%s", diff)
			}
			if tc.want == Quotable {
				if allocs := testing.AllocsPerRun(100, func() { _ = Verdict(q, tc.w) }); allocs != 0 {
					t.Errorf("Verdict of a Quotable workload allocated %v times per call, want 0", allocs)
				}
			}
		})
	}
}
