// Package lockhold times the holds of a mutex by one goroutine (the
// estimator's refresh) that other goroutines (the scheduler's hooks) wait
// for: every hold taken through a [Timer] records its length, and
// [Timer.Longest] bounds what those holds kept the others waiting.
//
// It imports nothing of Kueue or Kubernetes and reads no clock of its own:
// the caller passes one.
package lockhold

import (
	"sync"
	"sync/atomic"
	"time"
)

// Clock tells the current time and the time passed since another.
type Clock interface {
	Now() time.Time
	Since(time.Time) time.Duration
}

// Timer takes mu and times each hold. It is safe for concurrent use.
type Timer struct {
	mu    *sync.Mutex
	clock Clock
	// longest is the longest hold since the last Reset, in nanoseconds.
	longest atomic.Int64
}

// New returns a timer of the holds of mu, read on clock.
func New(mu *sync.Mutex, clock Clock) *Timer {
	return &Timer{mu: mu, clock: clock}
}

// Hold is one hold of the timer's mutex: take it with Lock and release it
// with Unlock (deferred, so that a panic releases it too), which records
// its length.
type Hold struct {
	t     *Timer
	since time.Time
}

// Lock takes the mutex. If the clock panics, the mutex is released before
// the panic goes on: the caller has no hold to release.
func (t *Timer) Lock() Hold {
	t.mu.Lock()
	locked := true
	defer func() {
		// Only if the clock panicked: the caller has no hold to release.
		if locked {
			t.mu.Unlock()
		}
	}()
	h := Hold{t: t, since: t.clock.Now()}
	locked = false
	return h
}

// Unlock releases the mutex and records how long it was held, if that is
// the longest hold since the last Reset. The mutex is released also if the
// clock panics.
func (h Hold) Unlock() {
	var held int64
	func() {
		defer h.t.mu.Unlock() // also if the clock panics
		held = int64(h.t.clock.Since(h.since))
	}()
	for {
		longest := h.t.longest.Load()
		if held <= longest || h.t.longest.CompareAndSwap(longest, held) {
			return
		}
	}
}

// Longest is the longest hold since the last Reset.
func (t *Timer) Longest() time.Duration { return time.Duration(t.longest.Load()) }

// Reset forgets the holds so far.
func (t *Timer) Reset() { t.longest.Store(0) }
