package convert

import (
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/kueue-waittime/kueue-waittime/pkg/stats"
)

// RefusedQuota tells whether wl carries QuotaReserved=False without an
// admission: the scheduler tried it and could not admit it (it writes that
// condition with the reason it found, at the first failure and whenever the
// reason changes), or a controller found it inadmissible.
func RefusedQuota(wl *kueue.Workload) bool {
	c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
	return c != nil && c.Status == metav1.ConditionFalse && wl.Status.Admission == nil
}

// SameQuotaReservedCondition tells whether a and b carry the same
// QuotaReserved condition (status, reason and message), or both none.
func SameQuotaReservedCondition(a, b *kueue.Workload) bool {
	ca := apimeta.FindStatusCondition(a.Status.Conditions, kueue.WorkloadQuotaReserved)
	cb := apimeta.FindStatusCondition(b.Status.Conditions, kueue.WorkloadQuotaReserved)
	if ca == nil || cb == nil {
		return ca == cb
	}
	return ca.Status == cb.Status && ca.Reason == cb.Reason && ca.Message == cb.Message
}

// ServiceSpan is a finished workload's service: from its quota reservation
// (looked up on before, then after, since a finish may clear it) to its
// Finished transition.
func ServiceSpan(before, after *kueue.Workload) (stats.Span, bool) {
	fin := apimeta.FindStatusCondition(after.Status.Conditions, kueue.WorkloadFinished)
	if fin == nil || fin.Status != metav1.ConditionTrue {
		return stats.Span{}, false
	}
	start, ok := AdmissionTime(after)
	if !ok {
		start, ok = AdmissionTime(before)
	}
	if !ok || fin.LastTransitionTime.Time.Before(start) {
		return stats.Span{}, false
	}
	return stats.Span{Start: start, End: fin.LastTransitionTime.Time}, true
}

func IsFinished(wl *kueue.Workload) bool {
	return apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished)
}

// PreemptedInClusterQueue reports whether a workload's Preempted condition
// says that a workload of its own ClusterQueue preempted it (Kueue sets it
// with the eviction, in the same update).
func PreemptedInClusterQueue(wl *kueue.Workload) bool {
	c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadPreempted)
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason == kueue.InClusterQueueReason
}

// IsEvicted reports whether a workload is being evicted, for any reason:
// it still holds its quota until its release.
func IsEvicted(wl *kueue.Workload) bool {
	return apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted)
}

func IsEvictedByPreemption(wl *kueue.Workload) bool {
	c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason == kueue.WorkloadEvictedByPreemption
}

// PolicyActs is whether a preemption policy preempts at all.
func PolicyActs(p kueue.PreemptionPolicy) bool {
	return p != "" && p != kueue.PreemptionPolicyNever
}

// IsAboutQuota tells whether a QuotaReserved reason says the workload waits
// for, or can never get, quota; no reason is a NoFit whose reason Kueue did
// not resolve (UnadmittedWorkloadsObservability disabled).
func IsAboutQuota(reason string) bool {
	return reason == "" ||
		reason == kueue.WorkloadQuotaReservedReasonWaitingForQuota ||
		reason == kueue.WorkloadQuotaReservedReasonExceedsMaxQuota ||
		reason == kueue.WorkloadQuotaReservedReasonTopologyPlacementFailed
}
