package forecast

import (
	"math/rand/v2"
	"testing"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// benchCohort is one cohort of members ClusterQueues, each with 16 CPU,
// 64Gi and 4 spot CPU of nominal quota, 10 running workloads and
// perMember pending ones of benchQueue's three shapes; every other member
// may borrow at most 8 CPU, every third lends at most half its CPU.
func benchCohort(b *testing.B, members, perMember int) Cohort {
	spot := capacity.FlavorResource{Flavor: "spot", Resource: "cpu"}
	var c Cohort
	for i := range members {
		q := benchQueue(b, perMember, BestEffortFIFO)
		q.Capacity = nil
		q.Running = q.Running[:10]
		m := CohortMember{Queue: q, Nominal: capacity.Quantities{cpuFR: 16000, memFR: 64 * gi, spot: 4000}}
		if i%2 == 1 {
			m.BorrowingLimit = cpu(8000)
		}
		if i%3 == 2 {
			m.LendingLimit = cpu(8000)
		}
		c.Members = append(c.Members, m)
	}
	return c
}

func benchmarkForecastCohort(b *testing.B, members, perMember int) {
	c := benchCohort(b, members, perMember)
	f := mustNew(b)
	r := rand.New(rand.NewPCG(3, 4))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := f.ForecastCohort(c, r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkForecastCohort100Queues10000Pending is the cost goal of the
// joint roll: a cohort of 100 ClusterQueues with 100 pending workloads
// each, default samples and horizon (≤ 50 ms).
func BenchmarkForecastCohort100Queues10000Pending(b *testing.B) { benchmarkForecastCohort(b, 100, 100) }

// BenchmarkForecastCohort10Queues1000Pending: a small cohort.
func BenchmarkForecastCohort10Queues1000Pending(b *testing.B) { benchmarkForecastCohort(b, 10, 100) }

// BenchmarkForecast100QueuesAlone100Pending is the baseline: the same 100
// ClusterQueues rolled one by one, each alone with its nominal quota.
func BenchmarkForecast100QueuesAlone100Pending(b *testing.B) {
	c := benchCohort(b, 100, 100)
	f := mustNew(b)
	r := rand.New(rand.NewPCG(3, 4))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, m := range c.Members {
			q := m.Queue
			q.Capacity = m.Nominal
			if _, err := f.Forecast(q, r); err != nil {
				b.Fatal(err)
			}
		}
	}
}
