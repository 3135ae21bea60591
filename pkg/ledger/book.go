package ledger

import (
	"iter"
	"maps"
	"slices"
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/engine"

	"github.com/kueue-waittime/kueue-waittime/pkg/positions"
)

// Book holds the ledger's lines: Pending, the Line of every pending
// workload by namespace and name, and the keys (W, "namespace/name") of
// those whose line has no estimate yet, or a part of them: a refresh's
// Writer takes them out as it rolls and puts back those it did not stamp.
// It keeps the ledger's work per refresh in proportion to the arrivals,
// not to the pending workloads. The zero value is empty and ready; the
// caller guards it with its lock.
type Book[W, Q ~string] struct {
	Pending    positions.Tracked[Line[Q]]
	unledgered map[W]struct{}
}

// Track registers key, named name, as pending since the arrival offset
// arrived (see Line.Arrived), with no ledger line yet. The tracked entry
// keeps name's strings: the caller's own object's, where it has them.
func (b *Book[W, Q]) Track(key W, name positions.Name, arrived uint32) {
	b.Pending.Set(name, Line[Q]{Arrived: arrived})
	if b.unledgered == nil {
		b.unledgered = make(map[W]struct{})
	}
	b.unledgered[key] = struct{}{}
}

// TrackListed tracks, as Track does with an unknown arrival, each of keys
// not tracked yet: pending workloads a read of the API found, whose
// arrival was not seen.
func (b *Book[W, Q]) TrackListed(keys []W) {
	for _, key := range keys {
		if _, ok := b.Pending.Get(positions.NameOfKey(key)); !ok {
			b.Track(key, positions.NameOfKey(key), 0)
		}
	}
}

// Forget forgets the pending workload key (admitted or deleted).
func (b *Book[W, Q]) Forget(key W) {
	b.Pending.Remove(positions.NameOfKey(key))
	delete(b.unledgered, key)
}

// Unledgered yields the keys of the pending workloads without a line that
// no Writer holds, in no particular order.
func (b *Book[W, Q]) Unledgered() iter.Seq[W] { return maps.Keys(b.unledgered) }

// MarkUntried sets, for each of the untried candidates (names are the
// pending workloads' names, by the candidates' Index), whether the
// workload is untried (see TriedBit) with a known arrival and, if so, how
// long it has waited at now. It leaves the others as they are.
func (b *Book[W, Q]) MarkUntried(names []positions.Name, candidates []engine.Candidate, now time.Time) {
	for i := range candidates {
		c := &candidates[i]
		p, ok := b.Pending.Get(names[c.Index])
		if !ok || !p.Untried() {
			continue
		}
		if at, ok := p.ArrivedAt(c.Created); ok {
			c.Untried, c.Waited = true, float32(max(now.Sub(at).Seconds(), 0))
		}
	}
}

// Batch bounds how many ledger lines a Writer writes per hold of the
// caller's lock, which the scheduler's hooks take too.
const Batch = 256

// Writer records, during a refresh, the first published estimate of each
// pending workload of a Book that has no line yet. Only workloads the
// caller registered as pending (Book.Track) get a line: a workload
// forgotten meanwhile is never brought back. One writer serves a whole
// refresh; call Restore at the end.
//
// The writer looks at the workloads without a line only, which it takes
// as each ClusterQueue is rolled (TakeUnledgered): a workload tracked
// before the roll of its ClusterQueue gets this refresh's estimate, one
// tracked later the next refresh's. Every other pending workload has its
// line already, and costs the refresh nothing here.
type Writer[W, Q ~string] struct {
	book *Book[W, Q]
	// lock takes the lock that guards book and returns its release.
	lock func() (unlock func())
	// wanted holds the keys taken from book.unledgered and not stamped
	// yet. It is the refresh's own: the caller's event handlers change
	// only book, so a key here may have been admitted or deleted since;
	// flush and Restore check book.Pending.
	wanted map[W]struct{}
	n      int
	names  [Batch]positions.Name
	// buf holds the key a lookup is built in.
	buf   []byte
	lines [Batch]Line[Q]
}

// NewWriter returns a writer of book's lines, which takes the lock that
// guards book with lock (and releases it with what lock returns) to write
// them.
func NewWriter[W, Q ~string](book *Book[W, Q], lock func() (unlock func())) *Writer[W, Q] {
	return &Writer[W, Q]{book: book, lock: lock}
}

// TakeUnledgered moves the keys of the book's workloads without a line
// into the writer: in one swap of maps when the writer holds none (the
// first ClusterQueue of a refresh), else one by one (the arrivals since
// the last ClusterQueue). The caller holds the book's lock.
func (w *Writer[W, Q]) TakeUnledgered() {
	b := w.book
	if len(b.unledgered) == 0 {
		return
	}
	if len(w.wanted) == 0 {
		w.wanted, b.unledgered = b.unledgered, make(map[W]struct{})
		return
	}
	for key := range b.unledgered {
		w.wanted[key] = struct{}{}
	}
	// A new map: a cleared one would keep the buckets of a burst.
	b.unledgered = make(map[W]struct{})
}

// Wants reports whether the workload named name may still need its line.
func (w *Writer[W, Q]) Wants(name positions.Name) bool {
	if len(w.wanted) == 0 {
		return false
	}
	w.buf = positions.AppendKey(w.buf[:0], name)
	_, ok := w.wanted[W(w.buf)]
	return ok
}

// Add queues the line of a pending workload that wants one.
func (w *Writer[W, Q]) Add(name positions.Name, line Line[Q]) {
	w.names[w.n], w.lines[w.n] = name, line
	w.n++
	if w.n == Batch {
		w.flush()
	}
}

// flush writes the queued lines of the workloads still pending without
// one.
func (w *Writer[W, Q]) flush() {
	if w.n == 0 {
		return
	}
	defer w.lock()()
	for i := range w.n {
		if p := w.book.Pending.Find(w.names[i]); p != nil && p.Stamp == nil {
			line := w.lines[i]
			line.Arrived = p.Arrived
			*p = line
		}
		// Stamped now, earlier or gone: it needs nothing more. A
		// preemption that requeues it later registers it again.
		w.buf = positions.AppendKey(w.buf[:0], w.names[i])
		delete(w.wanted, W(w.buf))
		delete(w.book.unledgered, W(w.buf))
	}
	clear(w.names[:w.n])
	w.n = 0
}

// Restore flushes the writer and puts back into the book, a batch per
// hold of its lock, the keys it took and did not stamp that are still
// pending without a line (a workload no recomputed ClusterQueue listed:
// its ClusterQueue was not recomputed, its roll failed, or the caller's
// queues do not list it).
func (w *Writer[W, Q]) Restore() {
	w.flush()
	keys := slices.Collect(maps.Keys(w.wanted))
	w.wanted = nil
	for len(keys) > 0 {
		n := min(len(keys), Batch)
		w.restoreLocked(keys[:n])
		keys = keys[n:]
	}
}

// restoreLocked puts back those of keys still pending without a line,
// under one hold of the book's lock.
func (w *Writer[W, Q]) restoreLocked(keys []W) {
	defer w.lock()()
	for _, key := range keys {
		if p, ok := w.book.Pending.Get(positions.NameOfKey(key)); ok && p.Stamp == nil {
			if w.book.unledgered == nil {
				w.book.unledgered = make(map[W]struct{})
			}
			w.book.unledgered[key] = struct{}{}
		}
	}
}
