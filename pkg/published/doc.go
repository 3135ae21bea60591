// Package published holds one published set of wait-time estimates
// ([Results]) as the estimator's readers look it up, and decides how a
// refresh builds the next set from the last: which ClusterQueues it
// recomputes ([RecomputeSet], [NeedsRefresh], from the [Changes] the
// events recorded, and [Relist] for the arrivals a refresh missed) and
// which parts it reuses unchanged ([Next]).
//
// [Fill] publishes one ClusterQueue's roll into its part, and gives the
// prediction ledger ([ledger.Writer]) the first estimate of each workload
// that has none. [FromEstimates] builds Results from plain estimates and models, as a
// refresh would publish them (for the readers' tests).
//
// Each ClusterQueue's [Part] holds its queue model and the estimates of its
// pending workloads, indexed by namespace and name (see [positions.Table]).
// A ClusterQueue keeps its slot from one Results to the next, and a part
// nothing changed is the very same value in both.
//
// It imports nothing of Kueue or Kubernetes: the caller names
// ClusterQueues, cohort roots and workloads with its own string types (a
// workload's key is "namespace/name") and gives each part a cohort view of
// its own type, which this package only keeps.
package published
