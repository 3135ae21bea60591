package estimator

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

// demandOf is info's demand, read in place.
func demandOf(info *workload.Info) *infoDemand { return (*infoDemand)(info) }

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

// demandClasses are the demand classes of one refreshed ClusterQueue's
// workloads (see capacity.Classes).
type demandClasses = capacity.Classes[corev1.ResourceName]

func newDemandClasses() *demandClasses { return capacity.NewClasses[corev1.ResourceName]() }

// workloadDemand converts a workload's pod sets to the pure model (see
// capacity.DemandOf).
func workloadDemand(info *workload.Info) capacity.Workload { return capacity.DemandOf(demandOf(info)) }

// demandConverter converts workloads' demands into reused values (see
// capacity.Converter).
type demandConverter = capacity.Converter[corev1.ResourceName]

func newDemandConverter() *demandConverter { return capacity.NewConverter[corev1.ResourceName]() }
