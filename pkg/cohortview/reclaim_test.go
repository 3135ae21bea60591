package cohortview

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
)

func TestReclaimedHolders(t *testing.T) {
	cpu := capacity.FlavorResource{Flavor: "default", Resource: "cpu"}
	holder := func(age, maxExec float64, priority int32) forecast.Running {
		return forecast.Running{Usage: capacity.Quantities{cpu: 500}, AgeSeconds: age, MaxExecutionSeconds: maxExec, Priority: priority}
	}
	running := func(cq string) Source[string] { return Source[string]{ClusterQueue: cq} }
	// decision 0.1 s, write 0.05 s; a's victims release in 0.3 s, b's
	// are not measured (they take the decision's 0.1 s).
	delays := Delays[string]{Decision: 0.1, WriteLag: 0.05, Release: map[string]float64{"a": 0.3}}
	cases := map[string]struct {
		view  View[string]
		top   int32
		d     Delays[string]
		want  []forecast.Running
		moved bool // the result is a copy
	}{
		"a lender that does not reclaim waits for the ends": {
			view: View[string]{Holders: []forecast.Running{holder(10, 0, 0)}, Sources: []Source[string]{running("a")}},
			d:    delays,
			want: []forecast.Running{holder(10, 0, 0)},
		},
		"Any bounds every holder by its ClusterQueue's reclaim": {
			view: View[string]{Reclaim: ReclaimAny,
				Holders: []forecast.Running{holder(10, 0, 5), holder(2, 0, 0)}, Sources: []Source[string]{running("a"), running("b")}},
			d:     delays,
			want:  []forecast.Running{holder(10, 10+0.1+0.05+0.3, 5), holder(2, 2+0.1+0.05+0.1, 0)},
			moved: true,
		},
		"an evicted holder only releases": {
			view: View[string]{Reclaim: ReclaimAny,
				Holders: []forecast.Running{holder(10, 0, 0)}, Sources: []Source[string]{{ClusterQueue: "a", Evicted: true}}},
			d:     delays,
			want:  []forecast.Running{holder(10, 10.3, 0)},
			moved: true,
		},
		"a holder whose own limit comes sooner keeps it": {
			view: View[string]{Reclaim: ReclaimAny,
				Holders: []forecast.Running{holder(10, 10.2, 0)}, Sources: []Source[string]{running("a")}},
			d:     delays,
			want:  []forecast.Running{holder(10, 10.2, 0)},
			moved: true,
		},
		"LowerPriority reclaims only below the highest pending priority": {
			view: View[string]{Reclaim: ReclaimLowerPriority,
				Holders: []forecast.Running{holder(10, 0, 1), holder(10, 0, 2), holder(10, 0, 3)},
				Sources: []Source[string]{running("a"), running("a"), running("a")}},
			top:   2,
			d:     delays,
			want:  []forecast.Running{holder(10, 10.45, 1), holder(10, 0, 2), holder(10, 0, 3)},
			moved: true,
		},
		"nothing measured: reclaimed at once": {
			view: View[string]{Reclaim: ReclaimAny,
				Holders: []forecast.Running{holder(0, 0, 0), holder(3, 0, 0)}, Sources: []Source[string]{running("a"), running("a")}},
			want:  []forecast.Running{holder(0, math.SmallestNonzeroFloat64, 0), holder(3, 3, 0)},
			moved: true,
		},
		"bad delays count as 0": {
			view: View[string]{Reclaim: ReclaimAny,
				Holders: []forecast.Running{holder(3, 0, 0)}, Sources: []Source[string]{running("a")}},
			d:     Delays[string]{Decision: math.NaN(), WriteLag: -1, Release: map[string]float64{"a": math.Inf(1)}},
			want:  []forecast.Running{holder(3, 3, 0)},
			moved: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := append([]forecast.Running(nil), tc.view.Holders...)
			got := tc.view.ReclaimedHolders(tc.top, tc.d)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("holders as the roll sees them (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.view.Holders); diff != "" {
				t.Errorf("the view's holders were modified (-before,+after):\n%s", diff)
			}
			if moved := len(got) > 0 && &got[0] != &tc.view.Holders[0]; moved != tc.moved {
				t.Errorf("copied = %v, want %v", moved, tc.moved)
			}
		})
	}
}
