package engine

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// constantSample is n service times of s seconds each.
func constantSample(s float64, n int) []float64 {
	return slices.Repeat([]float64{s}, n)
}

// TestRollDrawsEachShapesServiceFromItsOwnLaw: on 2 CPUs a 2-CPU workload
// has just started; pending are a 500m workload and a 2-CPU one. The
// pooled sample is half 2 s, half 3 s; the shapes' own samples say that
// the small ones run 2 s and the large ones 3 s. With them the waits are
// exact — the small workload waits for the running one's 3 s, the large
// one for the small one's 2 s more, and a what-if of a large workload
// placed last for that one's 3 s more — and the shape laws name workloads
// of their priority only. Without them, or without an observed service
// law, the roll draws from the pooled law.
func TestRollDrawsEachShapesServiceFromItsOwnLaw(t *testing.T) {
	small, large := cpuShape(500), cpuShape(2000)
	laws := []ShapeService{
		{Priority: 0, Demand: small, Sample: constantSample(2, BootstrapServiceBelow)},
		{Priority: 0, Demand: large, Sample: constantSample(3, BootstrapServiceBelow)},
	}
	pooled := append(constantSample(2, 30), constantSample(3, 30)...)
	queue := func(s Stats) Queue {
		return Queue{
			Capacity: cpuQueue(2000),
			Classes:  []capacity.Workload{small, large},
			Running:  []Running{{Class: 1, Usage: capacity.Quantities{{Flavor: "default", Resource: "cpu"}: 2000}}},
			Pending:  []Pending{{ID: "small"}, {ID: "large", Class: 1}},
			Stats:    s,
		}
	}
	observed := Stats{HasService: true, ServiceMean: 2.5, ServiceSCV: 0.04, ServiceSample: pooled}
	cases := map[string]struct {
		stats Stats
		// want are the small, the large and the what-if's mean waits;
		// exact when every law is constant.
		want   [3]float64
		approx float64
	}{
		"a law per shape": {
			stats: func() Stats { s := observed; s.ShapeService = laws; return s }(),
			want:  [3]float64{3, 5, 8},
		},
		"no shape laws: the pooled law": {
			stats: observed,
			// 2.5 s per service: the small workload waits 2.5, the
			// large one 5, the what-if 7.5, up to sampling.
			want:   [3]float64{2.5, 5, 7.5},
			approx: 0.2,
		},
		"laws of another priority name no workload": {
			stats: func() Stats {
				s := observed
				s.ShapeService = slices.Clone(laws)
				for i := range s.ShapeService {
					s.ShapeService[i].Priority = 7
				}
				return s
			}(),
			want:   [3]float64{2.5, 5, 7.5},
			approx: 0.2,
		},
		"a sample of zeros makes no law": {
			stats: func() Stats {
				s := observed
				s.ShapeService = []ShapeService{laws[0], {Priority: 0, Demand: large, Sample: constantSample(0, BootstrapServiceBelow)}}
				return s
			}(),
			// The large ones draw from the pooled law, the small one
			// runs 2 s.
			want:   [3]float64{2.5, 4.5, 7},
			approx: 0.2,
		},
	}
	e := testEngine(t, engineConfig{})
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rolled, err := e.Roll(queue(tc.stats), seed)
			if err != nil {
				t.Fatal(err)
			}
			defer rolled.Release()
			if rolled.ForecastErr != nil || rolled.Method != MethodForecast {
				t.Fatalf("method %v, forecast error %v; want MethodForecast and none", rolled.Method, rolled.ForecastErr)
			}
			whatIf := e.WhatIf(rolled.Scene, large, 0, 0)
			got := [3]float64{rolled.Estimates[0].Raw.ExpectedWaitSeconds, rolled.Estimates[1].Raw.ExpectedWaitSeconds, whatIf.Raw.ExpectedWaitSeconds}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, tc.approx+1e-9)); diff != "" {
				t.Errorf("mean waits of the small, the large and the what-if (-want +got):\n%s", diff)
			}
		})
	}

	// Before MinServiceSamples completions the roll is a-priori: the shape
	// laws are not used, and no workload names one.
	s := Stats{ShapeService: laws}
	rolled, err := testEngine(t, engineConfig{PriorMeanServiceSeconds: 10}).Roll(queue(s), seed)
	if err != nil {
		t.Fatal(err)
	}
	if rolled.Method != MethodAPriori || rolled.Scene.queue.ServiceClasses != nil || rolled.Scene.laws != nil {
		t.Errorf("a-priori roll: method %v, %d service classes, laws %v; want MethodAPriori and none", rolled.Method, len(rolled.Scene.queue.ServiceClasses), rolled.Scene.laws)
	}
}

// TestShapeLawsMatchByPriorityAndFlavorOptions: a workload names the law
// of its priority whose shape has its flavor options in the ClusterQueue
// (from 1, in the order of the samples); one of another shape or priority
// names none, and a demand class asks once per priority.
func TestShapeLawsMatchByPriorityAndFlavorOptions(t *testing.T) {
	cq := cpuQueue(4000)
	l := newShapeLaws(cq, []ShapeService{
		{Priority: 0, Demand: cpuShape(500), Sample: []float64{1}},
		{Priority: 0, Demand: cpuShape(2000), Sample: []float64{2}},
		{Priority: 5, Demand: cpuShape(500), Sample: []float64{3}},
		{Priority: 9, Demand: cpuShape(500)},
	}, 2, 1)
	if got := len(l.serviceClasses()); got != 3 {
		t.Fatalf("%d service classes, want 3 (the empty sample makes none)", got)
	}
	cases := map[string]struct {
		priority int32
		demand   capacity.Workload
		want     int32
	}{
		"small, priority 0": {priority: 0, demand: cpuShape(500), want: 1},
		"large, priority 0": {priority: 0, demand: cpuShape(2000), want: 2},
		"small, priority 5": {priority: 5, demand: cpuShape(500), want: 3},
		"large, priority 5": {priority: 5, demand: cpuShape(2000)},
		"an empty sample":   {priority: 9, demand: cpuShape(500)},
		"another shape":     {priority: 0, demand: cpuShape(1000)},
		"two pods of 250m: the same options as one of 500m": {
			priority: 0,
			demand:   capacity.Workload{PodSets: []capacity.PodSet{{Name: "main", Count: 2, Requests: map[string]int64{"cpu": 250}}}},
			want:     1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := l.forOptions(tc.priority, demandOptions(cq, tc.demand)); got != tc.want {
				t.Errorf("forOptions: %d, want %d", got, tc.want)
			}
		})
	}
	asked := 0
	options := func() []capacity.Quantities { asked++; return demandOptions(cq, cpuShape(2000)) }
	for range 3 {
		if got := l.of(1, 0, options); got != 2 {
			t.Errorf("class 1, priority 0: %d, want 2", got)
		}
	}
	if got := l.cached(1, 0); got != 2 || asked != 1 {
		t.Errorf("cached: %d after %d lookups of the options; want 2 after 1", got, asked)
	}
	if got := l.cached(0, 0); got != 0 {
		t.Errorf("cached for a class never asked: %d, want 0", got)
	}
	var none *shapeLaws
	if none.forOptions(0, demandOptions(cq, cpuShape(500))) != 0 || none.of(0, 0, options) != 0 || none.cached(0, 0) != 0 || none.serviceClasses() != nil {
		t.Error("nil laws name a service class")
	}
}
