// Package scenario is the evaluation harness's scenario spec: a scenario
// file (Scenario, as test/eval/*.yaml write it) and the multi-tenant
// experiment it stands for (Spec: ClusterQueues, cohorts, classes of
// workloads, levels and seeds), the arrival plan of each (level, seed)
// replica (Plan), and the Kubernetes objects a replica is made of (Replica,
// Spec.BuildWorkload, Spec.BuildJob). It runs nothing: internal/harness/runner
// runs the plans, internal/harness/report scores what they did.
package scenario
