package estimator

import (
	"testing"
	"time"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
)

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
		v, w   cohortView
		vAt    time.Time
		wAt    time.Time
		wantEq bool
	}{
		"the same capacity, nothing lent": {
			v: cohortView{capacity: model(1000)}, w: cohortView{capacity: model(1000)}, vAt: t1, wAt: t0, wantEq: true,
		},
		"what it can borrow now moved": {
			v: cohortView{capacity: model(0)}, w: cohortView{capacity: model(1000)}, vAt: t1, wAt: t0,
		},
		"a view never taken": {
			v: cohortView{capacity: model(1000)}, w: cohortView{}, vAt: t1, wAt: t0,
		},
		"the same holder, older by the time between the views": {
			v:   cohortView{capacity: model(0), lent: lent, holders: []forecast.Running{holder(65)}},
			w:   cohortView{capacity: model(0), lent: lent, holders: []forecast.Running{holder(60)}},
			vAt: t1, wAt: t0, wantEq: true,
		},
		"another holder admitted a second later": {
			v:   cohortView{capacity: model(0), lent: lent, holders: []forecast.Running{holder(64)}},
			w:   cohortView{capacity: model(0), lent: lent, holders: []forecast.Running{holder(60)}},
			vAt: t1, wAt: t0,
		},
		"more quota lent": {
			v:   cohortView{capacity: model(0), lent: capacity.Quantities{cpu: 2000}, holders: []forecast.Running{holder(65)}},
			w:   cohortView{capacity: model(0), lent: lent, holders: []forecast.Running{holder(60)}},
			vAt: t1, wAt: t0,
		},
		"a holder more": {
			v:   cohortView{capacity: model(0), lent: lent, holders: []forecast.Running{holder(65), holder(1)}},
			w:   cohortView{capacity: model(0), lent: lent, holders: []forecast.Running{holder(60)}},
			vAt: t1, wAt: t0,
		},
		"the holder is being evicted now": {
			v: cohortView{capacity: model(0), lent: lent, holders: []forecast.Running{holder(65)},
				sources: []holderSource{{clusterQueue: "a", evicted: true}}},
			w: cohortView{capacity: model(0), lent: lent, holders: []forecast.Running{holder(60)},
				sources: []holderSource{{clusterQueue: "a"}}},
			vAt: t1, wAt: t0,
		},
		"the lender reclaims now": {
			v:   cohortView{capacity: model(0), lent: lent, holders: []forecast.Running{holder(65)}, reclaim: kueue.PreemptionPolicyAny},
			w:   cohortView{capacity: model(0), lent: lent, holders: []forecast.Running{holder(60)}},
			vAt: t1, wAt: t0,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.v.sameAs(tc.w, tc.vAt, tc.wAt); got != tc.wantEq {
				t.Errorf("sameAs = %v, want %v", got, tc.wantEq)
			}
		})
	}
}
