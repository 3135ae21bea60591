// Package ledger is the estimator's prediction ledger: for every pending
// workload, a [Line] with the first wait estimate published for it (and
// when it was seen arriving), sharing a [Stamp] per refresh of its
// ClusterQueue ([StampOf]) with what each baseline said from the same
// state; at the workload's admission, [Admit] judges every [Predictor]
// against the wait that remained from that moment, the moment a submitter
// first saw an answer. A [Book] holds the pending workloads' lines, and a refresh's
// [Writer] gives each its first estimate. [Admit] records an admission
// once, whoever saw it first: it feeds the statistics ([queuestats]) and
// scores the workload's line, whose score feeds the ClusterQueue's
// coverage and calibration; [Delete] forgets a deleted workload, whose
// line is then never scored.
//
// It imports nothing of Kueue or Kubernetes: the caller names workloads
// and ClusterQueues with its own string types.
package ledger
