package plan

import (
	"context"
	"fmt"
	"slices"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	utiltesting "sigs.k8s.io/kueue/pkg/util/testing"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/convert"
)

// queueState is one ClusterQueue as Kueue's scheduler snapshot sees it.
type queueState struct {
	spec *kueue.ClusterQueue
	// active is false when Kueue would not admit anything through the
	// ClusterQueue (missing flavors, stopped, cohort cycle…); reason then
	// says why, in Kueue's words.
	active bool
	reason string
	// capacity is the pure capacity model (nil when inactive).
	capacity *capacity.ClusterQueue
}

// snapshotNotes are remarks about what the in-memory cluster leaves out.
type snapshotNotes []string

// buildSnapshot loads the objects into Kueue's own scheduler cache, with a
// controller-runtime fake client as its (empty) object store, takes a
// scheduler snapshot, and reads each ClusterQueue's capacity from it:
// Nominal is QuotaFor(fr).Nominal and Borrowable is
// PotentialAvailable(fr) − Nominal, so cohort borrowing, borrowing limits
// and lending limits are Kueue's. Topology names and admission checks are
// dropped first: they gate admission on other objects (nodes, controllers)
// and do not change quotas.
func buildSnapshot(ctx context.Context, in *inputs) (map[string]*queueState, snapshotNotes, error) {
	log := logr.Discard()
	ctx = ctrl.LoggerInto(ctx, log)
	var notes snapshotNotes

	cache := schdcache.New(utiltesting.NewClientBuilder().Build())
	var topologyFlavors []string
	for _, rf := range in.flavors {
		rf = rf.DeepCopy()
		if rf.Spec.TopologyName != nil {
			rf.Spec.TopologyName = nil
			topologyFlavors = append(topologyFlavors, rf.Name)
		}
		cache.AddOrUpdateResourceFlavor(log, rf)
	}
	if len(topologyFlavors) > 0 {
		notes = append(notes, fmt.Sprintf("topology-aware scheduling is not modelled: the topology of ResourceFlavor(s) %v is ignored (quotas only)", topologyFlavors))
	}
	for _, c := range in.cohorts {
		if err := cache.AddOrUpdateCohort(c.DeepCopy()); err != nil {
			return nil, nil, cli.Usagef("Cohort %s: %v", c.Name, err)
		}
	}
	var withChecks []string
	for _, cq := range in.queues {
		cq = cq.DeepCopy()
		if cq.Spec.AdmissionChecksStrategy != nil {
			cq.Spec.AdmissionChecksStrategy = nil
			withChecks = append(withChecks, cq.Name)
		}
		if err := cache.AddClusterQueue(ctx, cq); err != nil {
			return nil, nil, cli.Usagef("ClusterQueue %s: %v", cq.Name, err)
		}
	}
	if len(withChecks) > 0 {
		notes = append(notes, fmt.Sprintf("admission checks are not modelled: those of ClusterQueue(s) %v are ignored (quotas only)", withChecks))
	}
	snap, err := cache.Snapshot(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("taking Kueue's scheduler snapshot: %w", err)
	}

	states := make(map[string]*queueState, len(in.queues))
	for _, cq := range in.queues {
		st := &queueState{spec: cq}
		cqs := snap.ClusterQueue(kueue.ClusterQueueReference(cq.Name))
		if cqs == nil {
			_, reason, msg := cache.ClusterQueueReadiness(kueue.ClusterQueueReference(cq.Name))
			st.reason = fmt.Sprintf("%s: %s", reason, msg)
		} else {
			st.active = true
			st.capacity = convert.ClusterQueueCapacity(cqs)
		}
		states[cq.Name] = st
	}
	return states, notes, nil
}

// capacityRows lists a capacity model flavor-resource by flavor-resource.
func capacityRows(cq *capacity.ClusterQueue) []FlavorResourceCapacity {
	var rows []FlavorResourceCapacity
	for _, g := range cq.ResourceGroups {
		for _, f := range g.Flavors {
			for i, r := range g.Resources {
				q := f.Quotas[i]
				rows = append(rows, FlavorResourceCapacity{
					Flavor:     f.Name,
					Resource:   r,
					Nominal:    capacity.FormatQuantity(r, q.Nominal),
					Borrowable: capacity.FormatQuantity(r, q.Borrowable),
					Potential:  capacity.FormatQuantity(r, q.Potential()),
				})
			}
		}
	}
	return rows
}

// sortedQueueNames returns the ClusterQueue names in order.
func sortedQueueNames(states map[string]*queueState) []string {
	names := make([]string, 0, len(states))
	for n := range states {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
