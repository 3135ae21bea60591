package published

import (
	"slices"
	"time"
)

// NeedsRefresh says whether the published results r are to be recomputed
// at now (in part: see RecomputeSet): something was observed since
// (dirty); the oldest of them is maxStaleness old; or the earliest
// admission one of their P50s predicts has passed, so that "still pending"
// is news that changes the forecasts (the remaining service of what runs,
// the phase of the cycle). Without the last rule two replicas that refresh
// at different moments publish, for up to maxStaleness, forecasts of
// admissions that already failed to happen on one and not the other.
func NeedsRefresh[Q, R, K ~string, C any](dirty bool, now time.Time, r *Results[Q, R, K, C], maxStaleness time.Duration) bool {
	if dirty || r == nil || now.Sub(r.oldest) >= maxStaleness {
		return true
	}
	return r != nil && !r.firstDue.IsZero() && !now.Before(r.firstDue)
}

// Place is what decides, beside events and time, whether a refresh
// recomputes a ClusterQueue: the Root of its cohort tree (empty without a
// cohort) and its AllocatableResourceGeneration.
type Place[R ~string] struct {
	Root       R
	Generation int64
}

// Cause is why a refresh recomputes a ClusterQueue.
type Cause uint8

const (
	// OwnInputs: something of its own changed (an event, its generation
	// or cohort tree, the maximum staleness, an overdue P50), it has no
	// published results, or every ClusterQueue is recomputed.
	OwnInputs Cause = iota + 1
	// CohortInputs: only another ClusterQueue of its cohort tree changed,
	// which may or may not change what it can borrow or has lent.
	CohortInputs
)

// RecomputeSet says which ClusterQueues of places (the active ones) a
// refresh at now recomputes: all of them when all is set; otherwise those
// without published results, those an event changed (changed), those whose
// AllocatableResourceGeneration (quota, cohort tree, a workload's removal)
// or cohort tree changed since, those whose results are maxStaleness old
// and those with an overdue P50 (the rules of NeedsRefresh, per
// ClusterQueue) — and, since what a ClusterQueue can borrow depends on the
// usage of every ClusterQueue of its cohort tree, every ClusterQueue of a
// tree one of these is or was in, or one that disappeared was in. Each is
// mapped to why: OwnInputs for the rules above, CohortInputs for a member
// only its tree brings in (the caller may leave it out).
func RecomputeSet[Q, R, K ~string, C any](now time.Time, places map[Q]Place[R], prev *Results[Q, R, K, C],
	changed map[Q]struct{}, all bool, maxStaleness time.Duration) map[Q]Cause {
	out := make(map[Q]Cause, len(places))
	if all {
		for name := range places {
			out[name] = OwnInputs
		}
		return out
	}
	dirtyRoots := make(map[R]bool)
	for name, place := range places {
		q := prev.Part(name)
		_, evented := changed[name]
		if q == nil || evented || q.Generation != place.Generation || q.Root != place.Root ||
			now.Sub(q.Model.At) >= maxStaleness || (!q.FirstDue.IsZero() && !now.Before(q.FirstDue)) {
			out[name] = OwnInputs
			if place.Root != "" {
				dirtyRoots[place.Root] = true
			}
			if q != nil && q.Root != "" {
				dirtyRoots[q.Root] = true
			}
		}
	}
	if prev != nil {
		for name, slot := range prev.slots {
			if _, ok := places[name]; !ok && prev.parts[slot].Root != "" {
				dirtyRoots[prev.parts[slot].Root] = true
			}
		}
	}
	if len(dirtyRoots) > 0 {
		for name, place := range places {
			if _, ok := out[name]; ok {
				continue
			}
			if dirtyRoots[place.Root] {
				out[name] = CohortInputs
			} else if q := prev.Part(name); q != nil && dirtyRoots[q.Root] {
				out[name] = CohortInputs
			}
		}
	}
	return out
}

// DropMissing takes out of recompute and places the ClusterQueues that
// snapshot, taken to recompute them after places was listed, lacks
// (deleted or deactivated in between; a whole snapshot would leave them
// out too) and returns them, for the caller to mark changed so that the
// next refresh looks again.
func DropMissing[Q, R ~string, V any](recompute map[Q]Cause, places map[Q]Place[R], snapshot map[Q]V) []Q {
	var missing []Q
	for name := range recompute {
		if _, ok := snapshot[name]; !ok {
			missing = append(missing, name)
			delete(recompute, name)
			delete(places, name)
		}
	}
	return missing
}

// Next starts the results that follow prev: the parts of the
// ClusterQueues of places that are not to be recomputed are prev's, at the
// same slots; those to be recomputed get empty parts, returned as outputs
// for the caller to fill (and then Seal the results). ClusterQueues no
// longer in places (no longer active) are dropped; one new in places is
// added to recompute, as OwnInputs. Nothing in it is proportional to the
// pending workloads of the parts it reuses.
func Next[Q, R, K ~string, C any](at time.Time, prev *Results[Q, R, K, C], places map[Q]Place[R],
	recompute map[Q]Cause) (*Results[Q, R, K, C], map[Q]*Part[Q, R, C]) {
	next := &Results[Q, R, K, C]{at: at}
	kept := prev != nil && len(prev.slots) == len(places)
	if kept {
		for name := range places {
			if _, ok := prev.slots[name]; !ok {
				kept = false
				break
			}
		}
	}
	if kept {
		// The same ClusterQueues: the same slots, shared.
		next.slots = prev.slots
		next.parts = slices.Clone(prev.parts)
	} else {
		next.slots = make(map[Q]uint32, len(places))
		if prev != nil {
			next.parts = make([]*Part[Q, R, C], len(prev.parts))
			for name, slot := range prev.slots {
				if _, ok := places[name]; ok {
					next.slots[name], next.parts[slot] = slot, prev.parts[slot]
				}
			}
		}
		free := 0
		for name := range places {
			if _, ok := next.slots[name]; ok {
				continue
			}
			for free < len(next.parts) && next.parts[free] != nil {
				free++
			}
			if free == len(next.parts) {
				next.parts = append(next.parts, nil)
			}
			next.slots[name] = uint32(free)
			// A placeholder until the part is built below; a slot freed
			// by a dropped ClusterQueue is taken over here.
			next.parts[free] = &Part[Q, R, C]{}
			recompute[name] = OwnInputs
		}
	}
	outputs := make(map[Q]*Part[Q, R, C], len(recompute))
	for name, place := range places {
		if _, ok := recompute[name]; !ok {
			continue
		}
		slot := next.slots[name]
		// Sized by the caller, which knows how many are pending now.
		q := NewPart[Q, R, C](0)
		q.Root, q.Generation = place.Root, place.Generation
		next.parts[slot] = q
		outputs[name] = q
	}
	return next, outputs
}
