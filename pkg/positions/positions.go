package positions

import (
	"hash/maphash"
	"math/bits"
)

// Name is a workload's namespace and name, the parts of its Kueue
// reference ("namespace/name"), made of the object's own strings: indexing
// by it builds no string and allocates nothing per workload.
type Name struct{ Namespace, Name string }

// nameSeed seeds the hashes of workload names in position tables.
var nameSeed = maphash.MakeSeed()

// hashName hashes a workload's namespace and name. Both count: names made
// by Kueue's job integrations differ by the owner's UID, but Workloads
// created by hand may share a name across many namespaces, which would
// otherwise all probe one run of slots.
func hashName(n Name) uint64 {
	return maphash.String(nameSeed, n.Name) + 0x9e3779b97f4a7c15*maphash.String(nameSeed, n.Namespace)
}

// Namer says which workload is at a position of a caller's list.
type Namer interface {
	NameAt(pos int32) Name
}

// Table indexes the positions 0, 1, … of a caller's list by the
// workload name at each (the caller's [Namer]): an open-addressing hash
// table with linear probing. A slot holds a position plus one (0 is
// empty), and at most half the slots are full, so a lookup probes about
// 1.5 slots for a name that is there and 2.5 for one that is not
// (Knuth's linear-probing estimates at load ½).
//
// It keeps no name: 4 bytes a slot, 8 to 16 bytes per position, where a
// Go map from a name string to a position takes about 50 at these sizes
// (its 24-byte slots at a load between 7/16 and 7/8). Each name is added
// once; the caller keeps them unique.
type Table struct {
	slots []int32
	count int
}

// tableSlotsFor is the number of slots for n positions: the smallest power
// of two of at least 2n (and 8).
func tableSlotsFor(n int) int {
	if n < 4 {
		return 8
	}
	return 1 << bits.Len(uint(2*n-1))
}

// Reset empties t and sizes it for n positions.
func (t *Table) Reset(n int) {
	if size := tableSlotsFor(n); len(t.slots) != size {
		t.slots = make([]int32, size)
	} else {
		clear(t.slots)
	}
	t.count = 0
}

// Insert adds position pos, which holds names.NameAt(pos), to t,
// doubling t first if it would be more than half full.
func Insert[N Namer](t *Table, names N, pos int32) {
	if 2*(t.count+1) > len(t.slots) {
		growPositions(t, names)
	}
	t.place(hashName(names.NameAt(pos)), pos)
	t.count++
}

// place puts pos in the first empty slot from its hash's.
func (t *Table) place(h uint64, pos int32) {
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		if t.slots[i] == 0 {
			t.slots[i] = pos + 1
			return
		}
	}
}

// growPositions doubles t (or sizes an unsized one) and places every
// position again.
func growPositions[N Namer](t *Table, names N) {
	old := t.slots
	t.slots = make([]int32, max(2*len(old), tableSlotsFor(t.count+1)))
	for _, s := range old {
		if s != 0 {
			t.place(hashName(names.NameAt(s-1)), s-1)
		}
	}
}

// Find returns the position of name in t.
func Find[N Namer](t *Table, names N, name Name) (pos int32, ok bool) {
	pos, _, ok = find(t, names, name)
	return pos, ok
}

// find returns the position of name in t and its slot.
func find[N Namer](t *Table, names N, name Name) (pos int32, slot int, ok bool) {
	if t.count == 0 {
		return 0, 0, false
	}
	mask := uint64(len(t.slots) - 1)
	for i := hashName(name) & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return 0, 0, false
		}
		if names.NameAt(s-1) == name {
			return s - 1, int(i), true
		}
	}
}

// slotOf returns the slot that holds pos, whose name is name (in t).
func (t *Table) slotOf(name Name, pos int32) int {
	mask := uint64(len(t.slots) - 1)
	for i := hashName(name) & mask; ; i = (i + 1) & mask {
		if t.slots[i] == pos+1 {
			return int(i)
		}
	}
}

