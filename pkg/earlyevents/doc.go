// Package earlyevents keeps the workload transitions an estimator's event
// handlers see before its warm start has read the informer's cache, so
// that none is lost between the informer's sync and that read, and
// replays them after it but those the read already holds ([Buffer]).
//
// It imports nothing of Kueue or Kubernetes: the caller names workloads
// and ClusterQueues with its own types, and guards a Buffer with its own
// lock.
package earlyevents
