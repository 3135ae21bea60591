package ledger

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kueue-waittime/kueue-waittime/pkg/positions"
)

type (
	workloadKey  string
	clusterQueue string
)

// A refresh's writer stamps the pending workloads without a line that it
// took, puts back those it did not stamp, and never brings back one
// forgotten meanwhile.
func TestWriterStampsWhatItTookAndRestoresTheRest(t *testing.T) {
	stamp := &Stamp[clusterQueue]{ClusterQueue: "cq"}
	cases := map[string]struct {
		track          []workloadKey
		trackLate      []workloadKey
		forget         []workloadKey
		stamp          []workloadKey
		wantStamped    []workloadKey
		wantUnledgered []workloadKey
	}{
		"nothing pending": {},
		"every one stamped": {
			track: []workloadKey{"ns/a", "ns/b"}, stamp: []workloadKey{"ns/a", "ns/b"},
			wantStamped: []workloadKey{"ns/a", "ns/b"},
		},
		"one not listed is put back": {
			track: []workloadKey{"ns/a", "ns/b"}, stamp: []workloadKey{"ns/a"},
			wantStamped: []workloadKey{"ns/a"}, wantUnledgered: []workloadKey{"ns/b"},
		},
		"one forgotten meanwhile is not brought back": {
			track: []workloadKey{"ns/a", "ns/b"}, forget: []workloadKey{"ns/a", "ns/b"}, stamp: []workloadKey{"ns/a"},
		},
		"one tracked after the take waits for the next refresh": {
			track: []workloadKey{"ns/a"}, trackLate: []workloadKey{"ns/b"}, stamp: []workloadKey{"ns/a", "ns/b"},
			wantStamped: []workloadKey{"ns/a"}, wantUnledgered: []workloadKey{"ns/b"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var book Book[workloadKey, clusterQueue]
			locks := 0
			w := NewWriter(&book, func() func() { locks++; return func() { locks-- } })
			for _, k := range tc.track {
				book.Track(k, positions.NameOfKey(k), 7)
			}
			w.TakeUnledgered()
			for _, k := range tc.trackLate {
				book.Track(k, positions.NameOfKey(k), 7)
			}
			for _, k := range tc.forget {
				book.Forget(k)
			}
			for _, k := range tc.stamp {
				if name := positions.NameOfKey(k); w.Wants(name) {
					w.Add(name, NewLine(stamp, true, 1, 1, 1))
				}
			}
			w.Restore()
			if locks != 0 {
				t.Errorf("%d holds of the lock left", locks)
			}
			var stamped []workloadKey
			for _, k := range append(slices.Clone(tc.track), tc.trackLate...) {
				if l, ok := book.Pending.Get(positions.NameOfKey(k)); ok && l.Stamp != nil {
					stamped = append(stamped, k)
					if l.Arrived != 7 {
						t.Errorf("%s's line arrived at %d, want the tracked 7", k, l.Arrived)
					}
				}
			}
			sorted := cmpopts.SortSlices(func(a, b workloadKey) bool { return a < b })
			if diff := cmp.Diff(tc.wantStamped, stamped, sorted, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("stamped (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantUnledgered, slices.Collect(book.Unledgered()), sorted, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("without a line (-want,+got):\n%s", diff)
			}
		})
	}
}

// Asking whether a workload wants its line builds its key in a reused
// buffer: it allocates nothing.
func TestWriterWantsAllocatesNothing(t *testing.T) {
	var book Book[workloadKey, clusterQueue]
	book.Track("team-a/train-7", positions.Name{Namespace: "team-a", Name: "train-7"}, 0)
	w := NewWriter(&book, func() func() { return func() {} })
	w.TakeUnledgered()
	name := positions.Name{Namespace: "team-a", Name: "train-7"}
	w.Wants(name)
	found := false
	allocs := testing.AllocsPerRun(100, func() { found = w.Wants(name) })
	if !found || allocs != 0 {
		t.Errorf("Wants found %v with %v allocations per run; want found with 0", found, allocs)
	}
}
