package estimator

import (
	"cmp"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/resources"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
)

// maxLentHolders bounds the workloads whose ends a roll watches for a
// ClusterQueue's lent quota to come back, once their usage covers it: the
// what-if record keeps them until the next refresh, for every lender.
const maxLentHolders = 64

// lentQuota is the quota of a ClusterQueue that other ClusterQueues of its
// cohort hold now, per flavor-resource: −beyondNominal, where that is
// positive.
// Nothing for a ClusterQueue without a cohort or with unlimited quota.
func lentQuota(cqs *schdcache.ClusterQueueSnapshot) capacity.Quantities {
	if !cqs.HasParent() {
		return nil
	}
	var out capacity.Quantities
	for _, rg := range cqs.ResourceGroups {
		for _, f := range rg.Flavors {
			for r := range rg.CoveredResources {
				fr := resources.FlavorResource{Flavor: f, Resource: r}
				if cqs.QuotaFor(fr).Nominal.Int64() == capacity.Unlimited {
					continue
				}
				lent := -beyondNominal(cqs, fr)
				if lent <= 0 {
					continue
				}
				if out == nil {
					out = make(capacity.Quantities)
				}
				out[capacity.FlavorResource{Flavor: string(f), Resource: string(r)}] = lent
			}
		}
	}
	return out
}

// lentHolders returns the running workloads whose ends return lent quota:
// those of the ClusterQueues of the cohort tree that borrow in a
// flavor-resource lent — Kueue gives quota freed by a borrower to a
// ClusterQueue within its nominal quota before it lends it again — in
// ClusterQueue and workload name order: maxLentHolders of them, or more
// until their usage covers every flavor-resource lent (with less, some of
// the lent quota would never come back in the roll).
func lentHolders(cqs *schdcache.ClusterQueueSnapshot, lent capacity.Quantities, now time.Time) []forecast.Running {
	return cohortHolders(cqs, lent, now, func(m *schdcache.ClusterQueueSnapshot) bool { return borrowsAny(m, lent) })
}

// borrowableHolders returns the running workloads whose ends free quota
// the ClusterQueue could borrow then (held, per flavor-resource; see
// engine.Queue.BorrowableHolders): those of the other ClusterQueues of the
// cohort tree that had nothing pending at their last refresh (idle), which
// lend what their workloads free, in the order and number lentHolders
// takes them.
func borrowableHolders(cqs *schdcache.ClusterQueueSnapshot, held capacity.Quantities, now time.Time, idle func(kueue.ClusterQueueReference) bool) []forecast.Running {
	if !cqs.HasParent() || len(held) == 0 {
		return nil
	}
	return cohortHolders(cqs, held, now, func(m *schdcache.ClusterQueueSnapshot) bool { return idle(m.Name) })
}

// cohortHolders returns running workloads of the other ClusterQueues of
// cqs's cohort tree that include accepts, in ClusterQueue and workload
// name order: maxLentHolders of them, or more until their usage covers
// every flavor-resource of need.
func cohortHolders(cqs *schdcache.ClusterQueueSnapshot, need capacity.Quantities, now time.Time, include func(*schdcache.ClusterQueueSnapshot) bool) []forecast.Running {
	members := cqs.Parent().Root().SubtreeClusterQueues()
	slices.SortFunc(members, func(a, b *schdcache.ClusterQueueSnapshot) int { return cmp.Compare(a.Name, b.Name) })
	var out []forecast.Running
	uncovered := maps.Clone(need)
	covered := func() bool {
		for _, q := range uncovered {
			if q > 0 {
				return false
			}
		}
		return true
	}
	for _, m := range members {
		if m.Name == cqs.Name || !include(m) {
			continue
		}
		keys := make([]workload.Reference, 0, len(m.Workloads))
		for k := range m.Workloads {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if len(out) >= maxLentHolders && covered() {
				return out
			}
			info := m.Workloads[k]
			h := forecast.Running{Usage: runningUsage(info), MaxExecutionSeconds: maxExecutionSeconds(info.Obj), Priority: priorityOf(info.Obj)}
			for fr, q := range h.Usage {
				if _, ok := uncovered[fr]; ok {
					uncovered[fr] -= q
				}
			}
			if at, ok := admissionTime(info.Obj); ok {
				h.AgeSeconds = max(now.Sub(at).Seconds(), 0)
			}
			out = append(out, h)
		}
	}
	return out
}

// borrowsAny reports whether a ClusterQueue uses more than its nominal
// quota in some flavor-resource of lent.
func borrowsAny(cqs *schdcache.ClusterQueueSnapshot, lent capacity.Quantities) bool {
	for fr := range lent {
		if cqs.Borrowing(resources.FlavorResource{Flavor: kueue.ResourceFlavorReference(fr.Flavor), Resource: corev1.ResourceName(fr.Resource)}) {
			return true
		}
	}
	return false
}

// borrowableShare is the part of held (the borrowable quota of the cohort
// that others hold now) that comes back to ClusterQueue self, which has
// pending workloads pending: every ClusterQueue of the cohort with work
// pending at its last refresh (pendingAt) competes for freed quota, and
// each gets a share in proportion to its pending workloads. Nothing when
// self has nothing pending.
func borrowableShare(held capacity.Quantities, pending int, pendingAt map[kueue.ClusterQueueReference]int, self kueue.ClusterQueueReference) capacity.Quantities {
	if len(held) == 0 || pending <= 0 {
		return nil
	}
	total := pending
	for cq, n := range pendingAt {
		if cq != self && n > 0 {
			total += n
		}
	}
	out := make(capacity.Quantities, len(held))
	for fr, q := range held {
		if share := int64(float64(q) * float64(pending) / float64(total)); share > 0 {
			out[fr] = share
		}
	}
	return out
}
