package capacity

import "github.com/google/go-cmp/cmp"

// Test helpers: units and compact constructors.

const (
	mi int64 = 1 << 20
	gi int64 = 1 << 30
)

func cores(n int64) int64 { return n * 1000 }

func nominal(n int64) Quota { return Quota{Nominal: n} }

func flavor(name string, quotas ...Quota) FlavorQuotas {
	return FlavorQuotas{Name: name, Quotas: quotas}
}

func group(resources []string, flavors ...FlavorQuotas) ResourceGroup {
	return ResourceGroup{Resources: resources, Flavors: flavors}
}

func cq(groups ...ResourceGroup) *ClusterQueue {
	return &ClusterQueue{Name: "test", ResourceGroups: groups}
}

func res(names ...string) []string { return names }

func one(requests map[string]int64) Workload {
	return Workload{PodSets: []PodSet{{Name: "main", Count: 1, Requests: requests}}}
}

func podSet(name string, count int64, requests map[string]int64) PodSet {
	return PodSet{Name: name, Count: count, Requests: requests}
}

func workload(podSets ...PodSet) Workload { return Workload{PodSets: podSets} }

// fitsAssignments checks a Quotable classification independently of the
// search: every touched (pod set, group) has exactly one assignment and the
// accumulated demand per flavor-resource fits the potential.
func fitsAssignments(q *ClusterQueue, w Workload, c Classification) (bool, string) {
	usage := map[FlavorResource]int64{}
	assigned := map[[2]int]string{}
	for _, a := range c.Assignments {
		key := [2]int{a.PodSet, a.Group}
		if _, dup := assigned[key]; dup {
			return false, "duplicate assignment"
		}
		assigned[key] = a.Flavor
	}
	for p, ps := range w.PodSets {
		if ps.Count <= 0 {
			continue
		}
		for g, grp := range q.ResourceGroups {
			touched := false
			for _, r := range grp.Resources {
				if demandOf(q, ps, r) > 0 {
					touched = true
				}
			}
			f, ok := assigned[[2]int{p, g}]
			if touched != ok && !c.Unproven {
				return false, "assignment set does not match touched groups"
			}
			if !ok {
				continue
			}
			for _, r := range grp.Resources {
				fr := FlavorResource{Flavor: f, Resource: r}
				usage[fr] = saturatingAdd(usage[fr], demandOf(q, ps, r))
			}
		}
	}
	for fr, u := range usage {
		if exceeds(u, q.Potential(fr)) {
			return false, "usage exceeds potential in " + fr.String()
		}
	}
	return true, ""
}

// demandOf is Count × request (or Count for covered pods), written
// independently of podSetDemand.
func demandOf(q *ClusterQueue, ps PodSet, r string) int64 {
	if ps.Count <= 0 {
		return 0
	}
	if r == PodsResource {
		if q.Covers(PodsResource) {
			return ps.Count
		}
		return 0
	}
	v := ps.Requests[r]
	if v <= 0 {
		return 0
	}
	return saturatingMul(ps.Count, v)
}

// bruteForceQuotable enumerates every assignment of pod sets to flavors,
// group by group, and reports whether one fits. Exponential: small inputs
// only.
func bruteForceQuotable(q *ClusterQueue, w Workload) bool {
	for _, ps := range w.PodSets {
		if ps.Count <= 0 {
			continue
		}
		for r, v := range ps.Requests {
			if v > 0 && r != PodsResource && !q.Covers(r) {
				return false
			}
		}
	}
	for _, grp := range q.ResourceGroups {
		var members []PodSet
		for _, ps := range w.PodSets {
			for _, r := range grp.Resources {
				if demandOf(q, ps, r) > 0 {
					members = append(members, ps)
					break
				}
			}
		}
		choice := make([]int, len(members))
		found := false
		for {
			usage := make([][]int64, len(grp.Flavors))
			for f := range usage {
				usage[f] = make([]int64, len(grp.Resources))
			}
			ok := true
			for i, ps := range members {
				for r, name := range grp.Resources {
					usage[choice[i]][r] = saturatingAdd(usage[choice[i]][r], demandOf(q, ps, name))
				}
			}
			for f := range usage {
				for r := range usage[f] {
					if exceeds(usage[f][r], grp.Flavors[f].Quotas[r].Potential()) {
						ok = false
					}
				}
			}
			if ok {
				found = true
				break
			}
			// next assignment (odometer)
			i := 0
			for ; i < len(choice); i++ {
				choice[i]++
				if choice[i] < len(grp.Flavors) {
					break
				}
				choice[i] = 0
			}
			if i == len(choice) {
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// sameErrorMessage makes cmp.Diff take two errors as equal when both are
// nil or both say the same: Classify and Verdict wrap the same sentinel in
// errors of their own.
var sameErrorMessage = cmp.Comparer(func(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Error() == b.Error()
})
