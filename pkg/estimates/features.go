package estimates

// FeatureName names a Kueue feature that bears on how long a ClusterQueue's
// workloads wait.
type FeatureName string

// The features a [QueueModel] reports, when the ClusterQueue uses them.
const (
	// FeaturePreemption is preemption within the ClusterQueue
	// (withinClusterQueue other than Never): a higher priority workload
	// evicts lower ones.
	FeaturePreemption FeatureName = "Preemption"
	// FeatureCohortBorrowing is borrowing unused quota from the other
	// ClusterQueues of the cohort.
	FeatureCohortBorrowing FeatureName = "CohortBorrowing"
	// FeatureHierarchicalCohorts is a cohort nested in another.
	FeatureHierarchicalCohorts FeatureName = "HierarchicalCohorts"
	// FeatureReclaimWithinCohort is a lender preempting the holders of its
	// lent quota (reclaimWithinCohort other than Never).
	FeatureReclaimWithinCohort FeatureName = "ReclaimWithinCohort"
	// FeatureBorrowWithinCohort is preempting lower priority workloads of
	// the cohort in order to borrow (borrowWithinCohort other than Never).
	FeatureBorrowWithinCohort FeatureName = "BorrowWithinCohort"
	// FeatureFairSharing is fair sharing's admission order between the
	// ClusterQueues of a cohort.
	FeatureFairSharing FeatureName = "FairSharing"
	// FeatureAdmissionFairSharing is admission fair sharing's order between
	// the LocalQueues of the ClusterQueue.
	FeatureAdmissionFairSharing FeatureName = "AdmissionFairSharing"
	// FeatureTopologyAwareScheduling is a flavor with a topology: its
	// workloads are placed in the topology's domains.
	FeatureTopologyAwareScheduling FeatureName = "TopologyAwareScheduling"
	// FeatureAdmissionChecks is admission checks that a workload passes
	// between its quota reservation and its admission.
	FeatureAdmissionChecks FeatureName = "AdmissionChecks"
	// FeatureWaitForPodsReady is the manager's waitForPodsReady: an admitted
	// workload whose pods are not ready in time is evicted and requeued.
	FeatureWaitForPodsReady FeatureName = "WaitForPodsReady"
)

// Coverage is how far the estimates model a feature.
type Coverage string

const (
	// Modelled: the forecast rolls the feature as Kueue applies it.
	Modelled Coverage = "Modelled"
	// Approximated: the forecast accounts for the feature in a simpler
	// form, which Feature.Note states.
	Approximated Coverage = "Approximated"
	// NotModelled: the forecast ignores the feature; its estimates are then
	// approximations outside the accuracy claims.
	NotModelled Coverage = "NotModelled"
)

// Feature is a Kueue feature a ClusterQueue uses, how far its estimates
// model it, and what they assume about it.
type Feature struct {
	Name     FeatureName
	Coverage Coverage
	// Note says in one sentence what the estimates assume.
	Note string
}

// FeatureUse is what a ClusterQueue and the manager use of the features
// a [QueueModel] reports.
type FeatureUse struct {
	// PreemptsWithinClusterQueue: withinClusterQueue is not Never.
	PreemptsWithinClusterQueue bool
	// InCohort: the ClusterQueue has a cohort; NestedCohort: that cohort
	// has a parent cohort.
	InCohort, NestedCohort bool
	// ReclaimsWithinCohort and BorrowsWithinCohort: the ClusterQueue's
	// reclaimWithinCohort and borrowWithinCohort policies are not Never.
	ReclaimsWithinCohort, BorrowsWithinCohort bool
	// FairSharing: the manager's fair sharing is on (it orders only
	// ClusterQueues in a cohort). AdmissionFairSharing: the manager's
	// admission fair sharing is on and the ClusterQueue's
	// admissionScope.admissionMode is UsageBasedAdmissionFairSharing.
	FairSharing, AdmissionFairSharing bool
	// AdmissionFairSharingRolled: the roll was given the LocalQueues'
	// usage (engine.Queue.AdmissionFairSharing), so that it orders as
	// admission fair sharing does; that model holds only where the
	// ClusterQueue does not preempt within itself (the roll of a
	// preempting ClusterQueue orders by priority).
	AdmissionFairSharingRolled bool
	// TopologyAwareScheduling: one of the ClusterQueue's flavors has a
	// topology.
	TopologyAwareScheduling bool
	// AdmissionChecks: the ClusterQueue has admission checks.
	AdmissionChecks bool
	// WaitForPodsReady: the manager's waitForPodsReady is on.
	WaitForPodsReady bool
}