// removeSlot empties slot (which holds a position) and shifts back the
// positions after it that probed past it, so that no lookup stops early
// (deletion without tombstones, Knuth's Algorithm R).
func removeSlot[N Namer](t *Table, names N, slot int) {
	mask := len(t.slots) - 1
	hole := slot
	for j := (hole + 1) & mask; t.slots[j] != 0; j = (j + 1) & mask {
		home := int(hashName(names.NameAt(t.slots[j]-1)) & uint64(mask))
		// The entry at j may move to hole unless its home lies
		// cyclically in (hole, j].
		if (j-home)&mask >= (j-hole)&mask {
			t.slots[hole] = t.slots[j]
			hole = j
		}
	}
	t.slots[hole] = 0
	t.count--
}

// trackedShards is the number of independent tables a [Tracked]
// spreads its workloads over: growing one rehashes 1/256 of them, a few
// thousand at a million pending, within the estimator's lock, which the
// scheduler's hooks take too.
const trackedShards = 256

// Tracked holds a V per pending workload the estimator tracks, by
// namespace and name: in each shard, a dense slice of entries and a
// [Table] over it. An entry takes 56 bytes and
// holds the name's strings as given (the Workload object's own when the
// caller has it, so that no string is built per workload); a Go map from
// a Reference to the estimator's V (24 bytes) took about 98 bytes per workload at a
// million (40-byte slots at the load a swiss table has after it split)
// plus the Reference string's 24. Removal moves a shard's last entry into
// the gap; a shard whose slice or table a burst left at four times its
// size or more is shrunk. The zero value is empty and ready.
type Tracked[V any] struct {
	shards [trackedShards]trackedShard[V]
	n      int
}

type trackedShard[V any] struct {
	index   Table
	entries []trackedEntry[V]
}

type trackedEntry[V any] struct {
	name  Name
	value V
}

func (s *trackedShard[V]) NameAt(i int32) Name { return s.entries[i].name }

// shard returns the shard of name: its hash's top byte, while the shard's
// table uses the low bits.
func (t *Tracked[V]) shard(name Name) *trackedShard[V] {
	return &t.shards[hashName(name)>>56]
}

// Len returns the number of workloads tracked.
func (t *Tracked[V]) Len() int { return t.n }

// Get returns what is tracked of name.
func (t *Tracked[V]) Get(name Name) (V, bool) {
	if p := t.Find(name); p != nil {
		return *p, true
	}
	var zero V
	return zero, false
}

// Find returns what is tracked of name, to change in place, or nil. The
// pointer is good until the next Set or Remove.
func (t *Tracked[V]) Find(name Name) *V {
	s := t.shard(name)
	i, _, ok := find(&s.index, s, name)
	if !ok {
		return nil
	}
	return &s.entries[i].value
}

// Set tracks w for name, in place of what was tracked of it.
func (t *Tracked[V]) Set(name Name, w V) {
	s := t.shard(name)
	if i, _, ok := find(&s.index, s, name); ok {
		s.entries[i].value = w
		return
	}
	s.entries = append(s.entries, trackedEntry[V]{name: name, value: w})
	Insert(&s.index, s, int32(len(s.entries)-1))
	t.n++
}

// Remove stops tracking name; it does nothing if name is not tracked.
func (t *Tracked[V]) Remove(name Name) {
	s := t.shard(name)
	i, slot, ok := find(&s.index, s, name)
	if !ok {
		return
	}
	removeSlot(&s.index, s, slot)
	if last := int32(len(s.entries) - 1); i != last {
		// The last entry fills the gap: its slot now points at i.
		s.index.slots[s.index.slotOf(s.entries[last].name, last)] = i + 1
		s.entries[i] = s.entries[last]
	}
	s.entries[len(s.entries)-1] = trackedEntry[V]{}
	s.entries = s.entries[:len(s.entries)-1]
	t.n--
	if n := len(s.entries); cap(s.entries) >= 64 && 4*n <= cap(s.entries) {
		s.entries = append(make([]trackedEntry[V], 0, 2*n), s.entries...)
	}
	if n := len(s.entries); len(s.index.slots) > 8 && 4*tableSlotsFor(n) <= len(s.index.slots) {
		s.index.Reset(n)
		for j := range s.entries {
			Insert(&s.index, s, int32(j))
		}
	}
}
