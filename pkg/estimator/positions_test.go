package estimator

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kueue/pkg/workload"
)

// trackedOf is what e tracks of the pending workload key (zero if
// nothing).
func trackedOf(e *Estimator, key workload.Reference) trackedWorkload {
	p, _ := e.pending.get(nameFromReference(key))
	return p
}

// checkTrackedAgainst fails t unless tracked holds exactly what want holds,
// each shard's table indexing each of its entries once.
func checkTrackedAgainst(t *testing.T, tracked *trackedWorkloads, want map[workloadName]trackedWorkload) {
	t.Helper()
	if tracked.len() != len(want) {
		t.Fatalf("len() = %d, want %d", tracked.len(), len(want))
	}
	for name, w := range want {
		got, ok := tracked.get(name)
		if !ok || got != w {
			t.Fatalf("get(%v) = %v, %v; want %v", name, got, ok, w)
		}
	}
	n := 0
	for i := range tracked.shards {
		s := &tracked.shards[i]
		if s.index.count != len(s.entries) {
			t.Fatalf("shard %d: table counts %d positions for %d entries", i, s.index.count, len(s.entries))
		}
		seen := make(map[int32]bool, len(s.entries))
		for _, slot := range s.index.slots {
			if slot != 0 {
				if seen[slot-1] || int(slot-1) >= len(s.entries) {
					t.Fatalf("shard %d: slot holds position %d twice or past %d entries", i, slot-1, len(s.entries))
				}
				seen[slot-1] = true
			}
		}
		n += len(s.entries)
	}
	if n != len(want) {
		t.Fatalf("%d entries in the shards, want %d", n, len(want))
	}
}

// Tracked workloads agree with a Go map through random sets, overwrites
// and removes of names that repeat across namespaces, while shards grow
// and shrink; emptied, they hand back what a burst made them allocate.
func TestTrackedWorkloadsAgreeWithAMapThroughGrowthAndShrinking(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var tracked trackedWorkloads
	want := map[workloadName]trackedWorkload{}
	names := make([]workloadName, 0, 30000)
	for i := range 10000 {
		for _, ns := range []string{"team-a", "team-b", "ns"} {
			names = append(names, workloadName{ns, fmt.Sprintf("job-%d", i)})
		}
	}
	for step := range 200000 {
		name := names[rng.IntN(len(names))]
		// Mostly sets for the first half, mostly removes for the second.
		if setting := rng.IntN(100) < 80; setting == (step < 100000) {
			w := trackedWorkload{arrived: uint32(step), mean: float32(step)}
			tracked.set(name, w)
			want[name] = w
		} else {
			tracked.remove(name)
			delete(want, name)
		}
		if step%20000 == 0 {
			checkTrackedAgainst(t, &tracked, want)
		}
	}
	checkTrackedAgainst(t, &tracked, want)
	for name := range want {
		tracked.remove(name)
		delete(want, name)
	}
	checkTrackedAgainst(t, &tracked, want)
	for i := range tracked.shards {
		s := &tracked.shards[i]
		if cap(s.entries) > 64 || len(s.index.slots) > 16 {
			t.Errorf("shard %d keeps %d entries' and %d slots' room when empty; want at most 64 and 16", i, cap(s.entries), len(s.index.slots))
		}
	}
}

// FuzzTrackedWorkloads applies a sequence of sets and removes, coded in
// the input's bytes, to trackedWorkloads and to a Go map, and compares them.
func FuzzTrackedWorkloads(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 0x81, 0x82, 4, 0x84, 0x80})
	f.Add([]byte("set and remove the same few names over and over"))
	f.Fuzz(func(t *testing.T, ops []byte) {
		var tracked trackedWorkloads
		want := map[workloadName]trackedWorkload{}
		for i, op := range ops {
			// Low bits name one of 64 workloads in 2 namespaces, the top
			// bit removes.
			name := workloadName{fmt.Sprint("ns-", op&1), fmt.Sprint("w-", op&0x3f>>1)}
			if op&0x80 != 0 {
				tracked.remove(name)
				delete(want, name)
			} else {
				w := trackedWorkload{arrived: uint32(i + 1)}
				tracked.set(name, w)
				want[name] = w
			}
		}
		checkTrackedAgainst(t, &tracked, want)
	})
}

// A ClusterQueue's part finds each of its workloads after its index grew
// past the size it was made for.
func TestResultsFindEveryWorkloadAfterTheirIndexGrew(t *testing.T) {
	q := newQueueResults(0)
	var added []workloadName
	for i := range 1000 {
		name := workloadName{fmt.Sprint("ns-", i%3), fmt.Sprint("w-", i/3)}
		added = append(added, name)
		q.add(name, storedEstimate{hasWait: true, expectedWait: waitMillis(i + 1)}, "")
	}
	for i, name := range added {
		got, ok := q.position(name)
		if !ok || got != int32(i) {
			t.Fatalf("position(%v) = %d, %v; want %d", name, got, ok, i)
		}
	}
	var names []workloadName
	for name := range q.allNames() {
		names = append(names, name)
	}
	if diff := cmp.Diff(added, names, cmp.AllowUnexported(workloadName{})); diff != "" {
		t.Errorf("allNames() (-want,+got):\n%s", diff)
	}
	if _, ok := q.position(workloadName{"ns-0", "w-1000"}); ok {
		t.Error("position found a workload never added")
	}
}
