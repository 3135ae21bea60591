package forecast

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// benchQueue is one ClusterQueue of 64 CPU, 256Gi and 16 spot CPU with 40
// running workloads (60 CPU, 240Gi) and n pending of three demand shapes (one with two flavor
// options), served by an empirical model of 1 000 completions.
func benchQueue(b *testing.B, n int, policy Policy) Queue {
	r := rand.New(rand.NewPCG(1, 2))
	obs := make([]float64, 1000)
	for i := range obs {
		obs[i] = 5 + 600*r.ExpFloat64()
	}
	emp, err := NewEmpirical(obs)
	if err != nil {
		b.Fatal(err)
	}
	spot := capacity.FlavorResource{Flavor: "spot", Resource: "cpu"}
	q := Queue{
		Capacity: capacity.Quantities{cpuFR: 64000, memFR: 256 * gi, spot: 16000},
		Service:  emp,
		Policy:   policy,
	}
	shapes := [][]capacity.Quantities{
		{cpuMem(1000, 4*gi)},
		{cpuMem(2000, 8*gi), {spot: 2000}},
		{cpuMem(500, 16*gi)},
	}
	for i := range 40 {
		q.Running = append(q.Running, Running{Usage: shapes[i%2][0], AgeSeconds: 30 * float64(i), MaxExecutionSeconds: 3600})
	}
	for i := range n {
		q.Pending = append(q.Pending, Pending{
			ID:       fmt.Sprintf("ns/job-%d", i),
			Options:  shapes[i%3],
			Quotable: i%50 != 7,
		})
	}
	return q
}

func benchmarkForecast(b *testing.B, n int, policy Policy) {
	q := benchQueue(b, n, policy)
	f := mustNew(b)
	r := rand.New(rand.NewPCG(3, 4))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := f.Forecast(q, r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkForecast10000Pending is the cost goal: 10 000 pending workloads
// in one ClusterQueue with the default samples and horizon (≤ 5 ms).
func BenchmarkForecast10000Pending(b *testing.B) { benchmarkForecast(b, 10000, BestEffortFIFO) }

func BenchmarkForecast10000PendingStrict(b *testing.B) { benchmarkForecast(b, 10000, StrictFIFO) }

func BenchmarkForecast100Pending(b *testing.B) { benchmarkForecast(b, 100, BestEffortFIFO) }

// BenchmarkForecast1000DistinctShapes is the BestEffortFIFO worst case:
// every pending workload has its own demand shape.
func BenchmarkForecast1000DistinctShapes(b *testing.B) {
	q := benchQueue(b, 1000, BestEffortFIFO)
	for i := range q.Pending {
		q.Pending[i].Options = []capacity.Quantities{cpuMem(int64(100+i), gi)}
	}
	f := mustNew(b)
	r := rand.New(rand.NewPCG(3, 4))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := f.Forecast(q, r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkForecast10000PendingPreempting is the 10 000-pending queue with
// three priorities that preempt (LowerPriority, restarts): half the
// running workloads and every tenth pending one at priority 1, an arrival
// class of priority 2 (one every 60 s) that preempts both.
func BenchmarkForecast10000PendingPreempting(b *testing.B) {
	q := benchQueue(b, 10000, BestEffortFIFO)
	q.WithinClusterQueue = PreemptionLowerPriority
	q.PreemptedRestart = true
	for i := range q.Running {
		q.Running[i].Priority = int32(i % 2)
	}
	// Kueue's order: the priority-1 workloads first.
	high := make([]Pending, 0, len(q.Pending))
	var low []Pending
	for i, p := range q.Pending {
		if i%10 == 0 {
			p.Priority = 1
			high = append(high, p)
			continue
		}
		low = append(low, p)
	}
	q.Pending = append(high, low...)
	q.Arrivals = []Arrival{{RatePerSecond: 1.0 / 60, Options: []capacity.Quantities{cpuMem(1000, 4*gi)}, Priority: 2}}
	f := mustNew(b)
	r := rand.New(rand.NewPCG(3, 4))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := f.Forecast(q, r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkForecastSmallSampleBootstrap and
// BenchmarkForecastSmallSampleCensoredBootstrap are benchQueue with 100
// pending workloads served by a bootstrap of 40 completions, without and
// with the 40 running workloads' ages as censored service times: the cost
// of the imputation and sort each replica's resample then takes (80
// values instead of 40).
func BenchmarkForecastSmallSampleBootstrap(b *testing.B) {
	benchmarkSmallSample(b, false)
}

func BenchmarkForecastSmallSampleCensoredBootstrap(b *testing.B) {
	benchmarkSmallSample(b, true)
}

func benchmarkSmallSample(b *testing.B, censored bool) {
	q := benchQueue(b, 100, BestEffortFIFO)
	r := rand.New(rand.NewPCG(5, 6))
	obs := make([]float64, 40)
	for i := range obs {
		obs[i] = 5 + 600*r.ExpFloat64()
	}
	var ages []float64
	if censored {
		for _, run := range q.Running {
			ages = append(ages, run.AgeSeconds)
		}
	}
	svc, err := NewCensoredBootstrap(obs, ages)
	if err != nil {
		b.Fatal(err)
	}
	q.Service = svc
	f := mustNew(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Forecast(q, r); err != nil {
			b.Fatal(err)
		}
	}
}
