package estimator

import (
	"hash/maphash"
	"math/bits"
)

// nameSeed seeds the hashes of workload names in position tables.
var nameSeed = maphash.MakeSeed()

// hashName hashes a workload's namespace and name. Both count: names made
// by Kueue's job integrations differ by the owner's UID, but Workloads
// created by hand may share a name across many namespaces, which would
// otherwise all probe one run of slots.
func hashName(n workloadName) uint64 {
	return maphash.String(nameSeed, n.name) + 0x9e3779b97f4a7c15*maphash.String(nameSeed, n.namespace)
}

// namer says which workload is at a position of a caller's list.
type namer interface {
	nameAt(pos int32) workloadName
}

// positionTable indexes the positions 0, 1, … of a caller's list by the
// workload name at each (the caller's namer): an open-addressing hash
// table with linear probing. A slot holds a position plus one (0 is
// empty), and at most half the slots are full, so a lookup probes about
// 1.5 slots for a name that is there and 2.5 for one that is not
// (Knuth's linear-probing estimates at load ½).
//
// It keeps no name: 4 bytes a slot, 8 to 16 bytes per position, where a
// Go map from a name string to a position takes about 50 at these sizes
// (its 24-byte slots at a load between 7/16 and 7/8). Each name is added
// once; the caller keeps them unique.
type positionTable struct {
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

// reset empties t and sizes it for n positions.
func (t *positionTable) reset(n int) {
	if size := tableSlotsFor(n); len(t.slots) != size {
		t.slots = make([]int32, size)
	} else {
		clear(t.slots)
	}
	t.count = 0
}

// insertPosition adds position pos, which holds names.nameAt(pos), to t,
// doubling t first if it would be more than half full.
func insertPosition[N namer](t *positionTable, names N, pos int32) {
	if 2*(t.count+1) > len(t.slots) {
		growPositions(t, names)
	}
	t.place(hashName(names.nameAt(pos)), pos)
	t.count++
}

// place puts pos in the first empty slot from its hash's.
func (t *positionTable) place(h uint64, pos int32) {
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
func growPositions[N namer](t *positionTable, names N) {
	old := t.slots
	t.slots = make([]int32, max(2*len(old), tableSlotsFor(t.count+1)))
	for _, s := range old {
		if s != 0 {
			t.place(hashName(names.nameAt(s-1)), s-1)
		}
	}
}

// findPosition returns the position of name in t and its slot.
func findPosition[N namer](t *positionTable, names N, name workloadName) (pos int32, slot int, ok bool) {
	if t.count == 0 {
		return 0, 0, false
	}
	mask := uint64(len(t.slots) - 1)
	for i := hashName(name) & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return 0, 0, false
		}
		if names.nameAt(s-1) == name {
			return s - 1, int(i), true
		}
	}
}

// slotOf returns the slot that holds pos, whose name is name (in t).
func (t *positionTable) slotOf(name workloadName, pos int32) int {
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
func removeSlot[N namer](t *positionTable, names N, slot int) {
	mask := len(t.slots) - 1
	hole := slot
	for j := (hole + 1) & mask; t.slots[j] != 0; j = (j + 1) & mask {
		home := int(hashName(names.nameAt(t.slots[j]-1)) & uint64(mask))
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

// trackedShards is the number of independent tables trackedWorkloads
// spreads its workloads over: growing one rehashes 1/256 of them, a few
// thousand at a million pending, within the estimator's lock, which the
// scheduler's hooks take too.
const trackedShards = 256

// trackedWorkloads holds a trackedWorkload per pending workload the
// estimator tracks, by namespace and name: in each shard, a dense slice
// of entries and a positionTable over it. An entry takes 56 bytes and
// holds the name's strings as given (the Workload object's own when the
// caller has it, so that no string is built per workload); a Go map from
// a Reference to a trackedWorkload took about 98 bytes per workload at a
// million (40-byte slots at the load a swiss table has after it split)
// plus the Reference string's 24. Removal moves a shard's last entry into
// the gap; a shard whose slice or table a burst left at four times its
// size or more is shrunk. The zero value is empty and ready.
type trackedWorkloads struct {
	shards [trackedShards]trackedShard
	n      int
}

type trackedShard struct {
	index   positionTable
	entries []trackedEntry
}

type trackedEntry struct {
	name workloadName
	trackedWorkload
}

func (s *trackedShard) nameAt(i int32) workloadName { return s.entries[i].name }

// shard returns the shard of name: its hash's top byte, while the shard's
// table uses the low bits.
func (t *trackedWorkloads) shard(name workloadName) *trackedShard {
	return &t.shards[hashName(name)>>56]
}

// len returns the number of workloads tracked.
func (t *trackedWorkloads) len() int { return t.n }

// get returns what is tracked of name.
func (t *trackedWorkloads) get(name workloadName) (trackedWorkload, bool) {
	if p := t.find(name); p != nil {
		return *p, true
	}
	return trackedWorkload{}, false
}

// find returns what is tracked of name, to change in place, or nil. The
// pointer is good until the next set or remove.
func (t *trackedWorkloads) find(name workloadName) *trackedWorkload {
	s := t.shard(name)
	i, _, ok := findPosition(&s.index, s, name)
	if !ok {
		return nil
	}
	return &s.entries[i].trackedWorkload
}

// set tracks w for name, in place of what was tracked of it.
func (t *trackedWorkloads) set(name workloadName, w trackedWorkload) {
	s := t.shard(name)
	if i, _, ok := findPosition(&s.index, s, name); ok {
		s.entries[i].trackedWorkload = w
		return
	}
	s.entries = append(s.entries, trackedEntry{name: name, trackedWorkload: w})
	insertPosition(&s.index, s, int32(len(s.entries)-1))
	t.n++
}

// remove stops tracking name; it does nothing if name is not tracked.
func (t *trackedWorkloads) remove(name workloadName) {
	s := t.shard(name)
	i, slot, ok := findPosition(&s.index, s, name)
	if !ok {
		return
	}
	removeSlot(&s.index, s, slot)
	if last := int32(len(s.entries) - 1); i != last {
		// The last entry fills the gap: its slot now points at i.
		s.index.slots[s.index.slotOf(s.entries[last].name, last)] = i + 1
		s.entries[i] = s.entries[last]
	}
	s.entries[len(s.entries)-1] = trackedEntry{}
	s.entries = s.entries[:len(s.entries)-1]
	t.n--
	if n := len(s.entries); cap(s.entries) >= 64 && 4*n <= cap(s.entries) {
		s.entries = append(make([]trackedEntry, 0, 2*n), s.entries...)
	}
	if n := len(s.entries); len(s.index.slots) > 8 && 4*tableSlotsFor(n) <= len(s.index.slots) {
		s.index.reset(n)
		for j := range s.entries {
			insertPosition(&s.index, s, int32(j))
		}
	}
}
