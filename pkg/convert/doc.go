// Package convert reads what Kueue holds in memory — a ClusterQueue's
// scheduler snapshot, a workload's Info and its object — into the
// Kueue-free models of this module, without state and without the API
// server:
//
//   - a ClusterQueue's quota as [capacity.ClusterQueue]
//     ([ClusterQueueCapacity], [CapacityInto] into reused values), and
//     whether a workload fits within its nominal quota now ([NominalFit]);
//   - a workload's demand ([DemandOf], [WorkloadDemand], [Classes],
//     [Converter]), an admitted workload's demand and shape key
//     ([AdmittedDemand]) and a running workload's usage
//     ([RunningUsages]);
//   - the quota a ClusterQueue has lent and the running workloads that
//     hold it ([LentQuota], [LentHolders]);
//   - whether Topology-Aware Scheduling can never place a workload, with
//     Kueue's own placement ([UnplaceableByTopology]);
//   - what a workload's conditions say: admission and requeue times, a
//     service span, a finish, an eviction by preemption, a refusal of
//     quota ([AdmissionTime], [ServiceSpan], [RefusedQuota], …), and
//     its priority and policies as the forecast's.
//
// The estimator calls it on every refresh and on the scheduler's
// classification of a head; plan calls [ClusterQueueCapacity] on a
// snapshot it builds, so that both name the same bottleneck.
package convert
