package cohortview

import (
	"testing"
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
)

// t0 is when the views of the tests are taken, or the earlier one.
var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func TestCohortViewSameAs(t *testing.T) {
	cpu := capacity.FlavorResource{Flavor: "default", Resource: "cpu"}
	model := func(expectedBorrowable int64) *capacity.ClusterQueue {
		return &capacity.ClusterQueue{Name: "b", ResourceGroups: []capacity.ResourceGroup{{
			Resources: []string{"cpu"},
			Flavors: []capacity.FlavorQuotas{{Name: "default", Quotas: []capacity.Quota{
				{Nominal: 2000, Borrowable: 3000, ExpectedBorrowable: expectedBorrowable}}}},
		}}}
	}
	holder := func(ageSeconds float64) forecast.Running {
		return forecast.Running{Usage: capacity.Quantities{cpu: 1000}, AgeSeconds: ageSeconds, Priority: 1}
	}
	lent := capacity.Quantities{cpu: 1000}
	t1 := t0.Add(5 * time.Second)
	cases := map[string]struct {
		v, w   View[string]
		vAt    time.Time
		wAt    time.Time
		wantEq bool
	}{
		"the same capacity, nothing lent": {
			v: View[string]{Capacity: model(1000)}, w: View[string]{Capacity: model(1000)}, vAt: t1, wAt: t0, wantEq: true,
		},
		"what it can borrow now moved": {
			v: View[string]{Capacity: model(0)}, w: View[string]{Capacity: model(1000)}, vAt: t1, wAt: t0,
		},
		"a view never taken": {
			v: View[string]{Capacity: model(1000)}, w: View[string]{}, vAt: t1, wAt: t0,
		},
		"the same holder, older by the time between the views": {
			v:   View[string]{Capacity: model(0), Lent: lent, Holders: []forecast.Running{holder(65)}},
			w:   View[string]{Capacity: model(0), Lent: lent, Holders: []forecast.Running{holder(60)}},
			vAt: t1, wAt: t0, wantEq: true,
		},
		"another holder admitted a second later": {
			v:   View[string]{Capacity: model(0), Lent: lent, Holders: []forecast.Running{holder(64)}},
			w:   View[string]{Capacity: model(0), Lent: lent, Holders: []forecast.Running{holder(60)}},
			vAt: t1, wAt: t0,
		},
		"more quota lent": {
			v:   View[string]{Capacity: model(0), Lent: capacity.Quantities{cpu: 2000}, Holders: []forecast.Running{holder(65)}},
			w:   View[string]{Capacity: model(0), Lent: lent, Holders: []forecast.Running{holder(60)}},
			vAt: t1, wAt: t0,
		},
		"a holder more": {
			v:   View[string]{Capacity: model(0), Lent: lent, Holders: []forecast.Running{holder(65), holder(1)}},
			w:   View[string]{Capacity: model(0), Lent: lent, Holders: []forecast.Running{holder(60)}},
			vAt: t1, wAt: t0,
		},
		"the holder is being evicted now": {
			v: View[string]{Capacity: model(0), Lent: lent, Holders: []forecast.Running{holder(65)},
				Sources: []Source[string]{{ClusterQueue: "a", Evicted: true}}},
			w: View[string]{Capacity: model(0), Lent: lent, Holders: []forecast.Running{holder(60)},
				Sources: []Source[string]{{ClusterQueue: "a"}}},
			vAt: t1, wAt: t0,
		},
		"the lender reclaims now": {
			v:   View[string]{Capacity: model(0), Lent: lent, Holders: []forecast.Running{holder(65)}, Reclaim: ReclaimAny},
			w:   View[string]{Capacity: model(0), Lent: lent, Holders: []forecast.Running{holder(60)}},
			vAt: t1, wAt: t0,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.v.SameAs(tc.w, tc.vAt, tc.wAt); got != tc.wantEq {
				t.Errorf("SameAs = %v, want %v", got, tc.wantEq)
			}
		})
	}
}
