package engine

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
)

// rollPaperQueue rolls the paper's example with a 20 s exponential prior
// and returns the engine with what it rolled.
func rollPaperQueue(t *testing.T) (*Engine, Rolled) {
	t.Helper()
	e := testEngine(t, engineConfig{PriorMeanServiceSeconds: 20})
	rolled, err := e.Roll(paperQueue(), seed)
	if err != nil {
		t.Fatalf("Roll: %v", err)
	}
	return e, rolled
}

// The what-if's P50 and P90 get the adjustment the published ones get:
// its priority's calibrators once they apply, else the ClusterQueue's.
func TestWhatIfCalibratesLikeThePublishedQuantiles(t *testing.T) {
	e, rolled := rollPaperQueue(t)
	raw := e.WhatIf(rolled.Scene, cpuShape(500), 0, 0)
	if !raw.HasWait {
		t.Fatalf("no raw what-if wait: %+v", raw)
	}
	cases := map[string]struct {
		cal  Calibration
		want func(p50, p90 float64) (float64, float64)
	}{
		"the ClusterQueue's adjustment": {
			cal:  Calibration{Q50: math.Log(2), Q90: math.Log(3), Eps: 2},
			want: func(p50, p90 float64) (float64, float64) { return publishWith(math.Log(2), math.Log(3), 2, p50, p90) },
		},
		"an applied priority adjustment replaces it": {
			cal: Calibration{Q50: math.Log(2), Q90: math.Log(3), Eps: 2,
				Priorities: map[int32]Adjustment{0: {Q50: math.Log(0.5), Q90: math.Log(0.75), Applied: true}}},
			want: func(p50, p90 float64) (float64, float64) {
				return publishWith(math.Log(0.5), math.Log(0.75), 2, p50, p90)
			},
		},
		"an unapplied priority adjustment does not": {
			cal: Calibration{Q50: math.Log(2), Q90: math.Log(3), Eps: 2,
				Priorities: map[int32]Adjustment{0: {Q50: math.Log(0.5), Q90: math.Log(0.75)}}},
			want: func(p50, p90 float64) (float64, float64) { return publishWith(math.Log(2), math.Log(3), 2, p50, p90) },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			scene := *rolled.Scene
			scene.calibration = tc.cal
			got := e.WhatIf(&scene, cpuShape(500), 0, 0)
			p50, p90 := tc.want(raw.P50.Seconds(), raw.P90.Seconds())
			want := [3]float64{raw.ExpectedWait.Seconds(), p50, p90}
			if diff := cmp.Diff(want, [3]float64{got.ExpectedWait.Seconds(), got.P50.Seconds(), got.P90.Seconds()}, cmpopts.EquateApprox(0, 1e-6)); diff != "" {
				t.Errorf("mean, P50, P90 (-want,+got):\n%s", diff)
			}
		})
	}
}

// A what-if of the pending workloads' shape, placed last, waits at least as
// long as the last of them, with the same random numbers; one that can
// never fit is Unfeasible with the partition's reason.
func TestWhatIfOnTheRolledScene(t *testing.T) {
	e, rolled := rollPaperQueue(t)
	got := e.WhatIf(rolled.Scene, cpuShape(500), 0, 0)
	if got.Position != 4 || !got.HasWait || got.Raw.ExpectedWaitSeconds < rolled.Estimates[3].Raw.ExpectedWaitSeconds {
		t.Errorf("what-if behind the queue: position %d, %+v; the last pending waits %v s", got.Position, got.Wait, rolled.Estimates[3].Raw.ExpectedWaitSeconds)
	}
	wantServers := ShapeServers{EffectiveServers: 4, BottleneckFlavor: "default", BottleneckResource: "cpu"}
	if diff := cmp.Diff(wantServers, got.Servers); diff != "" {
		t.Errorf("k_eff of the shape (-want,+got):\n%s", diff)
	}
	huge := e.WhatIf(rolled.Scene, cpuShape(20000), 0, 0)
	if !huge.Unfeasible || huge.HasWait || huge.Reason == "" {
		t.Errorf("20 CPUs on 2: %+v, want Unfeasible with a reason and no wait", huge)
	}
	urgent := e.WhatIf(rolled.Scene, cpuShape(500), 100, 0)
	if urgent.Position != 0 || urgent.Raw.ExpectedWaitSeconds > got.Raw.ExpectedWaitSeconds {
		t.Errorf("a higher priority: position %d, wait %v s; want the head and no longer than %v s", urgent.Position, urgent.Raw.ExpectedWaitSeconds, got.Raw.ExpectedWaitSeconds)
	}
}

