package runner

import (
	"golang.org/x/sync/errgroup"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/scenario"
)

// burstCreators is how many workloads of one burst are created at once.
// Created one after another, a burst of b reaches the API server over b
// round trips, at the rate the scheduler admits them (each admission is a
// write to the same server), so a burst never queues; created together,
// they arrive as the scenario says, at one moment.
const burstCreators = 16

// simultaneousArrivals is the leading run of arrivals (sorted by offset)
// that share the first one's offset: a burst of a bursty process, or a
// single arrival.
func simultaneousArrivals(arrivals []scenario.Arrival) []scenario.Arrival {
	n := 1
	for n < len(arrivals) && arrivals[n].Offset == arrivals[0].Offset {
		n++
	}
	return arrivals[:n]
}

// createConcurrently calls create for every arrival, at most workers at a
// time, and returns the first error once all calls have returned. A single
// arrival is created on the calling goroutine.
func createConcurrently(arrivals []scenario.Arrival, workers int, create func(scenario.Arrival) error) error {
	if len(arrivals) == 1 {
		return create(arrivals[0])
	}
	var g errgroup.Group
	g.SetLimit(max(1, workers))
	for _, a := range arrivals {
		g.Go(func() error { return create(a) })
	}
	return g.Wait()
}
