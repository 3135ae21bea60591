package estimator

import (
	"slices"
	"time"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/resources"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
)

// cohortGroup is what one refresh forecasts together: a ClusterQueue
// without a cohort alone (root nil), or the ClusterQueues of one cohort
// tree, by name, that the refresh recomputes (recomputeSet recomputes a
// tree whole).
type cohortGroup struct {
	root    *schdcache.CohortSnapshot
	members []*schdcache.ClusterQueueSnapshot
}

// cohortGroups splits the ClusterQueues of outputs into cohortGroups, in a
// deterministic order.
func cohortGroups(cqs map[kueue.ClusterQueueReference]*schdcache.ClusterQueueSnapshot, outputs map[kueue.ClusterQueueReference]*queueOutput) []cohortGroup {
	names := make([]kueue.ClusterQueueReference, 0, len(outputs))
	for name := range outputs {
		names = append(names, name)
	}
	slices.Sort(names)
	var groups []cohortGroup
	byRoot := make(map[kueue.CohortReference]int)
	for _, name := range names {
		cq := cqs[name]
		if !cq.HasParent() {
			groups = append(groups, cohortGroup{members: []*schdcache.ClusterQueueSnapshot{cq}})
			continue
		}
		root := cq.Parent().Root()
		i, ok := byRoot[root.Name]
		if !ok {
			i = len(groups)
			byRoot[root.Name] = i
			groups = append(groups, cohortGroup{root: root})
		}
		groups[i].members = append(groups[i].members, cq)
	}
	return groups
}

// refreshCohort computes the models and forecasts of the ClusterQueues of
// one cohort tree into their outputs, rolled together
// (forecast.Forecaster.ForecastCohort): they share the quota the members
// lend, as Kueue's snapshot resolves it, instead of each counting today's
// borrowable quota for the whole horizon. A member without a service law
// has no forecast; its running workloads still hold their quota, for the
// horizon. If the joint roll fails, each member is rolled alone as
// refreshQueue does.
func (e *Estimator) refreshCohort(now time.Time, g cohortGroup, outputs map[kueue.ClusterQueueReference]*queueOutput, ledger *ledgerWriter) {
	defer e.recoverPanic("refreshCohort")
	refreshes := make([]*queueRefresh, len(g.members))
	cohort := forecast.Cohort{
		Members:   make([]forecast.CohortMember, len(g.members)),
		RootQuota: quantitiesOf(g.root.ResourceNode.SubtreeQuota),
	}
	rolled := false
	for i, cq := range g.members {
		r := e.prepareQueue(now, cq, outputs[cq.Name])
		refreshes[i] = r
		m := cohortMemberOf(cq)
		m.Queue = r.queue
		if r.queue.Service == nil {
			// Nothing to roll its own workloads with: they only hold
			// quota, to the horizon.
			hold, err := forecast.NewDeterministic(e.opts.horizon.Seconds())
			if err != nil {
				return
			}
			m.Queue.Service, m.Queue.Pending, m.Queue.Arrivals = hold, nil, nil
		}
		cohort.Members[i] = m
		rolled = rolled || r.rolled()
	}
	var estimates [][]forecast.Estimate
	if rolled {
		var err error
		estimates, err = e.forecaster.ForecastCohort(cohort, refreshes[0].rng)
		if err != nil {
			e.opts.log.V(4).Info("Wait time cohort forecast failed; rolling its ClusterQueues alone", "cohort", g.root.Name, "err", err)
			estimates = nil
		}
	}
	for i, r := range refreshes {
		var est []forecast.Estimate
		switch {
		case !r.rolled():
		case estimates != nil:
			est = estimates[i]
		default:
			var err error
			if est, err = e.forecaster.Forecast(r.queue, r.rng); err != nil {
				e.opts.log.V(4).Info("Wait time forecast failed", "clusterQueue", r.cqs.Name, "err", err)
				est = nil
			}
		}
		e.publishQueue(now, r, est, ledger)
	}
}

// cohortMemberOf is a ClusterQueue's quota in a joint roll: nominal quota,
// borrowing and lending limits per flavor-resource.
func cohortMemberOf(cq *schdcache.ClusterQueueSnapshot) forecast.CohortMember {
	m := forecast.CohortMember{Nominal: make(capacity.Quantities, len(cq.ResourceNode.Quotas))}
	for fr, q := range cq.ResourceNode.Quotas {
		k := flavorResourceOf(fr)
		m.Nominal[k] = q.Nominal.Int64()
		if q.BorrowingLimit != nil {
			if m.BorrowingLimit == nil {
				m.BorrowingLimit = make(capacity.Quantities)
			}
			m.BorrowingLimit[k] = q.BorrowingLimit.Int64()
		}
		if q.LendingLimit != nil {
			if m.LendingLimit == nil {
				m.LendingLimit = make(capacity.Quantities)
			}
			m.LendingLimit[k] = q.LendingLimit.Int64()
		}
	}
	return m
}

func quantitiesOf(q resources.FlavorResourceQuantities) capacity.Quantities {
	out := make(capacity.Quantities, len(q))
	for fr, v := range q {
		out[flavorResourceOf(fr)] = v.Int64()
	}
	return out
}

func flavorResourceOf(fr resources.FlavorResource) capacity.FlavorResource {
	return capacity.FlavorResource{Flavor: string(fr.Flavor), Resource: string(fr.Resource)}
}
