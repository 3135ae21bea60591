package engine

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
)

func TestHigherPriorityArrivals(t *testing.T) {
	cpu := func(m int64) []capacity.Quantities {
		return []capacity.Quantities{{{Flavor: "default", Resource: "cpu"}: m}}
	}
	shapes := arrivalShapes{
		0:    {options: cpu(500)},
		100:  {options: cpu(1000), maxExec: 60},
		1000: {options: cpu(2000)},
	}
	pending := func(prios ...int32) []forecast.Pending {
		var out []forecast.Pending
		for i, p := range prios {
			out = append(out, forecast.Pending{ID: fmt.Sprint(i), Options: cpu(500), Quotable: true, Priority: p})
		}
		return out
	}
	// How long each priority's rate has been measured, in seconds.
	windows := map[int32]float64{0: 900, 100: 300, 500: 300, 1000: 60}
	cases := map[string]struct {
		rates   map[int32]float64
		windows map[int32]float64 // nil: windows
		pending []forecast.Pending
		shapes  arrivalShapes
		want    []forecast.Arrival
	}{
		"every priority above the lowest pending one, in increasing priority": {
			rates:   map[int32]float64{0: 2, 100: 0.5, 1000: 0.1},
			pending: pending(100, 0),
			shapes:  shapes,
			want: []forecast.Arrival{
				{RatePerSecond: 0.5, Options: cpu(1000), Priority: 100, MaxExecutionSeconds: 60, UntilSeconds: 300},
				{RatePerSecond: 0.1, Options: cpu(2000), Priority: 1000, UntilSeconds: 60},
			},
		},
		"arrivals of the lowest pending priority pass nobody": {
			rates:   map[int32]float64{0: 2, 100: 0.5},
			pending: pending(100, 100),
			shapes:  shapes,
			want:    nil,
		},
		"an Unfeasible workload does not set the lowest priority": {
			rates:   map[int32]float64{100: 0.5},
			pending: append(pending(100), forecast.Pending{ID: "huge", Quotable: false, Priority: 0}),
			shapes:  shapes,
			want:    nil,
		},
		"nothing pending: no arrivals": {
			rates:  map[int32]float64{100: 0.5},
			shapes: shapes,
			want:   nil,
		},
		"a priority with no workload in view has no known demand": {
			rates:   map[int32]float64{500: 1, 1000: 0.1},
			pending: pending(0),
			shapes:  shapes,
			want:    []forecast.Arrival{{RatePerSecond: 0.1, Options: cpu(2000), Priority: 1000, UntilSeconds: 60}},
		},
		"a zero rate is left out": {
			rates:   map[int32]float64{100: 0, 1000: 0.1},
			pending: pending(0),
			shapes:  shapes,
			want:    []forecast.Arrival{{RatePerSecond: 0.1, Options: cpu(2000), Priority: 1000, UntilSeconds: 60}},
		},
		"a rate without a measurement window is left out": {
			rates:   map[int32]float64{100: 0.5, 1000: 0.1},
			windows: map[int32]float64{100: 0, 1000: 60},
			pending: pending(0),
			shapes:  shapes,
			want:    []forecast.Arrival{{RatePerSecond: 0.1, Options: cpu(2000), Priority: 1000, UntilSeconds: 60}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := tc.windows
			if w == nil {
				w = windows
			}
			got := higherPriorityArrivals(tc.rates, w, tc.pending, tc.shapes)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("arrivals (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestArrivalShapesPreferPendingWorkloads(t *testing.T) {
	shapes := make(arrivalShapes)
	running := capacity.Quantities{{Flavor: "spot", Resource: "cpu"}: 500}
	options := []capacity.Quantities{{{Flavor: "on-demand", Resource: "cpu"}: 500}, running}
	shapes.addRunning(7, forecast.Running{Usage: running, MaxExecutionSeconds: 30})
	if diff := cmp.Diff([]capacity.Quantities{running}, shapes[7].options); diff != "" {
		t.Errorf("shape from a running workload (-want,+got):\n%s", diff)
	}
	shapes.addPending(forecast.Pending{Options: options, Quotable: true, Priority: 7})
	shapes.addRunning(7, forecast.Running{Usage: running})
	if diff := cmp.Diff(options, shapes[7].options); diff != "" {
		t.Errorf("shape after a pending workload (-want,+got):\n%s", diff)
	}
}

func TestPassingArrivals(t *testing.T) {
	cpuOpts := func(m int64) []capacity.Quantities {
		return []capacity.Quantities{{{Flavor: "default", Resource: "cpu"}: m}}
	}
	demand := func(m int64) capacity.Workload {
		return capacity.Workload{PodSets: []capacity.PodSet{{Name: "main", Count: 1, Requests: map[string]int64{"cpu": m}}}}
	}
	// options gives a demand its one CPU option, and none above 4 CPU.
	options := func(w capacity.Workload) []capacity.Quantities {
		m := w.PodSets[0].Requests["cpu"]
		if m > 4000 {
			return nil
		}
		return cpuOpts(m)
	}
	pending := func(prio int32, millis ...int64) []forecast.Pending {
		var out []forecast.Pending
		for i, m := range millis {
			out = append(out, forecast.Pending{ID: fmt.Sprint(i), Options: cpuOpts(m), Quotable: true, Priority: prio})
		}
		return out
	}
	small := ShapeArrival{Priority: 0, Demand: demand(500), RatePerSecond: 0.8, WindowSeconds: 600}
	large := ShapeArrival{Priority: 0, Demand: demand(2000), RatePerSecond: 0.2, WindowSeconds: 600}
	// smallLaw is a service law of the small shape of priority 0 only.
	smallLaw := &shapeLaws{
		models: []forecast.ServiceModel{forecast.Exponential{}},
		shapes: []lawShape{{priority: 0, options: cpuOpts(500)}},
	}
	cases := map[string]struct {
		shapes  []ShapeArrival
		pending []forecast.Pending
		laws    *shapeLaws
		want    []forecast.Arrival
	}{
		"a shape with a service law of its own names it": {
			shapes:  []ShapeArrival{large, small, {Priority: -5, Demand: demand(500), RatePerSecond: 1, WindowSeconds: 60}},
			pending: pending(0, 2000, 500),
			laws:    smallLaw,
			want: []forecast.Arrival{
				{RatePerSecond: 1, Options: cpuOpts(500), Priority: -5, UntilSeconds: 60},
				{RatePerSecond: 0.8, Options: cpuOpts(500), UntilSeconds: 600, ServiceClass: 1},
				{RatePerSecond: 0.2, Options: cpuOpts(2000), UntilSeconds: 600},
			},
		},
		"a small shape that can pass a large pending workload, in shape order": {
			shapes:  []ShapeArrival{large, small},
			pending: pending(0, 2000),
			want: []forecast.Arrival{
				{RatePerSecond: 0.8, Options: cpuOpts(500), UntilSeconds: 600},
			},
		},
		"both shapes when both kinds are pending": {
			shapes:  []ShapeArrival{large, small},
			pending: pending(0, 2000, 500),
			want: []forecast.Arrival{
				{RatePerSecond: 0.8, Options: cpuOpts(500), UntilSeconds: 600},
				{RatePerSecond: 0.2, Options: cpuOpts(2000), UntilSeconds: 600},
			},
		},
		"one shape, pending and arriving: nothing passes": {
			shapes:  []ShapeArrival{small},
			pending: pending(0, 500, 500),
		},
		"a higher priority's shapes are left to higherPriorityArrivals": {
			shapes:  []ShapeArrival{{Priority: 10, Demand: demand(500), RatePerSecond: 1, WindowSeconds: 60}},
			pending: pending(0, 2000),
		},
		"a lower priority passes too": {
			shapes:  []ShapeArrival{{Priority: -5, Demand: demand(500), RatePerSecond: 1, WindowSeconds: 60}},
			pending: pending(0, 2000),
			want:    []forecast.Arrival{{RatePerSecond: 1, Options: cpuOpts(500), Priority: -5, UntilSeconds: 60}},
		},
		"no rate, no window or no options: left out": {
			shapes: []ShapeArrival{
				{Priority: 0, Demand: demand(500), WindowSeconds: 60},
				{Priority: 0, Demand: demand(500), RatePerSecond: 1},
				{Priority: 0, Demand: demand(8000), RatePerSecond: 1, WindowSeconds: 60},
			},
			pending: pending(0, 2000),
		},
		"nothing pending": {
			shapes: []ShapeArrival{small},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := passingArrivals(tc.shapes, tc.pending, options, tc.laws)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("passingArrivals (-want,+got):\n%s", diff)
			}
		})
	}
}
