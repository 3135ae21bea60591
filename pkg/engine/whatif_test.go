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
	e := testEngine(t, Config{PriorMeanServiceSeconds: 20})
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
				Priorities: map[int32]PriorityAdjustment{0: {Q50: math.Log(0.5), Q90: math.Log(0.75), Applied: true}}},
			want: func(p50, p90 float64) (float64, float64) {
				return publishWith(math.Log(0.5), math.Log(0.75), 2, p50, p90)
			},
		},
		"an unapplied priority adjustment does not": {
			cal: Calibration{Q50: math.Log(2), Q90: math.Log(3), Eps: 2,
				Priorities: map[int32]PriorityAdjustment{0: {Q50: math.Log(0.5), Q90: math.Log(0.75)}}},
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
