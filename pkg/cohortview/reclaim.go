package cohortview

import (
	"math"

	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
)

// Delays are the measured delays, in seconds, of a lender taking its lent
// quota back by preemption (reclaimWithinCohort): the scheduler tries the
// lender's head and evicts a borrower's workload, the eviction is written,
// the victim's job integration stops it and releases its quota, and the
// lender's workload is admitted in a later cycle.
type Delays[Q comparable] struct {
	// Decision is from now to the scheduler's eviction decision: the
	// lender's mean admission latency, one reaction of the scheduler, as
	// the roll's preemption within a ClusterQueue charges it.
	Decision float64
	// WriteLag is the lag of the eviction's sighting behind its write, as
	// the lender's admissions measure it; the write's own duration is not
	// measured.
	WriteLag float64
	// Release is, per ClusterQueue of the holders, from an eviction by
	// preemption seen there to its quota's release seen; a ClusterQueue
	// not measured yet takes Decision (a release takes about as long as
	// an admission).
	Release map[Q]float64
}

// releaseOf is the release delay of a holder's ClusterQueue.
func (d Delays[Q]) releaseOf(cq Q) float64 {
	if r, ok := d.Release[cq]; ok {
		return r
	}
	return d.Decision
}

// ReclaimedHolders returns the holders of the view's lent quota as its
// roll sees them: those its ClusterQueue can reclaim end at the latest
// when the reclaim returns their quota, the others when they end on their
// own. The view's holders are not modified.
//
// A holder is reclaimable under ReclaimAny, and under ReclaimLowerPriority
// when its priority is below topPriority, the highest of the lender's
// pending workloads (Kueue reclaims for a pending workload only from
// lower-priority ones). A reclaimable holder of ClusterQueue q that is
// running ends within
//
//	bound = decision + writeLag + release(q)
//
// seconds from now, and within release(q) when it is already evicted (the
// decision and its write are past). The roll then admits the lender's
// workload one admission latency after the quota comes back, as after any
// release. Its bound on the execution is MaxExecutionSeconds = AgeSeconds +
// bound (at least the smallest positive number: 0 means no bound), or the
// holder's own when that is sooner. Negative or non-finite delays count as
// 0.
//
// Every holder is bounded from now, as if the lender needed all it lent at
// once: a workload of the lender that would need the quota only later has
// it back sooner than Kueue would reclaim it then.
func (v View[Q]) ReclaimedHolders(topPriority int32, d Delays[Q]) []forecast.Running {
	if v.Reclaim == NoReclaim || len(v.Holders) == 0 || len(v.Sources) != len(v.Holders) {
		return v.Holders
	}
	out := make([]forecast.Running, len(v.Holders))
	copy(out, v.Holders)
	for i := range out {
		h, src := &out[i], v.Sources[i]
		if v.Reclaim == ReclaimLowerPriority && h.Priority >= topPriority {
			continue
		}
		bound := nonNegativeFinite(d.releaseOf(src.ClusterQueue))
		if !src.Evicted {
			bound += nonNegativeFinite(d.Decision) + nonNegativeFinite(d.WriteLag)
		}
		// MaxExecutionSeconds 0 means no bound: a holder admitted now
		// and reclaimed at once gets the smallest positive one.
		end := max(nonNegativeFinite(h.AgeSeconds)+bound, math.SmallestNonzeroFloat64)
		if h.MaxExecutionSeconds > 0 && h.MaxExecutionSeconds < end {
			continue
		}
		h.MaxExecutionSeconds = end
	}
	return out
}

// nonNegativeFinite is x, or 0 when x is negative, NaN or infinite.
func nonNegativeFinite(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 1) {
		return 0
	}
	return x
}
