// Package cohortview is what a ClusterQueue's roll takes from the rest of
// its cohort tree ([View]): its capacity model, the quota it has lent and
// the running workloads whose ends return it, and whether it takes that
// quota back by preemption. [View.SameAs] tells whether two views are the
// same inputs to a roll, so that a refresh may keep a ClusterQueue's
// published results when only another member of its cohort changed;
// [View.ReclaimedHolders] bounds the holders of lent quota by the
// measured delays of a reclaim ([Delays]); a [HolderSet] chooses those
// holders, bounded once their usage covers what was lent.
//
// It imports nothing of Kueue or Kubernetes: the caller names
// ClusterQueues with its own string type and builds views from its own
// snapshot.
package cohortview
