package estimator

import (
	"time"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"

	"github.com/kueue-waittime/kueue-waittime/pkg/cohortview"
	"github.com/kueue-waittime/kueue-waittime/pkg/convert"
)

// cohortView is what a ClusterQueue's roll takes from the rest of its
// cohort tree (see cohortview.View), and holderSource where a holder of its
// lent quota runs.
type (
	cohortView   = cohortview.View[kueue.ClusterQueueReference]
	holderSource = cohortview.Source[kueue.ClusterQueueReference]
)

// cohortViewOf is the cohort view of a snapshot's ClusterQueue with spec at
// now. One that does not reclaim waits for the borrowers' workloads to
// end; one that reclaims (reclaimWithinCohort) gets its quota back sooner,
// by preemption, which cohortview.View.ReclaimedHolders models on the
// view's holders.
func cohortViewOf(cqs *schdcache.ClusterQueueSnapshot, spec queueSpec, now time.Time) cohortView {
	v := cohortView{Capacity: convert.ClusterQueueCapacity(cqs)}
	switch spec.reclaimWithinCohort {
	case "", kueue.PreemptionPolicyNever:
	case kueue.PreemptionPolicyLowerPriority:
		v.Reclaim = cohortview.ReclaimLowerPriority
	default:
		v.Reclaim = cohortview.ReclaimAny
	}
	if lent := convert.LentQuota(cqs); len(lent) > 0 {
		v.Lent = lent
		v.Holders, v.Sources = convert.LentHolders(cqs, lent, now)
	}
	return v
}

// keepUnchangedCohortMembers takes out of recompute the ClusterQueues a
// refresh at now would recompute only because another member of their
// cohort tree changed (cohortInputs) whose cohort view in the snapshot cqs
// is the same as in their published part: every input of their roll is
// then what it was, and the published part is kept, as for a ClusterQueue
// without a cohort that nothing changed. An admission, release or quota
// change that moves what such a ClusterQueue can borrow, or what it has lent
// and to whom, still recomputes it.
func (e *Estimator) keepUnchangedCohortMembers(now time.Time, cqs map[kueue.ClusterQueueReference]*schdcache.ClusterQueueSnapshot,
	prev *Results, recompute map[kueue.ClusterQueueReference]recomputeCause) {
	var candidates []kueue.ClusterQueueReference
	for name, cause := range recompute {
		if part := prev.Part(name); cause == cohortInputs && part != nil && part.Cohort.Capacity != nil && cqs[name] != nil {
			candidates = append(candidates, name)
		}
	}
	if len(candidates) == 0 {
		return
	}
	var specs []queueSpec
	e.forRefresh(func(s *trackerState) { specs = s.Specs(candidates) })
	for i, name := range candidates {
		part := prev.Part(name)
		if cohortViewOf(cqs[name], specs[i], now).SameAs(part.Cohort, now, part.Model.At) {
			delete(recompute, name)
		}
	}
}
