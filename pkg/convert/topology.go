package convert

import (
	"context"
	"fmt"
	"strings"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/features"
	"sigs.k8s.io/kueue/pkg/resources"
	"sigs.k8s.io/kueue/pkg/workload"
)

// UnplaceableByTopology tells why Topology-Aware Scheduling can never place
// a workload whose quota fits in cqs: some pod set with a topology request
// (with the pod sets of its group, placed together) that no TAS flavor able
// to hold its resources can place, even with every workload placed by TAS
// gone. The placement is Kueue's own (FindTopologyAssignmentsForFlavor with
// WithSimulateEmpty, which the flavor assigner runs before it decides to
// preempt), on the nodes Kueue's TAS cache holds, so the answer follows the
// nodes: a node added makes it placeable again at the next attempt.
//
// "" when every such pod set can be placed, and whenever a "never" cannot
// be proven: TAS disabled or no TAS flavor in cqs; a ClusterQueue with a
// MultiKueue admission check (the worker places it) or a flavor with a
// ProvisioningRequest check (provisioning adds nodes); partial admission
// (minCount) or an elastic workload (Kueue may place fewer pods); a pod set
// that no TAS flavor of cqs covers. Pod sets without a topology request are
// not checked (Kueue places them on any node of a TAS-only ClusterQueue).
// Kueue's reason names the topology and how many pods of how many fit.
//
// It runs Kueue's placement once per candidate flavor of each group: the
// caller runs it only when Kueue's own message says a topology did not fit.
func UnplaceableByTopology(info *workload.Info, cqs *schdcache.ClusterQueueSnapshot) string {
	if !features.Enabled(features.TopologyAwareScheduling) || len(cqs.TASFlavors) == 0 ||
		cqs.HasMultiKueueAdmissionCheck() || workload.IsElasticWorkload(info.Obj) {
		return ""
	}
	podSets := info.Obj.Spec.PodSets
	var groups [][]int
	byName := map[string]int{}
	for i := range podSets {
		ps := &podSets[i]
		if ps.TopologyRequest == nil || ps.Count == 0 {
			continue
		}
		if ps.MinCount != nil {
			return ""
		}
		if g := ps.TopologyRequest.PodSetGroupName; g != nil {
			if at, ok := byName[*g]; ok {
				groups[at] = append(groups[at], i)
				continue
			}
			byName[*g] = len(groups)
		}
		groups = append(groups, []int{i})
	}
	ctx := context.Background()
	for _, group := range groups {
		// Each pod set's per-pod requests, computed once for the flavors'
		// cover and every flavor's placement.
		single := make([]resources.Requests, len(group))
		for j, i := range group {
			single[j] = resources.NewRequestsFromPodSpec(&podSets[i].Template.Spec)
		}
		flavors := tasFlavorsCovering(cqs, single)
		if len(flavors) == 0 {
			continue
		}
		var first string
		placed := false
		for _, f := range flavors {
			if cqs.HasProvRequestAdmissionCheck(f) {
				placed = true
				break
			}
			requests := make(schdcache.FlavorTASRequests, 0, len(group))
			for j, i := range group {
				ps := &podSets[i]
				requests = append(requests, schdcache.TASPodSetRequests{
					PodSet:            ps,
					SinglePodRequests: single[j],
					Count:             ps.Count,
					Flavor:            f,
					PodSetGroupName:   ps.TopologyRequest.PodSetGroupName,
				})
			}
			failure := cqs.TASFlavors[f].FindTopologyAssignmentsForFlavor(ctx, requests,
				schdcache.WithSimulateEmpty(true), schdcache.WithWorkload(info.Obj)).Failure()
			if failure == nil {
				placed = true
				break
			}
			if first == "" {
				first = fmt.Sprintf("flavor %s: %s", f, failure.Reason)
			}
		}
		if !placed {
			return fmt.Sprintf("topology: pod set %s cannot be placed even with no workload placed by topology-aware scheduling (%s)",
				podSetNames(podSets, group), first)
		}
	}
	return ""
}

// tasFlavorsCovering lists the TAS flavors of cqs, in Kueue's order, of a
// resource group that covers every resource the pod sets request (single
// holds each pod set's per-pod requests).
func tasFlavorsCovering(cqs *schdcache.ClusterQueueSnapshot, single []resources.Requests) []kueue.ResourceFlavorReference {
	var out []kueue.ResourceFlavorReference
	for _, rg := range cqs.ResourceGroups {
		covers := true
		for _, requests := range single {
			for name, v := range requests.Iter() {
				if v != 0 && !rg.CoveredResources.Has(name) {
					covers = false
				}
			}
		}
		if !covers {
			continue
		}
		for _, f := range rg.Flavors {
			if _, ok := cqs.TASFlavors[f]; ok {
				out = append(out, f)
			}
		}
	}
	return out
}

func podSetNames(podSets []kueue.PodSet, group []int) string {
	names := make([]string, len(group))
	for j, i := range group {
		names[j] = string(podSets[i].Name)
	}
	return strings.Join(names, "+")
}

// IsAboutTopology tells whether Kueue's message for a workload it could not
// admit says that a topology did not fit (Kueue v0.19.2's words: `topology
// "<name>" allows to fit only …` or `… doesn't allow to fit any of …`).
func IsAboutTopology(msg string) bool {
	return strings.Contains(msg, "allows to fit only") || strings.Contains(msg, "allow to fit any of")
}
