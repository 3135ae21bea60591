package convert

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/resources"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// NominalFit tells whether workloads fit within a ClusterQueue's nominal
// quota (see Fits). Its zero value is ready; it reuses its sum of a
// workload's requests between calls, so a refresh asks it for many
// workloads without allocating. It is not safe for concurrent use.
type NominalFit struct {
	demand map[corev1.ResourceName]int64
	// add adds one request to demand: bound once, so that passing it to
	// Requests.ForEach does not allocate a closure per pod set.
	add func(corev1.ResourceName, int64)
}

// Fits reports whether a ClusterQueue's own quota has room now for info
// without borrowing: in every resource group the workload requests from,
// some flavor where its usage plus the workload's total request stays
// within nominal for each resource of the group it requests (unlimited
// nominal quota always has room). A resource that no group covers fails
// it.
//
// Only such a workload is an untried candidate (see engine.Candidate),
// timed by a first attempt: one that fits now by borrowing competes for
// the cohort's quota with the other ClusterQueues' heads and with the
// lenders' reclaims, and measured on mt-dra-cohort and mt-cohort-busy its
// first-attempt forecasts fell short of the wait (README "Lenders in
// cohorts").
func (n *NominalFit) Fits(cqs *schdcache.ClusterQueueSnapshot, info *workload.Info) bool {
	if n.demand == nil {
		demand := make(map[corev1.ResourceName]int64)
		n.demand = demand
		n.add = func(name corev1.ResourceName, v int64) {
			if v > 0 {
				demand[name] += v
			}
		}
	}
	demand := n.demand
	clear(demand)
	for _, ps := range info.TotalRequests {
		ps.Requests.ForEach(n.add)
	}
	covered := 0
	for _, rg := range cqs.ResourceGroups {
		requested := 0
		for r := range rg.CoveredResources {
			if _, ok := demand[r]; ok {
				requested++
			}
		}
		if requested == 0 {
			continue
		}
		covered += requested
		if !slices.ContainsFunc(rg.Flavors, func(f kueue.ResourceFlavorReference) bool {
			for r := range rg.CoveredResources {
				d, ok := demand[r]
				if !ok {
					continue
				}
				fr := resources.FlavorResource{Flavor: f, Resource: r}
				nominal := cqs.QuotaFor(fr).Nominal.Int64()
				if nominal != capacity.Unlimited && cqs.ResourceNode.Usage[fr].Int64()+d > nominal {
					return false
				}
			}
			return true
		}) {
			return false
		}
	}
	return covered == len(demand)
}
