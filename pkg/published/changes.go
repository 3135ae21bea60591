package published

import (
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/positions"
)

// Changes holds what the events changed since the last refresh took it:
// the ClusterQueues (named by Q) whose inputs changed, or all of them,
// and the workloads (keyed by K, "namespace/name") seen arriving, or
// requeued by a preemption, that no refresh has published yet. The event
// handlers hear of an arrival before, or at the same time as, the queue
// manager lists it: a refresh between the two recomputes the ClusterQueue
// without it, and only a later event or the maximum staleness would
// recompute it again (see Relist). The zero value is not ready: make it
// with NewChanges. The caller guards it with its lock.
type Changes[Q, K ~string] struct {
	changed map[Q]struct{}
	all     bool
	// Unlisted holds where and when each unpublished arrival was seen,
	// bounded by the arrivals of about one refresh.
	Unlisted map[K]Arrival[Q]
}

// Arrival is where and when a workload of Changes.Unlisted was seen
// arriving (At in Unix nanoseconds).
type Arrival[Q ~string] struct {
	ClusterQueue Q
	At           int64
}

// NewChanges returns the changes of a new estimator: every ClusterQueue
// is to be computed.
func NewChanges[Q, K ~string]() *Changes[Q, K] {
	return &Changes[Q, K]{changed: make(map[Q]struct{}), all: true, Unlisted: make(map[K]Arrival[Q])}
}

// Mark records that an event changed the inputs of ClusterQueue cq (and
// so, through borrowing, of its cohort tree).
func (c *Changes[Q, K]) Mark(cq Q) { c.changed[cq] = struct{}{} }

// MarkAll records that every ClusterQueue is to be recomputed.
func (c *Changes[Q, K]) MarkAll() { c.all = true }

// Take returns and resets what changed since the last call: the
// ClusterQueues marked, and whether all are.
func (c *Changes[Q, K]) Take() (map[Q]struct{}, bool) {
	changed, all := c.changed, c.all
	c.changed, c.all = make(map[Q]struct{}), false
	return changed, all
}

// ForgetClusterQueue forgets the unpublished arrivals of a deleted
// ClusterQueue.
func (c *Changes[Q, K]) ForgetClusterQueue(cq Q) {
	for key, a := range c.Unlisted {
		if a.ClusterQueue == cq {
			delete(c.Unlisted, key)
		}
	}
}

// Relist marks again as changed the ClusterQueue of every workload seen
// arriving that the refresh at now recomputed (recomputed holds its parts)
// without publishing it (the queue manager did not list it yet), so that
// the next refresh looks again; it says whether it marked any. A workload
// published, no longer pending (pending says which are), or unlisted for
// maxStaleness (a LocalQueue that is stopped, an inactive workload: the
// staleness rule refreshes its queue anyway) is forgotten.
func Relist[Q, R, K ~string, C any](c *Changes[Q, K], now time.Time, recomputed map[Q]*Part[Q, R, C], pending func(positions.Name) bool,
	maxStaleness time.Duration) bool {
	if len(c.Unlisted) == 0 {
		return false
	}
	// Kept in a new map: a Go map keeps the buckets of deleted entries,
	// and a burst of arrivals (or the warm start's replay) would leave
	// them allocated for good.
	kept := make(map[K]Arrival[Q])
	again := false
	for key, a := range c.Unlisted {
		part, ok := recomputed[a.ClusterQueue]
		if !ok {
			kept[key] = a
			continue
		}
		name := positions.NameOfKey(key)
		_, isPublished := part.Position(name)
		if isPublished || !pending(name) || now.Sub(time.Unix(0, a.At)) >= maxStaleness {
			continue
		}
		kept[key] = a
		c.Mark(a.ClusterQueue)
		again = true
	}
	c.Unlisted = kept
	return again
}
