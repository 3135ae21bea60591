package convert

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/resources"
	"sigs.k8s.io/kueue/pkg/util/priority"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
)

// ClusterQueueCapacity converts a ClusterQueue snapshot into the pure
// capacity model: the one conversion of the estimator and of plan, so that
// both name the same bottleneck.
//
// A group's resources are in name order: the snapshot holds them as a set
// (the spec's order is gone), and a fixed order makes a k_eff tie name the
// same bottleneck everywhere. Flavors keep the spec's order, Kueue's
// preference. Nominal is Kueue's nominal quota; Borrowable is
// PotentialAvailable − nominal, which Kueue bounds by the borrowing and
// lending limits along the cohort tree, and Unlimited when the potential
// is Unlimited; ExpectedBorrowable is what the ClusterQueue could borrow at
// this instant (its usage plus Available, less nominal), the
// state-conditioned stand-in for E[B] of paper §3.5, and Borrowable when
// either is Unlimited. On the snapshot of an idle cohort it is Borrowable.
func ClusterQueueCapacity(cqs *schdcache.ClusterQueueSnapshot) *capacity.ClusterQueue {
	out := &capacity.ClusterQueue{}
	CapacityInto(out, cqs)
	return out
}

// CapacityInto writes ClusterQueueCapacity(cqs) into out, reusing the
// slices out already has (its groups, their resources and flavors, and the
// flavors' quotas): converting into the same out again allocates only where
// cqs has more of something than out ever held.
func CapacityInto(out *capacity.ClusterQueue, cqs *schdcache.ClusterQueueSnapshot) {
	out.Name = string(cqs.Name)
	out.ResourceGroups = capacity.Resized(out.ResourceGroups, len(cqs.ResourceGroups))
	for gi, rg := range cqs.ResourceGroups {
		g := &out.ResourceGroups[gi]
		g.Resources = g.Resources[:0]
		for r := range rg.CoveredResources {
			g.Resources = append(g.Resources, string(r))
		}
		slices.Sort(g.Resources)
		g.Flavors = capacity.Resized(g.Flavors, len(rg.Flavors))
		for fi, f := range rg.Flavors {
			fq := &g.Flavors[fi]
			fq.Name = string(f)
			fq.Quotas = capacity.Resized(fq.Quotas, len(g.Resources))
			for i, r := range g.Resources {
				fq.Quotas[i] = quotaOf(cqs, resources.FlavorResource{Flavor: f, Resource: corev1.ResourceName(r)})
			}
		}
	}
}

// quotaOf is the capacity model of one flavor-resource of a snapshot (see
// ClusterQueueCapacity and capacity.QuotaOf).
func quotaOf(cqs *schdcache.ClusterQueueSnapshot, fr resources.FlavorResource) capacity.Quota {
	return capacity.QuotaOf(cqs.QuotaFor(fr).Nominal.Int64(), cqs.PotentialAvailable(fr).Int64(), beyondNominal(cqs, fr))
}

// beyondNominal is what a ClusterQueue could hold now in one
// flavor-resource beyond its nominal quota: its usage plus what Kueue says
// is available to it, less nominal. Positive, it could borrow that much at
// this instant; negative, that much of its nominal quota is lent out and
// held by other ClusterQueues of its cohort.
func beyondNominal(cqs *schdcache.ClusterQueueSnapshot, fr resources.FlavorResource) int64 {
	return cqs.ResourceNode.Usage[fr].Int64() + cqs.Available(fr).Int64() - cqs.QuotaFor(fr).Nominal.Int64()
}

// RunningUsages hands out the usages of running workloads, one map per
// distinct usage since the last reset (see capacity.Interner). A
// workload's usage is the quota it holds per flavor-resource: what Kueue's
// Info.FlavorResourceUsage sums (each pod set's total request of a
// resource, under the flavor assigned to it), summed into a reused map
// directly rather than through Kueue's map first, then interned. A refresh
// of 1,000 ClusterQueues with 8 running workloads each allocated a map per
// workload, the most allocations of any step, and a published scene kept
// them all.
type RunningUsages struct {
	scratch  capacity.Quantities
	interned *capacity.Interner
	// flavors are the flavors of the pod set being summed, read by add;
	// add is bound once so that Requests.ForEach allocates nothing.
	flavors map[corev1.ResourceName]kueue.ResourceFlavorReference
	add     func(corev1.ResourceName, int64)
}

func NewRunningUsages() *RunningUsages {
	u := &RunningUsages{scratch: capacity.Quantities{}, interned: capacity.NewInterner()}
	u.add = func(r corev1.ResourceName, v int64) {
		u.scratch[capacity.FlavorResource{Flavor: string(u.flavors[r]), Resource: string(r)}] += v
	}
	return u
}

// of returns info's usage, shared with every running workload of the same
// usage since the last reset; the caller must not change it.
func (u *RunningUsages) Of(info *workload.Info) capacity.Quantities {
	clear(u.scratch)
	for _, ps := range info.TotalRequests {
		if ps.Requests == nil {
			continue
		}
		u.flavors = ps.Flavors
		ps.Requests.ForEach(u.add)
	}
	u.flavors = nil
	return u.interned.Intern(u.scratch)
}

// reset forgets the usages handed out, so that the next ClusterQueue's are
// its own and the scratch keeps none of them alive.
func (u *RunningUsages) Reset() { u.interned.Reset() }

// AdmissionTime is when the workload got its quota reservation: the last
// transition of its QuotaReserved condition to True; ok is false without it.
func AdmissionTime(wl *kueue.Workload) (time.Time, bool) {
	c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
	if c == nil || c.Status != "True" {
		return time.Time{}, false
	}
	return c.LastTransitionTime.Time, true
}

// QueuedSince is when the workload's current wait began: its creation, or
// its last requeue (as Kueue's own admission wait time metric counts it).
func QueuedSince(wl *kueue.Workload) time.Time {
	if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadRequeued); c != nil {
		return c.LastTransitionTime.Time
	}
	return wl.CreationTimestamp.Time
}

// MaxExecutionSeconds is spec.maximumExecutionTimeSeconds, 0 when unset.
func MaxExecutionSeconds(wl *kueue.Workload) float64 {
	if wl.Spec.MaximumExecutionTimeSeconds == nil || *wl.Spec.MaximumExecutionTimeSeconds <= 0 {
		return 0
	}
	return float64(*wl.Spec.MaximumExecutionTimeSeconds)
}

func PolicyOf(s kueue.QueueingStrategy) forecast.Policy {
	if s == kueue.StrictFIFO {
		return forecast.StrictFIFO
	}
	return forecast.BestEffortFIFO
}

// PreemptionOf maps a ClusterQueue's withinClusterQueue policy to the
// roll's; anything else ("" or a value Kueue does not accept there) is
// Never, Kueue's default.
func PreemptionOf(p kueue.PreemptionPolicy) forecast.PreemptionPolicy {
	switch p {
	case kueue.PreemptionPolicyLowerPriority:
		return forecast.PreemptionLowerPriority
	case kueue.PreemptionPolicyLowerOrNewerEqualPriority:
		return forecast.PreemptionLowerOrNewerEqualPriority
	}
	return forecast.PreemptionNever
}

// PriorityOf is a workload's priority as Kueue orders it (0 for none).
func PriorityOf(wl *kueue.Workload) int32 {
	if wl == nil {
		return 0
	}
	return priority.Priority(wl)
}
