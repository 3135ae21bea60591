package estimator

import (
	"github.com/kueue-waittime/kueue-waittime/pkg/queuestats"
)

// The online statistics of a ClusterQueue, their configuration and the
// copy a refresh takes of them live in [queuestats].
type (
	queueStats  = queuestats.Queue
	statsConfig = queuestats.Config
	statsView   = queuestats.View
)
