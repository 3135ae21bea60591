// Package tracker holds a wait-time estimator's state between two
// refreshes ([State]): what the event handlers learned of each
// ClusterQueue (its statistics, [queuestats]; the spec the snapshot does
// not carry), of each pending workload (its line in the prediction
// ledger, [ledger]), the ClusterQueues the events changed and the
// arrivals no refresh has published yet ([published.Changes]), the
// events seen before the warm start ([earlyevents]) and the arrivals in a
// LocalQueue not yet mapped to a ClusterQueue. Its operations are the
// bookkeeping of each transition (an arrival, an admission, a release,
// the end of a run, a deletion) once the caller has read the keys, times
// and demands from its own objects, and the copy a refresh takes of one
// ClusterQueue's inputs ([State.Inputs]).
//
// It imports nothing of Kueue or Kubernetes: the caller names
// ClusterQueues, cohorts, workloads and LocalQueues with its own types,
// keeps its own spec type, and guards a State with its own lock.
package tracker
