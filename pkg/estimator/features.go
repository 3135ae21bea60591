package estimator

import (
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"

	"github.com/kueue-waittime/kueue-waittime/pkg/convert"
	"github.com/kueue-waittime/kueue-waittime/pkg/estimates"
)

// featureUse reads which of the features a queue model reports cqs uses:
// its preemption policies, cohort, flavors with a topology and admission
// checks from the snapshot, admissionScope from its spec, and the
// manager's fair sharing, admission fair sharing and waitForPodsReady from
// the options. An unset policy is Never, as Kueue defaults it.
func (e *Estimator) featureUse(cqs *schdcache.ClusterQueueSnapshot, admissionScope bool) estimates.FeatureUse {
	p := cqs.Preemption
	u := estimates.FeatureUse{
		PreemptsWithinClusterQueue: convert.PolicyActs(p.WithinClusterQueue),
		InCohort:                   cqs.HasParent(),
		ReclaimsWithinCohort:       convert.PolicyActs(p.ReclaimWithinCohort),
		BorrowsWithinCohort: p.BorrowWithinCohort != nil && p.BorrowWithinCohort.Policy != "" &&
			p.BorrowWithinCohort.Policy != kueue.BorrowWithinCohortPolicyNever,
		FairSharing:             e.opts.FairSharing,
		AdmissionFairSharing:    e.opts.AdmissionFairSharing && admissionScope,
		TopologyAwareScheduling: len(cqs.TASFlavors) > 0,
		AdmissionChecks:         len(cqs.AdmissionChecks) > 0,
		WaitForPodsReady:        e.opts.waitForPodsReady,
	}
	if u.InCohort {
		u.NestedCohort = cqs.Parent().HasParent()
	}
	return u
}
