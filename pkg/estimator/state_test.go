package estimator

import (
	"time"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// statsFor returns the statistics of a ClusterQueue, creating them (see
// tracker.State.Stats), for the tests to read. The caller holds e.mu, or
// nothing else runs.
func (e *Estimator) statsFor(cq kueue.ClusterQueueReference) *queueStats { return e.state.Stats.Of(cq) }

// eventTime is a time the estimator saw something happen, in Unix
// nanoseconds, as the state keeps the times of the running workloads'
// admissions and of the unpublished arrivals (see tracker.State); the
// tests read them back as times.
type eventTime int64

func (t eventTime) time() time.Time { return time.Unix(0, int64(t)).UTC() }
