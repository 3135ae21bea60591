// Package queuestats holds the online statistics of one ClusterQueue that
// the estimator feeds from Kueue's events and hands the engine at each
// refresh: arrival rates (in all and by priority, split by the demand
// shapes of the admissions), service times (in all, by priority and by
// shape), preemption and admission delays, the realized coverage of the
// published quantiles and their conformal calibrators.
//
// [NewQueuesFor] makes [Queues] from the estimator's settings
// ([engine.Settings]), with a configuration of the statistics that it
// validates once by making one of each, so that making a ClusterQueue's
// [Queue] later cannot fail.
// [Queue.View] is the copy a refresh takes, as the engine's inputs;
// [Shared] holds what every ClusterQueue pools (latencies while a
// ClusterQueue measured too few of its own, and the pooled calibrators),
// and [Shared.View] completes a Queue's view with it. [Queues] holds every
// ClusterQueue's Queue, named by the caller's type, with what they pool,
// the cohort each is in and the last release of quota in each cohort, the
// scheduler's busy time per cycle, and when each running workload was seen
// admitted and evicted, from which its admission, release and end
// ([Queues.Admit], [Queues.Release], [Queues.End]) feed the statistics.
//
// It imports nothing of Kueue or Kubernetes; the caller guards a Queue
// (the estimator, by its mutex) and owns the clock and the random source.
package queuestats
