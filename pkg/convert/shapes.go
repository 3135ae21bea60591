package convert

import (
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/resources"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// AdmittedDemand is the demand of an admitted workload as Kueue accounted
// it (its pod set assignments' usage, per pod, in Kueue's canonical units)
// and a key that equal demands share (capacity.Workload.ShapeKey); ok is
// false for an admission with no usage to read.
func AdmittedDemand(a *kueue.Admission) (key string, demand capacity.Workload, ok bool) {
	if a == nil || len(a.PodSetAssignments) == 0 {
		return "", capacity.Workload{}, false
	}
	for _, psa := range a.PodSetAssignments {
		count := int64(1)
		if psa.Count != nil {
			count = int64(*psa.Count)
		}
		ps := capacity.PodSet{Name: string(psa.Name), Count: count, Requests: make(map[string]int64, len(psa.ResourceUsage))}
		for name, q := range psa.ResourceUsage {
			ps.Requests[string(name)] = capacity.PerPod(resources.ResourceValue(name, q), count)
		}
		demand.PodSets = append(demand.PodSets, ps)
	}
	return demand.ShapeKey(), demand, true
}
