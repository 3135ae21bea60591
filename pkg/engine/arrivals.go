package engine

import (
	"cmp"
	"maps"
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
// Arrivals of the lowest pending priority, or lower, pass a pending
// workload only where a later workload may be admitted when one ahead does
// not fit (BestEffortFIFO), and only one of another demand shape:
// passingArrivals gives those, by shape, and this function leaves them
// out.
func higherPriorityArrivals(rates, windows map[int32]float64, pending []forecast.Pending, shapes arrivalShapes) []forecast.Arrival {
	lowest, any := lowestQuotablePriority(pending)
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

// passingArrivals returns, for a BestEffortFIFO roll, the future arrivals
// of the lowest pending priority or below that can pass a pending
// workload: under BestEffortFIFO a later workload is admitted whenever it
// fits and every one ahead of it does not, so small workloads that keep
// arriving hold back a large pending one of the same priority until
// enough quota frees at once. An arrival shape with the same flavor
// options as every quotable pending workload passes none of them (they
// fit or do not fit together) and is left out, so a ClusterQueue of one
// demand shape rolls as before. Each shape's options are computed by
// options (nil: the shape cannot be admitted here, left out), and each
// names its shape's service law in laws, if it has one. The classes come
// ordered by priority, then by shape, so that the roll draws its random
// numbers in a fixed order.
func passingArrivals(shapes []ShapeArrival, pending []forecast.Pending, options func(capacity.Workload) []capacity.Quantities, laws *shapeLaws) []forecast.Arrival {
	lowest, any := lowestQuotablePriority(pending)
	if !any || len(shapes) == 0 {
		return nil
	}
	type candidate struct {
		arrival forecast.Arrival
		demand  capacity.Workload
	}
	var out []candidate
	for _, sh := range shapes {
		if sh.Priority > lowest || !(sh.RatePerSecond > 0) || !(sh.WindowSeconds > 0) {
			continue
		}
		opts := options(sh.Demand)
		if len(opts) == 0 || !passesSome(opts, pending) {
			continue
		}
		out = append(out, candidate{
			arrival: forecast.Arrival{RatePerSecond: sh.RatePerSecond, Options: opts, Priority: sh.Priority, UntilSeconds: sh.WindowSeconds,
				ServiceClass: laws.forOptions(sh.Priority, opts)},
			demand: sh.Demand,
		})
	}
	slices.SortFunc(out, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.arrival.Priority, b.arrival.Priority), compareShapes(a.demand, b.demand))
	})
	arrivals := make([]forecast.Arrival, len(out))
	for i, c := range out {
		arrivals[i] = c.arrival
	}
	return arrivals
}

// passesSome reports whether an arrival with these flavor options differs
// from some quotable pending workload's options. The pending workloads of
// one demand class share their options slice, which is compared once: a
// long queue of few classes costs a pass over it, not a comparison per
// workload.
func passesSome(opts []capacity.Quantities, pending []forecast.Pending) bool {
	var same []capacity.Quantities // the last options found equal to opts
	for _, p := range pending {
		if !p.Quotable || (len(same) > 0 && len(p.Options) == len(same) && &p.Options[0] == &same[0]) {
			continue
		}
		if !sameOptions(opts, p.Options) {
			return true
		}
		same = p.Options
	}
	return false
}

func sameOptions(a, b []capacity.Quantities) bool {
	return slices.EqualFunc(a, b, func(x, y capacity.Quantities) bool { return maps.Equal(x, y) })
}

// lowestQuotablePriority returns the lowest priority of a quotable pending
// workload; any is false when none is quotable.
func lowestQuotablePriority(pending []forecast.Pending) (lowest int32, any bool) {
	for _, p := range pending {
		if p.Quotable && (!any || p.Priority < lowest) {
			lowest, any = p.Priority, true
		}
	}
	return lowest, any
}
