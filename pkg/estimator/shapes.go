package estimator

import (
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/resources"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// admittedDemand is the demand of an admitted workload as Kueue accounted
// it (its pod set assignments' usage, per pod, in Kueue's canonical units)
// and a key that equal demands share; ok is false for an admission with no
// usage to read.
func admittedDemand(a *kueue.Admission) (key string, demand capacity.Workload, ok bool) {
	if a == nil || len(a.PodSetAssignments) == 0 {
		return "", capacity.Workload{}, false
	}
	var b strings.Builder
	for _, psa := range a.PodSetAssignments {
		count := int64(1)
		if psa.Count != nil {
			count = int64(*psa.Count)
		}
		ps := capacity.PodSet{Name: string(psa.Name), Count: count, Requests: make(map[string]int64, len(psa.ResourceUsage))}
		names := make([]corev1.ResourceName, 0, len(psa.ResourceUsage))
		for name := range psa.ResourceUsage {
			names = append(names, name)
		}
		slices.Sort(names)
		b.WriteString(ps.Name)
		b.WriteByte('/')
		b.WriteString(strconv.FormatInt(count, 10))
		for _, name := range names {
			v := capacity.PerPod(resources.ResourceValue(name, psa.ResourceUsage[name]), count)
			ps.Requests[string(name)] = v
			b.WriteByte(' ')
			b.WriteString(string(name))
			b.WriteByte('=')
			b.WriteString(strconv.FormatInt(v, 10))
		}
		b.WriteByte(';')
		demand.PodSets = append(demand.PodSets, ps)
	}
	return b.String(), demand, true
}
