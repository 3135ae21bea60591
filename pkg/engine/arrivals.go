package engine

import (
	"cmp"
	"slices"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
)

// arrivalShape is the demand of the workloads of one priority, as the roll
// takes it: the flavor options of one of them and its maximum execution
// time.
type arrivalShape struct {
	options     []capacity.Quantities
	maxExec     float64
	fromPending bool
}

// arrivalShapes collects one demand shape per priority from a ClusterQueue's
// workloads, a pending workload's (with every flavor option) preferred to a
// running one's (the flavors it was given).
type arrivalShapes map[int32]arrivalShape

func (a arrivalShapes) addRunning(priority int32, r forecast.Running) {
	if _, ok := a[priority]; !ok {
		a[priority] = arrivalShape{options: []capacity.Quantities{r.Usage}, maxExec: r.MaxExecutionSeconds}
	}
}

func (a arrivalShapes) addPending(p forecast.Pending) {
	if !p.Quotable || len(p.Options) == 0 {
		return
	}
	if s, ok := a[p.Priority]; !ok || !s.fromPending {
		a[p.Priority] = arrivalShape{options: p.Options, maxExec: p.MaxExecutionSeconds, fromPending: true}
	}
}

// higherPriorityArrivals returns the future arrivals that will pass some of
// the pending workloads: for every priority above the lowest priority of a
// quotable pending workload, a Poisson class at the priority's measured
// arrival rate (per second) with the demand shape seen for it, arriving for
// as long ahead as the rate was measured back (windows, seconds; a missing
// or non-positive window leaves the class out). A rate measured over the
// first minute of a burst is extrapolated for a minute, not for the
// horizon: extrapolated for days, a higher-priority load at or above the
// capacity would hold every lower-priority workload back to the horizon
// (a week) in most replicas, though the burst ends. Kueue orders
// a ClusterQueue's pending workloads by priority first, so such an arrival
// goes ahead of every pending workload of lower priority; the roll places it
// there. A priority without a measured rate or without a workload in view
// (no known demand) is left out, as is everything when no workload is
// pending. The classes come in increasing priority, so that the roll draws
// its random numbers in a fixed order.
//
// Arrivals of the lowest pending priority, or lower, never pass a pending
// workload and are left out too: the forecast still answers "if nothing
// else arrives ahead of me", now counting what will.
func higherPriorityArrivals(rates, windows map[int32]float64, pending []forecast.Pending, shapes arrivalShapes) []forecast.Arrival {
	lowest, any := int32(0), false
	for _, p := range pending {
		if p.Quotable && (!any || p.Priority < lowest) {
			lowest, any = p.Priority, true
		}
	}
	if !any {
		return nil
	}
	var out []forecast.Arrival
	for priority, rate := range rates {
		shape, ok := shapes[priority]
		window := windows[priority]
		if priority <= lowest || !ok || !(rate > 0) || !(window > 0) {
			continue
		}
		out = append(out, forecast.Arrival{
			RatePerSecond:       rate,
			Options:             shape.options,
			Priority:            priority,
			MaxExecutionSeconds: shape.maxExec,
			UntilSeconds:        window,
		})
	}
	slices.SortFunc(out, func(a, b forecast.Arrival) int { return cmp.Compare(a.Priority, b.Priority) })
	return out
}
