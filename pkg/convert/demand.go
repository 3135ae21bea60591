package convert

import (
	corev1 "k8s.io/api/core/v1"

	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// infoDemand is a Kueue workload's demand as capacity reads it
// (capacity.Demand): Kueue's TotalRequests hold each pod set's total
// requests, which capacity divides by the pod count. A refresh groups
// the pending and running workloads by demand class
// (capacity.Classes) and converts only a class's first workload.
type infoDemand workload.Info

// DemandOf is info's demand, read in place.
func DemandOf(info *workload.Info) *infoDemand { return (*infoDemand)(info) }

func (d *infoDemand) PodSets() int { return len(d.TotalRequests) }

func (d *infoDemand) PodSet(i int) (string, int64, int) {
	ps := &d.TotalRequests[i]
	if ps.Requests == nil {
		return string(ps.Name), int64(ps.Count), 0
	}
	return string(ps.Name), int64(ps.Count), ps.Requests.Len()
}

func (d *infoDemand) EachRequest(i int, f func(corev1.ResourceName, int64)) {
	if r := d.TotalRequests[i].Requests; r != nil {
		r.ForEach(f)
	}
}

// Classes are the demand classes of one refreshed ClusterQueue's
// workloads (see capacity.Classes).
type Classes = capacity.Classes[corev1.ResourceName]

func NewClasses() *Classes { return capacity.NewClasses[corev1.ResourceName]() }

// WorkloadDemand converts a workload's pod sets to the pure model (see
// capacity.DemandOf).
func WorkloadDemand(info *workload.Info) capacity.Workload { return capacity.DemandOf(DemandOf(info)) }

// Converter converts workloads' demands into reused values (see
// capacity.Converter).
type Converter = capacity.Converter[corev1.ResourceName]

func NewConverter() *Converter { return capacity.NewConverter[corev1.ResourceName]() }
