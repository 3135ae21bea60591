package estimator

import (
	"math"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
)

// reclaimDelays are the measured delays, in seconds, of a lender taking its
// lent quota back by preemption (reclaimWithinCohort): the scheduler tries
// the lender's head and evicts a borrower's workload, the eviction is
// written, the victim's job integration stops it and releases its quota,
// and the lender's workload is admitted in a later cycle.
type reclaimDelays struct {
	// decision is from now to the scheduler's eviction decision: the
	// lender's mean admission latency, one reaction of the scheduler, as
	// the roll's preemption within a ClusterQueue charges it.
	decision float64
	// writeLag is the lag of the eviction's sighting behind its write, as
	// the lender's admissions measure it (see queueStats.writeLag); the
	// write's own duration is not measured.
	writeLag float64
	// release is, per ClusterQueue of the holders, from an eviction by
	// preemption seen there to its quota's release seen; a ClusterQueue
	// not measured yet takes decision (a release takes about as long as
	// an admission).
	release map[kueue.ClusterQueueReference]float64
}

// releaseOf is the release delay of a holder's ClusterQueue.
func (d reclaimDelays) releaseOf(cq kueue.ClusterQueueReference) float64 {
	if r, ok := d.release[cq]; ok {
		return r
	}
	return d.decision
}

// reclaimedHolders returns the holders of a view's lent quota as its roll
// sees them: those its ClusterQueue can reclaim end at the latest when the
// reclaim returns their quota, the others when they end on their own. The
// view's holders are not modified.
//
// A holder is reclaimable under reclaimWithinCohort Any, and under
// LowerPriority when its priority is below topPriority, the highest of the
// lender's pending workloads (Kueue reclaims for a pending workload only
// from lower-priority ones). A reclaimable holder of ClusterQueue q that is
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
func reclaimedHolders(v cohortView, topPriority int32, d reclaimDelays) []forecast.Running {
	if v.reclaim == "" || len(v.holders) == 0 || len(v.sources) != len(v.holders) {
		return v.holders
	}
	out := make([]forecast.Running, len(v.holders))
	copy(out, v.holders)
	for i := range out {
		h, src := &out[i], v.sources[i]
		if v.reclaim == kueue.PreemptionPolicyLowerPriority && h.Priority >= topPriority {
			continue
		}
		bound := nonNegativeFinite(d.releaseOf(src.clusterQueue))
		if !src.evicted {
			bound += nonNegativeFinite(d.decision) + nonNegativeFinite(d.writeLag)
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