// UnmodelledOrdering is the admission order of the manager's that the
// ClusterQueue of u is subject to and the forecast does not model (see
// QueueModel.UnmodelledOrdering): admission fair sharing's unless the roll
// models it (see rollsAdmissionFairSharing), else fair sharing's in a
// cohort (between ClusterQueues, which a modelled admission fair sharing
// within the ClusterQueue leaves unmodelled), else none (""). It names the ordering of the
// FeatureAdmissionFairSharing or FeatureFairSharing that Features lists.
func (u FeatureUse) UnmodelledOrdering() Ordering {
	switch {
	case u.AdmissionFairSharing && !u.rollsAdmissionFairSharing():
		return OrderingAdmissionFairSharing
	case u.InCohort && u.FairSharing:
		return OrderingFairSharing
	}
	return ""
}

// rollsAdmissionFairSharing says that the roll orders the ClusterQueue as
// admission fair sharing does: it was given the LocalQueues' usage and
// does not preempt within the ClusterQueue.
func (u FeatureUse) rollsAdmissionFairSharing() bool {
	return u.AdmissionFairSharingRolled && !u.PreemptsWithinClusterQueue
}

// Features lists the features of u in use, in the order of the
// FeatureName constants, each with its coverage: nil when none is in use.
// The coverage is that of this version of the estimator; a feature whose
// coverage changes changes here.
func Features(u FeatureUse) []Feature {
	var out []Feature
	add := func(use bool, name FeatureName, c Coverage, note string) {
		if use {
			out = append(out, Feature{Name: name, Coverage: c, Note: note})
		}
	}
	add(u.PreemptsWithinClusterQueue, FeaturePreemption, Modelled,
		"the forecast admits higher priorities first and evicts lower ones to make room, as the scheduler does")
	add(u.InCohort, FeatureCohortBorrowing, Approximated,
		"the a-priori figures count the nominal quota, with the borrowing expected now beside them; the forecast borrows what the cohort leaves unused at the moment of the estimate")
	add(u.InCohort && u.NestedCohort, FeatureHierarchicalCohorts, Approximated,
		"limits at every level of the cohort tree bound what can be borrowed; a quota release is credited to the direct parent cohort only")
	add(u.InCohort && u.ReclaimsWithinCohort, FeatureReclaimWithinCohort, Approximated,
		"a workload that needs the quota it lent waits for the borrowers holding it to be evicted")
	add(u.InCohort && u.BorrowsWithinCohort, FeatureBorrowWithinCohort, NotModelled,
		"the forecast does not preempt other ClusterQueues' workloads to borrow")
	add(u.InCohort && u.FairSharing, FeatureFairSharing, NotModelled,
		"the forecast admits in the ClusterQueue's queueing strategy, not by the cohort's dominant resource shares")
	add(u.AdmissionFairSharing && u.rollsAdmissionFairSharing(), FeatureAdmissionFairSharing, Approximated,
		"the forecast admits by the LocalQueues' usage, which grows with each admission and its entry penalty and decays with the half-life, as Kueue does; future arrivals have no LocalQueue and pass by priority only")
	add(u.AdmissionFairSharing && !u.rollsAdmissionFairSharing(), FeatureAdmissionFairSharing, NotModelled,
		"the forecast admits in the ClusterQueue's queueing strategy, not by the LocalQueues' usage")
	add(u.TopologyAwareScheduling, FeatureTopologyAwareScheduling, Approximated,
		"a workload no topology domain can ever hold is Unfeasible; waits count the flavor's whole quota, not each domain's")
	add(u.AdmissionChecks, FeatureAdmissionChecks, NotModelled,
		"the wait ends at the quota reservation; the admission checks' time comes on top")
	add(u.WaitForPodsReady, FeatureWaitForPodsReady, NotModelled,
		"the wait ends at the quota reservation; evictions and requeues after a pods-ready timeout are not forecast")
	return out
}
