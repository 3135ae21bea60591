package published

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kueue-waittime/kueue-waittime/pkg/positions"
)

func TestRelistKeepsTheArrivalsARefreshMissed(t *testing.T) {
	t0 := time.Unix(1000, 0)
	const maxStaleness = 10 * time.Second
	cases := map[string]struct {
		// recomputed, published and pending say whether the refresh
		// recomputed the arrival's ClusterQueue, published the arrival and
		// still tracks it pending.
		recomputed, published, pending bool
		// age is how long before the refresh the arrival was seen.
		age         time.Duration
		wantAgain   bool
		wantTracked bool
	}{
		"its ClusterQueue not recomputed: kept":  {pending: true, age: time.Second, wantTracked: true},
		"published: forgotten":                   {recomputed: true, published: true, pending: true, age: time.Second},
		"no longer pending: forgotten":           {recomputed: true, age: time.Second},
		"unlisted for the maximum staleness":     {recomputed: true, pending: true, age: maxStaleness},
		"still unlisted: its ClusterQueue again": {recomputed: true, pending: true, age: time.Second, wantAgain: true, wantTracked: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := NewChanges[clusterQueue, workloadKey]()
			c.Take()
			c.Unlisted["ns/w"] = Arrival[clusterQueue]{ClusterQueue: "a", At: t0.Add(-tc.age).UnixNano()}
			recomputed := map[clusterQueue]*testPart{}
			if tc.recomputed {
				part := newTestPart(0)
				if tc.published {
					part.Add(positions.Name{Namespace: "ns", Name: "w"}, waitOf(time.Second), "")
				}
				recomputed["a"] = part
			}
			pending := func(positions.Name) bool { return tc.pending }
			again := Relist(c, t0, recomputed, pending, maxStaleness)
			changed, _ := c.Take()
			_, tracked := c.Unlisted["ns/w"]
			got := []bool{again, len(changed) > 0, tracked}
			want := []bool{tc.wantAgain, tc.wantAgain, tc.wantTracked}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("marked again, a ClusterQueue changed, still tracked (-want +got):\n%s", diff)
			}
		})
	}
}
