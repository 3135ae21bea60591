package report

import (
	"slices"
	"sync"
	"time"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/scheduler/waittime/estimator"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/scenario"
)

// WorkloadRun is what the harness (internal/harness/runner) observed of
// one arrival.
type WorkloadRun struct {
	Arrival scenario.Arrival
	Key     workload.Reference
	Created time.Time
	// Admissions are the quota reservations seen; Admitted is whether it
	// holds one now, and Generation counts reservations and evictions so
	// that a finish timer of an evicted reservation does nothing.
	Admissions []time.Time
	Admitted   bool
	Generation int
	Finished   bool
	// FinishedAt is when the harness finished it (zero: not yet).
	FinishedAt time.Time
	// Label is the admissibility the estimator first published for it.
	Label string
	// On the cluster (the runner's ClusterHarness): Estimated says the
	// visibility API served a wait (a P50) for it while it was pending, and
	// Reason is why it is Unfeasible, when it is.
	Estimated bool
	Reason    string
}

// ReplicaRun is one (level, seed) replica's observations.
type ReplicaRun struct {
	Plan    scenario.Plan
	Replica scenario.Replica
	Runs    []*WorkloadRun
	// PendingSamples are samples, per queue, of the Quotable pending
	// workloads.
	PendingSamples map[string][]int
	// ReplicaP50Diffs are, with the runner's Harness.Replica, the relative
	// differences between the P50 admission times the two estimators
	// published for the same pending workload, one per poll.
	ReplicaP50Diffs []float64
	Start           time.Time
}

// ScoreRecorder is the estimator's metrics reporter in the evaluation: it
// keeps the prediction ledger's scores by workload, the same scores the
// manager's metrics are made from. Safe for concurrent use.
type ScoreRecorder struct {
	mu     sync.Mutex
	scores map[workload.Reference][]estimator.Score
	// refreshes are the durations of the estimator's refreshes, in order.
	refreshes []time.Duration
}

var _ estimator.MetricsReporter = (*ScoreRecorder)(nil)

// ReportQueueModel implements estimator.MetricsReporter; models are read
// from the published results instead.
func (*ScoreRecorder) ReportQueueModel(estimator.QueueModel) {}

// ClearQueueModel implements estimator.MetricsReporter.
func (*ScoreRecorder) ClearQueueModel(kueue.ClusterQueueReference) {}

// ReportUnscored implements estimator.MetricsReporter; the harness counts
// unscored admissions per workload itself.
func (*ScoreRecorder) ReportUnscored(kueue.ClusterQueueReference, estimator.UnscoredReason) {}

// ReportRefresh implements estimator.MetricsReporter: it keeps the
// refresh's duration (the harness reads refresh times from the published
// results).
func (s *ScoreRecorder) ReportRefresh(r estimator.RefreshReport) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshes = append(s.refreshes, r.Duration)
}

// RefreshCount is how many refreshes were reported so far; 0 on a nil
// recorder.
func (s *ScoreRecorder) RefreshCount() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.refreshes)
}

// RefreshesSince returns a copy of the durations of the refreshes reported
// after the first n.
func (s *ScoreRecorder) RefreshesSince(n int) []time.Duration {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n >= len(s.refreshes) {
		return nil
	}
	return slices.Clone(s.refreshes[n:])
}

// ReportScore keeps a score.
func (s *ScoreRecorder) ReportScore(sc estimator.Score) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.scores == nil {
		s.scores = make(map[workload.Reference][]estimator.Score)
	}
	s.scores[sc.Workload] = append(s.scores[sc.Workload], sc)
}

// take returns and forgets the scores of a workload, in admission order.
func (s *ScoreRecorder) take(key workload.Reference) []estimator.Score {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.scores[key]
	delete(s.scores, key)
	return out
}
