package estimator

import (
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/positions"
)

// workloadName is a workload's namespace and name, the parts of its
// workload.Reference ("namespace/name"). A refresh indexes every pending
// workload of the ClusterQueues it recomputes by it: made of the object's
// own strings, it costs no string building or allocation per workload, as
// joining the two into a Reference would (100,000 of them a refresh at
// 100,000 pending).
type workloadName = positions.Name

func nameOf(wl *kueue.Workload) workloadName {
	return workloadName{Namespace: wl.Namespace, Name: wl.Name}
}

// nameFromReference splits a Reference into its namespace and name (see
// positions.NameOfKey).
func nameFromReference(key workload.Reference) workloadName { return positions.NameOfKey(key) }

// referenceOf joins n into its Reference (one allocation).
func referenceOf(n workloadName) workload.Reference {
	return workload.NewReference(n.Namespace, n.Name)
}

// appendReference appends n's Reference to buf: a map lookup by
// workload.Reference(buf) then needs no string of its own.
func appendReference(buf []byte, n workloadName) []byte { return positions.AppendKey(buf, n) }
