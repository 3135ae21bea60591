package positions

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// value stands for what the estimator tracks of a pending workload (its
// ledger stamp's pointer aside): comparable, of its size.
type value struct {
	stamp          *int
	mean, p50, p90 float32
	arrived        uint32
}

// checkTrackedAgainst fails t unless tracked holds exactly what want holds,
// each shard's table indexing each of its entries once.
func checkTrackedAgainst(t *testing.T, tracked *Tracked[value], want map[Name]value) {
	t.Helper()
	if tracked.Len() != len(want) {
		t.Fatalf("len() = %d, want %d", tracked.Len(), len(want))
	}
	for name, w := range want {
		got, ok := tracked.Get(name)
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
func TestTrackedAgreeWithAMapThroughGrowthAndShrinking(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var tracked Tracked[value]
	want := map[Name]value{}
	names := make([]Name, 0, 30000)
	for i := range 10000 {
		for _, ns := range []string{"team-a", "team-b", "ns"} {
			names = append(names, Name{ns, fmt.Sprintf("job-%d", i)})
		}
	}
	for step := range 200000 {
		name := names[rng.IntN(len(names))]
		// Mostly sets for the first half, mostly removes for the second.
		if setting := rng.IntN(100) < 80; setting == (step < 100000) {
			w := value{arrived: uint32(step), mean: float32(step)}
			tracked.Set(name, w)
			want[name] = w
		} else {
			tracked.Remove(name)
			delete(want, name)
		}
		if step%20000 == 0 {
			checkTrackedAgainst(t, &tracked, want)
		}
	}
	checkTrackedAgainst(t, &tracked, want)
	for name := range want {
		tracked.Remove(name)
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

// FuzzTracked applies a sequence of sets and removes, coded in
// the input's bytes, to a Tracked and to a Go map, and compares them.
func FuzzTracked(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 0x81, 0x82, 4, 0x84, 0x80})
	f.Add([]byte("set and remove the same few names over and over"))
	f.Fuzz(func(t *testing.T, ops []byte) {
		var tracked Tracked[value]
		want := map[Name]value{}
		for i, op := range ops {
			// Low bits name one of 64 workloads in 2 namespaces, the top
			// bit removes.
			name := Name{fmt.Sprint("ns-", op&1), fmt.Sprint("w-", op&0x3f>>1)}
			if op&0x80 != 0 {
				tracked.Remove(name)
				delete(want, name)
			} else {
				w := value{arrived: uint32(i + 1)}
				tracked.Set(name, w)
				want[name] = w
			}
		}
		checkTrackedAgainst(t, &tracked, want)
	})
}
