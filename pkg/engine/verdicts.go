package engine

import (
	"maps"
	"sync"
	"sync/atomic"
)

// Verdicts holds, per pending workload (keyed by K), why it can never be
// placed (Pending.Unplaceable's reason), as found when the scheduler last
// tried it. Writers call Set under its lock, copying the map; a reader
// takes the current map with Load without a lock, so that a reader never
// waits for a writer here, nor a writer for a reader. The zero value holds
// none.
type Verdicts[K comparable] struct {
	mu      sync.Mutex
	current atomic.Pointer[map[K]string]
}

// Set records why key cannot be placed, or forgets it when why is "".
func (v *Verdicts[K]) Set(key K, why string) {
	if old := v.Load(); old[key] == why {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	old := v.Load()
	if old[key] == why {
		return
	}
	next := make(map[K]string, len(old)+1)
	maps.Copy(next, old)
	if why == "" {
		delete(next, key)
	} else {
		next[key] = why
	}
	v.current.Store(&next)
}

// Load returns the current verdicts, nil when there are none; the map is
// never written after it is stored.
func (v *Verdicts[K]) Load() map[K]string {
	if m := v.current.Load(); m != nil {
		return *m
	}
	return nil
}

// UnplaceableIndex gives each pending workload of one Queue its
// Pending.Unplaceable: 0, or the 1-based index of its verdict in Reasons.
type UnplaceableIndex[K comparable] struct {
	// Verdicts are the verdicts loaded for the Queue (Verdicts.Load).
	Verdicts map[K]string
	Reasons  Reasons
}

// Any reports whether any verdict is held: without one, every workload's
// index is 0, and a caller need not build its key.
func (u *UnplaceableIndex[K]) Any() bool { return len(u.Verdicts) > 0 }

// Of returns the Pending.Unplaceable of the workload keyed key.
func (u *UnplaceableIndex[K]) Of(key K) uint16 {
	why, ok := u.Verdicts[key]
	if !ok {
		return 0
	}
	return u.Reasons.Index(why)
}
