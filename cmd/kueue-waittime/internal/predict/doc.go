// Package predict implements `kueue-waittime predict`: the paper's
// a-priori queue model of one ClusterQueue from command-line flags. The
// server count is given (--servers) or derived from a quota and a workload
// demand by vector packing (paper Eq. 3, capacity.KEff on the nominal
// quota); the workload is classified Quotable or Unfeasible against
// nominal + borrowable (paper Def. 3, capacity.Classify); and the queue is
// evaluated as M/G/k with preemption feedback (queueing.Analyze): Erlang-C,
// the paper's Approximation 1, Whitt's GI/G/k mean and the P90 of the
// Approximation 1 law.
package predict
