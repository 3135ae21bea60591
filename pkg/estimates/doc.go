// Package estimates holds what the estimator publishes, as its readers (the
// visibility API, metrics) see it: a pending workload's [WorkloadEstimate],
// a ClusterQueue's [QueueModel], a hypothetical workload's
// [WhatIfEstimate] and a [RefreshReport]; and [Stored], the
// compact form published results keep an estimate in, one per pending
// workload. [ConditionMessage] appends a workload's partition to the
// message of the condition that says it could not be admitted.
//
// It imports nothing of Kueue or Kubernetes: the caller names
// ClusterQueues with its own string type.
package estimates
