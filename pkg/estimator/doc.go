// Package estimator is the one package a patched Kueue calls to estimate how
// long pending workloads will wait. It adapts Kueue's in-memory state (the
// scheduler cache's snapshot, the queue manager's ordered pending lists and
// the informer's Workload objects) to the Kueue-free engine of this module:
//
//   - [engine] rolls one ClusterQueue from plain inputs: the
//     Quotable/Unfeasible partition and k_eff ([capacity], which also
//     interns the running workloads' usages), the paper's
//     a-priori M/G/k model ([queueing]), the state-conditioned per-workload
//     forecast ([forecast]) and the what-if answers; its [engine.Settings]
//     are the plain settings the options set, with their defaults and
//     validation;
//   - [queuestats] holds each ClusterQueue's online arrival, service,
//     preemption and coverage statistics (over [stats] and [calibration])
//     and what they pool, each ClusterQueue's cohort with the last release
//     of quota in it, and the scheduler's busy time per cycle
//     ([queuestats.Queues]), which this package feeds from Kueue's events
//     (and a warm start's read) and hands the engine at each refresh;
//   - [tracker] holds the estimator's state between refreshes
//     ([tracker.State]): the statistics, the ledger's book of pending
//     workloads, what the events changed, the events seen before the warm
//     start ([earlyevents]) and the arrivals in a LocalQueue not yet
//     mapped, with the bookkeeping of each transition and the copy a
//     refresh takes of a ClusterQueue's inputs; this package guards it
//     with its lock;
//   - [ledger] keeps each pending workload's first published estimate
//     (with the stamp of its refresh, [ledger.StampOf]) and scores every
//     predictor at its admission;
//   - [cohortview] is what a roll takes from the ClusterQueue's cohort
//     tree: which holders of lent quota it watches ([cohortview.HolderSet])
//     and how a reclaim bounds them;
//   - [refreshschedule] runs the refresh loop ([refreshschedule.Run]) and
//     paces it, and [lockhold] times its holds of the lock the scheduler's
//     hooks wait for;
//   - [positions] indexes workloads by namespace and name: the pending
//     workloads tracked, each ClusterQueue's published estimates;
//   - [published] holds the published [Results] and decides which
//     ClusterQueues a refresh recomputes, from what the events changed
//     and the arrivals a refresh missed ([published.Changes]), and which
//     parts it reuses.
//
// What stays here is the stateful adaptation, with Kueue's names: the
// intake of Kueue's events (events.go: the keys, times and demands read
// from Kueue's objects, handed to [tracker.State] under the lock), the
// refresh's reads of Kueue's snapshot and queue manager and their
// assembly into an [engine.Queue] (estimator.go, cohortview.go), and
// publication (results.go, ledger.go). The stateless reading of Kueue's
// objects and snapshots into this module's models (capacity, demand,
// lent quota, topology placement, conditions) is [convert]'s; whatever
// needs none of Kueue's types lives in the packages above.
//
// The scheduler calls [Estimator.Classify] for the condition message of a
// workload it could not admit, and [Estimator.ObserveCycle],
// and [Estimator.ObserveAdmission]; these are
// cheap and never block on a forecast. Workload lifecycle (arrivals,
// finishes, evictions) comes from the manager's shared informer through
// [Estimator.WorkloadEventHandler]; objects already cached at start-up warm
// the statistics, so a restart does not start blind. A background loop
// ([Estimator.Start]) takes its own cache snapshot at most once per refresh
// period, rolls every ClusterQueue forward and publishes the results with an
// atomic swap, so readers ([Estimator.Results]: the visibility API, metrics)
// never wait for the scheduler or the other way round.
//
// Nothing here reads from or writes to the API server. Every entry point
// recovers from a panic, logs it and counts it ([Estimator.Panics]) rather
// than crash Kueue.
package estimator
