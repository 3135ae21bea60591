// Package runner runs the evaluation harness's scenarios
// (internal/harness/scenario): Harness on a control plane with the patched
// Kueue running in process (internal/harness/controlplane), creating each
// replica's Workloads and finishing them after their service times as a
// job integration would, and ClusterHarness on a local cluster
// (internal/harness/cluster), submitting Jobs that KWOK nodes run. Both
// watch what Kueue does with every arrival; Harness returns it scored as
// an internal/harness/report Report.
package runner
