package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
)

// TestRollWaitsAreSaneOnRandomQueues rolls random queues, with statistics
// that include garbage (NaN, infinite and negative figures), and checks the
// contract every caller relies on: no error for a valid queue, one estimate
// per pending workload, every wait finite and non-negative with P50 ≤ P90
// within the horizon, and no wait for an Unfeasible workload.
func TestRollWaitsAreSaneOnRandomQueues(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	garbage := []float64{0, -1, math.NaN(), math.Inf(1), 0.5, 30}
	pick := func() float64 { return garbage[rng.IntN(len(garbage))] }
	e := testEngine(t, engineConfig{PriorMeanServiceSeconds: 20, HorizonSeconds: 3600})
	for trial := range 100 {
		q := Queue{Capacity: cpuQueue(int64(1+rng.IntN(8)) * 1000)}
		for range 1 + rng.IntN(3) {
			q.Classes = append(q.Classes, cpuShape(int64(1+rng.IntN(12))*500))
		}
		for range rng.IntN(6) {
			c := rng.IntN(len(q.Classes))
			q.Running = append(q.Running, Running{Class: c, Usage: capacity.Quantities{{Flavor: "default", Resource: "cpu"}: q.Classes[c].PodSets[0].Requests["cpu"]},
				AgeSeconds: pick(), Priority: int32(rng.IntN(2))})
		}
		for i := range rng.IntN(10) {
			q.Pending = append(q.Pending, Pending{ID: fmt.Sprint(i), Class: rng.IntN(len(q.Classes)), Priority: int32(rng.IntN(2)), MaxExecutionSeconds: max(pick(), 0)})
		}
		q.Policy = forecast.Policy(rng.IntN(2))
		q.CyclePeriodSeconds = pick()
		q.Stats = Stats{AdmissionLatency: pick(), PreemptionDelay: pick(), ArrivalRate: pick(), HasArrivals: rng.IntN(2) == 0,
			PriorityRates: map[int32]float64{1: pick()}, PriorityWindows: map[int32]float64{1: pick()}}
		got, err := e.Roll(q, [2]uint64{uint64(trial), 1})
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if len(got.Estimates) != len(q.Pending) {
			t.Fatalf("trial %d: %d estimates for %d pending", trial, len(got.Estimates), len(q.Pending))
		}
		for i, est := range got.Estimates {
			if est.Unfeasible && est.HasWait {
				t.Errorf("trial %d, workload %d: Unfeasible with a wait", trial, i)
			}
			if !est.HasWait {
				continue
			}
			for _, d := range []time.Duration{est.ExpectedWait, est.P50, est.P90} {
				if d < 0 {
					t.Errorf("trial %d, workload %d: negative wait %+v", trial, i, est.Wait)
				}
			}
			if est.P50 > est.P90 || est.P90 > time.Hour {
				t.Errorf("trial %d, workload %d: P50 %v, P90 %v; want P50 ≤ P90 ≤ 1h", trial, i, est.P50, est.P90)
			}
			if r := est.Raw.ExpectedWaitSeconds; math.IsNaN(r) || math.IsInf(r, 0) || r < 0 {
				t.Errorf("trial %d, workload %d: raw mean %v", trial, i, r)
			}
		}
	}
}