// TestCompactPendingKeepsEveryWorkload checks, on random pending lists, that
// the compact record gives back every workload's class, priority and maximum
// execution time in order, and the same what-if position as a scan of the
// plain list.
func TestCompactPendingKeepsEveryWorkload(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := rng.IntN(40)
		var c compactPending
		plain := make([]forecast.Pending, n)
		classes := make([]uint32, n)
		for i := range n {
			classes[i] = uint32(rng.IntN(3))
			plain[i] = forecast.Pending{Priority: int32(rng.IntN(3)), MaxExecutionSeconds: float64(rng.IntN(2) * rng.IntN(100))}
			c.add(classes[i], plain[i])
		}
		priorities, maxExecs := runCursor{runs: c.priorities}, runCursor{runs: c.maxExecs}
		for i := range n {
			if c.classes[i] != classes[i] || priorities.at(i) != plain[i].Priority || float64(maxExecs.at(i)) != plain[i].MaxExecutionSeconds {
				t.Fatalf("trial %d, workload %d: got class %d, priority %d, max %d; want %d, %d, %v",
					trial, i, c.classes[i], priorities.at(i), maxExecs.at(i), classes[i], plain[i].Priority, plain[i].MaxExecutionSeconds)
			}
		}
		for _, priority := range []int32{-1, 0, 1, 2, 3} {
			want := 0
			for i := n - 1; i >= 0; i-- {
				if plain[i].Priority >= priority {
					want = i + 1
					break
				}
			}
			if got := whatIfPosition(c, priority); got != want {
				t.Fatalf("trial %d: position of priority %d = %d, want %d", trial, priority, got, want)
			}
		}
	}
}

// Without any service-time knowledge a what-if has a wait only when it would
// be at the head and fits the free quota now (MethodImmediate), and that wait
// is the time to its first admission opportunity, as a roll with a service
// law also gives it: a uniform phase of the 2 s cycle plus a latency drawn
// from {0.1, 0.3, 0.5, 0.7} s, whose mean is 1.4 s, median 1.4 s and 90th
// percentile 2.233 s (P(U·2 + L ≤ x) averaged over the four latencies).
func TestWhatIfWithoutServiceLawIsImmediateOnlyAtTheHeadWhenItFits(t *testing.T) {
	halfFull := func() Queue {
		q := paperQueue()
		q.Running = q.Running[:2] // 1 of 2 CPUs in use
		q.CyclePeriodSeconds = 2
		q.Stats.AdmissionLatency = 0.4
		q.Stats.AdmissionLatencySample = []float64{0.1, 0.3, 0.5, 0.7}
		return q
	}
	e := testEngine(t, engineConfig{})
	lawless, err := e.Roll(halfFull(), seed)
	if err != nil {
		t.Fatalf("Roll: %v", err)
	}
	if lawless.Scene.queue.Service != nil {
		t.Fatalf("the scene has a service law (%v); the test needs none", lawless.Method)
	}
	withLaw := testEngine(t, engineConfig{PriorMeanServiceSeconds: 20})
	lawful, err := withLaw.Roll(halfFull(), seed)
	if err != nil {
		t.Fatalf("Roll: %v", err)
	}
	// 256 replicas: the mean's standard error is about 0.04 s.
	firstOpportunity := [3]float64{1.4, 1.4, 2.233}
	tolerance := cmpopts.EquateApprox(0, 0.2)
	cases := map[string]struct {
		demand   int64
		priority int32
		wantWait bool
	}{
		"at the head, fits the free CPU":                   {demand: 1000, priority: 100, wantWait: true},
		"at the head, needs more than is free":             {demand: 1500, priority: 100},
		"behind the pending workloads, would fit if alone": {demand: 500, priority: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := e.WhatIf(lawless.Scene, cpuShape(tc.demand), tc.priority, 0)
			if !tc.wantWait {
				if got.HasWait || got.Method != "" && got.Method != MethodNone {
					t.Errorf("got a wait without a service law: %+v", got.Wait)
				}
				return
			}
			if !got.HasWait || got.Method != MethodImmediate {
				t.Fatalf("got %+v, want an Immediate wait", got.Wait)
			}
			raw := [3]float64{got.Raw.ExpectedWaitSeconds, got.Raw.P50Seconds, got.Raw.P90Seconds}
			if diff := cmp.Diff(firstOpportunity, raw, tolerance); diff != "" {
				t.Errorf("mean, P50, P90 of the Immediate wait (-want,+got):\n%s", diff)
			}
			published := [3]float64{got.ExpectedWait.Seconds(), got.P50.Seconds(), got.P90.Seconds()}
			if diff := cmp.Diff(raw, published, cmpopts.EquateApprox(0, 1e-6)); diff != "" {
				t.Errorf("published against the roll's own (-roll,+published):\n%s", diff)
			}
			ref := withLaw.WhatIf(lawful.Scene, cpuShape(tc.demand), tc.priority, 0)
			if ref.Method != MethodAPriori {
				t.Fatalf("the reference roll's method is %q, want APriori", ref.Method)
			}
			refRaw := [3]float64{ref.Raw.ExpectedWaitSeconds, ref.Raw.P50Seconds, ref.Raw.P90Seconds}
			if diff := cmp.Diff(firstOpportunity, refRaw, tolerance); diff != "" {
				t.Errorf("mean, P50, P90 of the roll with a 20 s law (-want,+got):\n%s", diff)
			}
		})
	}
}
