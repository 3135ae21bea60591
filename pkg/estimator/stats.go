package estimator

import (
	"fmt"

	"github.com/kueue-waittime/kueue-waittime/pkg/queuestats"
)

// The online statistics of a ClusterQueue, their configuration and the
// copy a refresh takes of them live in [queuestats].
type (
	queueStats  = queuestats.Queue
	statsConfig = queuestats.Config
	statsView   = queuestats.View
)

// statsInvariant reports a constructor's error where queuestats.NewConfig
// validated the configuration it was given, so none can happen. It panics
// with the error, naming the broken invariant; every entry point of the
// estimator recovers from a panic (recoverPanic), so a bug here costs the
// event that found it, never the scheduler.
func statsInvariant(err error) {
	if err != nil {
		panic(fmt.Sprintf("estimator: a statistic of a configuration New validated could not be made: %v", err))
	}
}

// newQueueStats makes a ClusterQueue's statistics with the configuration
// New validated.
func (e *Estimator) newQueueStats() *queueStats {
	s, err := e.statsCfg.NewQueue()
	statsInvariant(err)
	return s
}
