package queuestats

import (
	"time"
)

// Admission is what one admission into a ClusterQueue tells its
// statistics: when it was seen (At), when the wait it ended began
// (QueuedSince), when the workload was seen arriving (Arrived, if
// HasArrival) and whether it was untried then (no refusal of quota seen),
// its Priority, and the last release of quota in the ClusterQueue or its
// cohort (LastRelease).
type Admission struct {
	At, QueuedSince time.Time
	Arrived         time.Time
	HasArrival      bool
	Untried         bool
	Priority        int32
	LastRelease     time.Time
}

// observeAdmission updates the statistics s of a ClusterQueue, and those
// every ClusterQueue pools, for admission a: the wait (EMA baseline), the
// admission rate; the admission latency after quota was freed; the
// first-attempt latency of an untried workload that arrived after the
// last release (it waited for no quota); and, after a preemption in the
// ClusterQueue, the preemption delay and, for a preemptor of a higher
// priority than the victim that arrived before the preemption, the
// scheduler's reaction.
func (sh *Shared) observeAdmission(s *Queue, a Admission) {
	now := a.At
	s.Waits.Observe(max(now.Sub(a.QueuedSince), 0).Seconds())
	s.Admissions.ObserveAt(now)
	if !s.FreedAt.IsZero() {
		if d := now.Sub(s.FreedAt); d >= 0 {
			sh.ObserveAdmissionLatency(s, now, d.Seconds())
		}
		s.FreedAt = time.Time{}
	}
	if a.HasArrival && a.Untried && !a.LastRelease.After(a.Arrived) {
		if d := now.Sub(a.Arrived); d >= 0 {
			sh.ObserveFirstAttemptLatency(s, now, d.Seconds())
		}
	}
	if !s.PreemptedAt.IsZero() {
		if d := now.Sub(s.PreemptedAt); d >= 0 {
			s.PreemptionDelay.Observe(d.Seconds())
			s.PreemptionDelays.ObserveAt(now, d.Seconds())
		}
		if a.HasArrival && a.Arrived.Before(s.PreemptedAt) && a.Priority > s.PreemptedPriority {
			s.PreemptionReaction.ObserveAt(now, s.PreemptedAt.Sub(a.Arrived).Seconds())
		}
		s.PreemptedAt = time.Time{}
	}
}

// ObserveCoverage feeds whether a scored workload's wait fell within its
// published P50 and P90 (each if it had one) into the realized coverage
// of s.
func (s *Queue) ObserveCoverage(at time.Time, hasP50, withinP50, hasP90, withinP90 bool) {
	if hasP50 {
		s.P50Hits.ObserveAt(at, hit(withinP50))
	}
	if hasP90 {
		s.P90Hits.ObserveAt(at, hit(withinP90))
	}
}

func hit(ok bool) float64 {
	if ok {
		return 1
	}
	return 0
}
