package estimator

import (
	"github.com/kueue-waittime/kueue-waittime/pkg/queuestats"
)

// The online statistics of a ClusterQueue and the copy a refresh takes of
// them live in [queuestats].
type (
	queueStats = queuestats.Queue
	statsView  = queuestats.View
)
