package forecast

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

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

// BenchmarkForecastPerfHarnessClusterQueue is one ClusterQueue of Kueue's
// performance harness at its baseline configuration, as the estimator
// might roll it mid-run: 60 CPU (its nominal 20 and some of what its
// cohort lends), LowerPriority preemption, three classes (small 1 CPU for
// 0.2 s at priority 50, medium 5 CPU for 0.5 s at 100, large 20 CPU for
// 1 s at 200), 323 pending in Kueue's order and more arriving at eight
// tenths of the harness's rates, service measured per priority.
func BenchmarkForecastPerfHarnessClusterQueue(b *testing.B) {
	q := perfHarnessQueue(b)
	f := mustNew(b)
	rng := rand.New(rand.NewPCG(3, 4))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := f.Forecast(q, rng); err != nil {
			b.Fatal(err)
		}
	}
}

// perfHarnessQueue is the ClusterQueue of
// BenchmarkForecastPerfHarnessClusterQueue.
func perfHarnessQueue(b testing.TB) Queue {
	r := rand.New(rand.NewPCG(5, 6))
	type class struct {
		milli    int64
		seconds  float64
		priority int32
		rate     float64
		pending  int
	}
	classes := []class{{20000, 1, 200, 0.8 / 1.2, 3}, {5000, 0.5, 100, 0.8 / 0.5, 20}, {1000, 0.2, 50, 0.8 / 0.1, 300}}
	q := Queue{
		Capacity:                 cpu(60000),
		Policy:                   BestEffortFIFO,
		ServiceByPriority:        map[int32]ServiceModel{},
		CyclePeriodSeconds:       0.02,
		AdmissionLatencySeconds:  0.05,
		RandomCyclePhase:         true,
		WithinClusterQueue:       PreemptionLowerPriority,
		PreemptionDelaySeconds:   0.3,
		PreemptionReactionSample: []float64{0.05, 0.1, 0.2, 0.4},
		PreemptionDelaySample:    []float64{0.2, 0.3, 0.5},
	}
	for _, c := range classes {
		obs := make([]float64, 200)
		for i := range obs {
			obs[i] = c.seconds * (0.9 + 0.2*r.Float64())
		}
		emp, err := NewEmpirical(obs)
		if err != nil {
			b.Fatal(err)
		}
		q.ServiceByPriority[c.priority] = emp
		q.Service = emp
		q.Arrivals = append(q.Arrivals, Arrival{RatePerSecond: c.rate, Options: []capacity.Quantities{cpu(c.milli)}, Priority: c.priority})
		for i := range c.pending {
			q.Pending = append(q.Pending, Pending{ID: fmt.Sprintf("ns/%d-%d", c.priority, i), Options: []capacity.Quantities{cpu(c.milli)}, Priority: c.priority, Quotable: true})
		}
	}
	q.Running = []Running{{Usage: cpu(5000), Priority: 100, AgeSeconds: 0.2}, {Usage: cpu(5000), Priority: 100, AgeSeconds: 0.1}}
	for i := range 10 {
		q.Running = append(q.Running, Running{Usage: cpu(1000), Priority: 50, AgeSeconds: 0.02 * float64(i)})
	}
	return q
}

// BenchmarkForecastAdmissionFairSharing is the 10 000-pending queue of
// BenchmarkForecast10000Pending with its workloads spread over 8
// LocalQueues, rolled without admission fair sharing (off) and with it
// (on: every admission opportunity brings the 8 usages to its time and
// scans the 24 lanes of shape and LocalQueue).
func BenchmarkForecastAdmissionFairSharing(b *testing.B) {
	const queues = 8
	base := benchQueue(b, 10000, BestEffortFIFO)
	for i := range base.Pending {
		base.Pending[i].LocalQueue = int32(1 + i%queues)
	}
	for i := range base.Running {
		base.Running[i].LocalQueue = int32(1 + i%queues)
	}
	afs := &AdmissionFairSharing{HalfLifeSeconds: 3600, SamplingIntervalSeconds: 300,
		ResourceWeights: map[string]float64{"memory": 1.0 / float64(gi)}}
	for i := range queues {
		afs.LocalQueues = append(afs.LocalQueues, LocalQueueUsage{Consumed: float64(i * 10), SinceUpdateSeconds: float64(i * 30), Weight: 1})
	}
	for _, tc := range []struct {
		name string
		afs  *AdmissionFairSharing
	}{{"off", nil}, {"on", afs}} {
		b.Run(tc.name, func(b *testing.B) {
			q := base
			q.AdmissionFairSharing = tc.afs
			f := mustNew(b)
			r := rand.New(rand.NewPCG(3, 4))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.Forecast(q, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
