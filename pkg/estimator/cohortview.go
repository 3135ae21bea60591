package estimator

import (
	"math"
	"reflect"
	"slices"
	"time"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
)

// cohortView is what a ClusterQueue's roll takes from the rest of its
// cohort tree: its capacity model (nominal quota, what it could borrow at
// most and at this instant), the quota it has lent and the running
// workloads whose ends return it, and whether it takes that quota back by
// preemption. Everything else a roll reads is the ClusterQueue's own and
// changes only with its own events, spec or generation.
type cohortView struct {
	capacity *capacity.ClusterQueue
	lent     capacity.Quantities
	holders  []forecast.Running
	// sources says, holder by holder, where each runs.
	sources []holderSource
	// reclaim is the ClusterQueue's reclaimWithinCohort, "" when it does
	// not reclaim (Never).
	reclaim kueue.PreemptionPolicy
}

// holderSource is the ClusterQueue of a holder of lent quota, and whether
// it was already evicted when the view was taken (a reclaim under way).
type holderSource struct {
	clusterQueue kueue.ClusterQueueReference
	evicted      bool
}

// cohortViewOf is the cohort view of a snapshot's ClusterQueue with spec at
// now. One that does not reclaim waits for the borrowers' workloads to
// end; one that reclaims (reclaimWithinCohort) gets its quota back sooner,
// by preemption, which reclaimedHolders models on the view's holders.
func cohortViewOf(cqs *schdcache.ClusterQueueSnapshot, spec queueSpec, now time.Time) cohortView {
	v := cohortView{capacity: ClusterQueueCapacity(cqs)}
	if reclaims := spec.reclaimWithinCohort; reclaims != kueue.PreemptionPolicyNever {
		v.reclaim = reclaims
	}
	if lent := lentQuota(cqs); len(lent) > 0 {
		v.lent = lent
		v.holders, v.sources = lentHolders(cqs, lent, now)
	}
	return v
}

// holderAdmissionTolerance is how far apart two holders' admission
// instants (the view's time less the holder's age) may be and still be the
// same workload's: ages are float seconds from whole timestamps.
const holderAdmissionTolerance = time.Millisecond

// sameAs reports whether view v taken at vAt and view w taken at wAt are the
// same inputs to a roll: equal capacity models and lent quota, and the same
// holders in the same order (usage, limit and priority equal, admitted at
// the same instant). A view without a capacity model (never taken) is the
// same as no other.
func (v cohortView) sameAs(w cohortView, vAt, wAt time.Time) bool {
	if v.capacity == nil || w.capacity == nil || !reflect.DeepEqual(v.capacity, w.capacity) ||
		!reflect.DeepEqual(v.lent, w.lent) || len(v.holders) != len(w.holders) ||
		v.reclaim != w.reclaim || !slices.Equal(v.sources, w.sources) {
		return false
	}
	for i := range v.holders {
		a, b := v.holders[i], w.holders[i]
		if !reflect.DeepEqual(a.Usage, b.Usage) || a.MaxExecutionSeconds != b.MaxExecutionSeconds || a.Priority != b.Priority {
			return false
		}
		admittedA := vAt.Add(-time.Duration(a.AgeSeconds * float64(time.Second)))
		admittedB := wAt.Add(-time.Duration(b.AgeSeconds * float64(time.Second)))
		if d := admittedA.Sub(admittedB); math.Abs(float64(d)) > float64(holderAdmissionTolerance) {
			return false
		}
	}
	return true
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
		if part := prev.Part(name); cause == cohortInputs && part != nil && part.Cohort.capacity != nil && cqs[name] != nil {
			candidates = append(candidates, name)
		}
	}
	if len(candidates) == 0 {
		return
	}
	specs := e.specsOf(candidates)
	for i, name := range candidates {
		part := prev.Part(name)
		if cohortViewOf(cqs[name], specs[i], now).sameAs(part.Cohort, now, part.Model.At) {
			delete(recompute, name)
		}
	}
}

// specsOf returns the specs of the named ClusterQueues, in order.
func (e *Estimator) specsOf(names []kueue.ClusterQueueReference) []queueSpec {
	defer e.lockForRefresh().unlock()
	specs := make([]queueSpec, len(names))
	for i, name := range names {
		specs[i] = e.specs[name]
	}
	return specs
}
