package estimator

import (
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	utilqueue "sigs.k8s.io/kueue/pkg/util/queue"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/queuestats"
	"github.com/kueue-waittime/kueue-waittime/pkg/tracker"
)

// The online statistics of a ClusterQueue and the copy a refresh takes of
// them live in [queuestats].
type (
	queueStats = queuestats.Queue
	statsView  = queuestats.View
)

// The estimator's state between refreshes, a workload's arrival as the
// event handler saw it and what a refresh reads of the state are
// [tracker]'s, with Kueue's names.
type (
	trackerState  = tracker.State[kueue.ClusterQueueReference, kueue.CohortReference, workload.Reference, utilqueue.LocalQueueReference, queueSpec]
	parkedArrival = tracker.Arrival[utilqueue.LocalQueueReference]
	queueInputs   = tracker.Inputs[workload.Reference, queueSpec]
)
