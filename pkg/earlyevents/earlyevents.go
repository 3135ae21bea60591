package earlyevents

// Kind is the kind of a workload transition.
type Kind uint8

const (
	Arrival Kind = iota
	Admission
	Release
	Finish
	Preemption
)

// Event is a workload transition the event handlers saw: of workload Key,
// changing the inputs of ClusterQueue ClusterQueue. Apply records it (under
// the caller's lock).
type Event[K, Q comparable] struct {
	Key          K
	ClusterQueue Q
	Kind         Kind
	Apply        func()
}

// Listed is what the warm start read of a workload, to tell which early
// events its statistics already hold.
type Listed struct {
	Admitted, Finished, EvictedByPreemption bool
}

// alreadyListed reports whether the warm start's read already holds the
// event: a listed workload's arrival (its creation is seeded), its
// admission when listed admitted or finished, the release of its quota when
// listed without one, its finish when listed finished, its preemption when
// listed evicted by preemption.
func (ev Event[K, Q]) alreadyListed(listed map[K]Listed) bool {
	st, ok := listed[ev.Key]
	if !ok {
		return false
	}
	switch ev.Kind {
	case Admission:
		return st.Admitted || st.Finished
	case Release:
		return !st.Admitted
	case Finish:
		return st.Finished
	case Preemption:
		return st.EvictedByPreemption
	}
	return true
}

// MaxEvents bounds the events kept before the warm start; more are
// dropped (and counted): the statistics then miss them, nothing else.
const MaxEvents = 1 << 16

// Buffer applies events once warm, and keeps them until then. The zero
// value is cold and empty.
type Buffer[K, Q comparable] struct {
	events  []Event[K, Q]
	dropped int
	warmed  bool
}

// ApplyOrKeep applies ev now if the buffer is warm, else keeps it (or
// drops it, beyond MaxEvents), and says which: a kept event's Apply runs
// at Warm.
func (b *Buffer[K, Q]) ApplyOrKeep(ev Event[K, Q]) (applied bool) {
	if b.warmed {
		ev.Apply()
		return true
	}
	if len(b.events) >= MaxEvents {
		b.dropped++
		return false
	}
	b.events = append(b.events, ev)
	return false
}

// Len is how many events wait.
func (b *Buffer[K, Q]) Len() int { return len(b.events) }

// Warmed says whether Warm was called.
func (b *Buffer[K, Q]) Warmed() bool { return b.warmed }

// Warm applies the events kept, but those listed holds already (nil:
// none), forgets them and makes the buffer warm. It returns how many were
// kept, applied and dropped.
func (b *Buffer[K, Q]) Warm(listed map[K]Listed) (kept, applied, dropped int) {
	for _, ev := range b.events {
		if !ev.alreadyListed(listed) {
			ev.Apply()
			applied++
		}
	}
	kept, dropped = len(b.events), b.dropped
	b.events, b.dropped, b.warmed = nil, 0, true
	return kept, applied, dropped
}
