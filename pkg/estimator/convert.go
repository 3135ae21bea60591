package estimator

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
	out := &capacity.ClusterQueue{Name: string(cqs.Name), ResourceGroups: make([]capacity.ResourceGroup, 0, len(cqs.ResourceGroups))}
	for _, rg := range cqs.ResourceGroups {
		names := make([]string, 0, rg.CoveredResources.Len())
		for r := range rg.CoveredResources {
			names = append(names, string(r))
		}
		slices.Sort(names)
		g := capacity.ResourceGroup{Resources: names, Flavors: make([]capacity.FlavorQuotas, 0, len(rg.Flavors))}
		for _, f := range rg.Flavors {
			fq := capacity.FlavorQuotas{Name: string(f), Quotas: make([]capacity.Quota, len(names))}
			for i, r := range names {
				fq.Quotas[i] = quotaOf(cqs, resources.FlavorResource{Flavor: f, Resource: corev1.ResourceName(r)})
			}
			g.Flavors = append(g.Flavors, fq)
		}
		out.ResourceGroups = append(out.ResourceGroups, g)
	}
	return out
}

// quotaOf is the capacity model of one flavor-resource of a snapshot (see
// ClusterQueueCapacity).
func quotaOf(cqs *schdcache.ClusterQueueSnapshot, fr resources.FlavorResource) capacity.Quota {
	nominal := cqs.QuotaFor(fr).Nominal.Int64()
	potential := cqs.PotentialAvailable(fr).Int64()
	q := capacity.Quota{Nominal: nominal}
	switch {
	case potential == capacity.Unlimited && nominal != capacity.Unlimited:
		q.Borrowable = capacity.Unlimited
	case potential > nominal:
		q.Borrowable = potential - nominal
	}
	if q.Nominal == capacity.Unlimited || q.Borrowable == capacity.Unlimited {
		q.ExpectedBorrowable = q.Borrowable
	} else {
		q.ExpectedBorrowable = min(max(beyondNominal(cqs, fr), 0), q.Borrowable)
	}
	return q
}

// beyondNominal is what a ClusterQueue could hold now in one
// flavor-resource beyond its nominal quota: its usage plus what Kueue says
// is available to it, less nominal. Positive, it could borrow that much at
// this instant; negative, that much of its nominal quota is lent out and
// held by other ClusterQueues of its cohort.
func beyondNominal(cqs *schdcache.ClusterQueueSnapshot, fr resources.FlavorResource) int64 {
	return cqs.ResourceNode.Usage[fr].Int64() + cqs.Available(fr).Int64() - cqs.QuotaFor(fr).Nominal.Int64()
}

// workloadDemand converts a workload's pod sets to the pure model. Kueue's
// PodSetResources hold the pod set's total requests; the model takes
// per-pod requests and the count.
func workloadDemand(info *workload.Info) capacity.Workload {
	w := capacity.Workload{PodSets: make([]capacity.PodSet, 0, len(info.TotalRequests))}
	for _, ps := range info.TotalRequests {
		count := int64(ps.Count)
		perPod := make(map[string]int64)
		if ps.Requests != nil {
			ps.Requests.ForEach(func(name corev1.ResourceName, v int64) {
				if count > 0 {
					v /= count
				}
				perPod[string(name)] = v
			})
		}
		w.PodSets = append(w.PodSets, capacity.PodSet{Name: string(ps.Name), Count: count, Requests: perPod})
	}
	return w
}

// runningUsage is the quota an admitted workload holds, per flavor-resource.
func runningUsage(info *workload.Info) capacity.Quantities {
	out := make(capacity.Quantities)
	for fr, v := range info.FlavorResourceUsage() {
		out[capacity.FlavorResource{Flavor: string(fr.Flavor), Resource: string(fr.Resource)}] += v.Int64()
	}
	return out
}

// admissionTime is when the workload got its quota reservation: the last
// transition of its QuotaReserved condition to True; ok is false without it.
func admissionTime(wl *kueue.Workload) (time.Time, bool) {
	c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
	if c == nil || c.Status != "True" {
		return time.Time{}, false
	}
	return c.LastTransitionTime.Time, true
}

// queuedSince is when the workload's current wait began: its creation, or
// its last requeue (as Kueue's own admission wait time metric counts it).
func queuedSince(wl *kueue.Workload) time.Time {
	if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadRequeued); c != nil {
		return c.LastTransitionTime.Time
	}
	return wl.CreationTimestamp.Time
}

// maxExecutionSeconds is spec.maximumExecutionTimeSeconds, 0 when unset.
func maxExecutionSeconds(wl *kueue.Workload) float64 {
	if wl.Spec.MaximumExecutionTimeSeconds == nil || *wl.Spec.MaximumExecutionTimeSeconds <= 0 {
		return 0
	}
	return float64(*wl.Spec.MaximumExecutionTimeSeconds)
}

func policyOf(s kueue.QueueingStrategy) forecast.Policy {
	if s == kueue.StrictFIFO {
		return forecast.StrictFIFO
	}
	return forecast.BestEffortFIFO
}

// preemptionOf maps a ClusterQueue's withinClusterQueue policy to the
// roll's; anything else ("" or a value Kueue does not accept there) is
// Never, Kueue's default.
func preemptionOf(p kueue.PreemptionPolicy) forecast.PreemptionPolicy {
	switch p {
	case kueue.PreemptionPolicyLowerPriority:
		return forecast.PreemptionLowerPriority
	case kueue.PreemptionPolicyLowerOrNewerEqualPriority:
		return forecast.PreemptionLowerOrNewerEqualPriority
	}
	return forecast.PreemptionNever
}

// priorityOf is a workload's priority as Kueue orders it (0 for none).
func priorityOf(wl *kueue.Workload) int32 {
	if wl == nil {
		return 0
	}
	return priority.Priority(wl)
}
