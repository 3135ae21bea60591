package convert

import (
	"cmp"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/resources"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/cohortview"
	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
)

// LentQuota is the quota of a ClusterQueue that other ClusterQueues of its
// cohort hold now, per flavor-resource: −beyondNominal, where that is
// positive.
// Nothing for a ClusterQueue without a cohort or with unlimited quota.
func LentQuota(cqs *schdcache.ClusterQueueSnapshot) capacity.Quantities {
	if !cqs.HasParent() {
		return nil
	}
	var out capacity.Quantities
	for _, rg := range cqs.ResourceGroups {
		for _, f := range rg.Flavors {
			for r := range rg.CoveredResources {
				fr := resources.FlavorResource{Flavor: f, Resource: r}
				if cqs.QuotaFor(fr).Nominal.Int64() == capacity.Unlimited {
					continue
				}
				lent := -beyondNominal(cqs, fr)
				if lent <= 0 {
					continue
				}
				if out == nil {
					out = make(capacity.Quantities)
				}
				out[capacity.FlavorResource{Flavor: string(f), Resource: string(r)}] = lent
			}
		}
	}
	return out
}

// LentHolders returns the running workloads whose ends return lent quota:
// those of the ClusterQueues of the cohort tree that borrow in a
// flavor-resource lent — Kueue gives quota freed by a borrower to a
// ClusterQueue within its nominal quota before it lends it again — in
// ClusterQueue and workload name order, as many as cohortview.HolderSet
// takes.
func LentHolders(cqs *schdcache.ClusterQueueSnapshot, lent capacity.Quantities, now time.Time) ([]forecast.Running, []cohortview.Source[kueue.ClusterQueueReference]) {
	members := cqs.Parent().Root().SubtreeClusterQueues()
	slices.SortFunc(members, func(a, b *schdcache.ClusterQueueSnapshot) int { return cmp.Compare(a.Name, b.Name) })
	set := cohortview.NewHolderSet[kueue.ClusterQueueReference](lent)
	usages := NewRunningUsages()
	for _, m := range members {
		if m.Name == cqs.Name || !borrowsAny(m, lent) {
			continue
		}
		keys := make([]workload.Reference, 0, len(m.Workloads))
		for k := range m.Workloads {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if set.Full() {
				return set.Holders, set.Sources
			}
			info := m.Workloads[k]
			h := forecast.Running{Usage: usages.Of(info), MaxExecutionSeconds: MaxExecutionSeconds(info.Obj), Priority: PriorityOf(info.Obj)}
			if at, ok := AdmissionTime(info.Obj); ok {
				h.AgeSeconds = max(now.Sub(at).Seconds(), 0)
			}
			set.Add(h, cohortview.Source[kueue.ClusterQueueReference]{ClusterQueue: m.Name, Evicted: IsEvicted(info.Obj)})
		}
	}
	return set.Holders, set.Sources
}

// borrowsAny reports whether a ClusterQueue uses more than its nominal
// quota in some flavor-resource of lent.
func borrowsAny(cqs *schdcache.ClusterQueueSnapshot, lent capacity.Quantities) bool {
	for fr := range lent {
		if cqs.Borrowing(resources.FlavorResource{Flavor: kueue.ResourceFlavorReference(fr.Flavor), Resource: corev1.ResourceName(fr.Resource)}) {
			return true
		}
	}
	return false
}
