package capacity

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// benchClusterQueue is a typical GPU ClusterQueue: cpu/memory/pods in three
// flavors and GPUs in two, with cohort borrowing on some.
func benchClusterQueue() *ClusterQueue {
	return cq(
		group(res("cpu", "memory", "pods"),
			flavor("reserved", nominal(cores(64)), nominal(256*gi), nominal(100)),
			flavor("on-demand", Quota{Nominal: cores(128), Borrowable: cores(64)}, Quota{Nominal: 512 * gi, Borrowable: 128 * gi}, nominal(200)),
			flavor("spot", Quota{Nominal: cores(32), Borrowable: Unlimited}, Quota{Nominal: 128 * gi, Borrowable: Unlimited}, nominal(500))),
		group(res("nvidia.com/gpu"),
			flavor("a100", nominal(16)),
			flavor("h100", Quota{Nominal: 8, Borrowable: 8})),
	)
}

// benchWorkloads draws n workloads of 1-3 pod sets of 1-4 pods; about a
// quarter are Unfeasible (more GPUs than the queue can ever hold, or an
// uncovered resource), which exercises the reason-building path.
func benchWorkloads(n int) []Workload {
	r := rand.New(rand.NewPCG(11, 12))
	out := make([]Workload, n)
	for i := range out {
		var w Workload
		for p := range 1 + r.IntN(3) {
			req := map[string]int64{
				"cpu":    int64(250 * (1 + r.IntN(32))),
				"memory": int64(1+r.IntN(64)) * 256 * mi,
			}
			if r.IntN(2) == 0 {
				req["nvidia.com/gpu"] = int64(1 + r.IntN(8))
			}
			if r.IntN(40) == 0 {
				req["example.com/fpga"] = 1
			}
			w.PodSets = append(w.PodSets, PodSet{Name: fmt.Sprintf("ps%d", p), Count: int64(1 + r.IntN(4)), Requests: req})
		}
		out[i] = w
	}
	return out
}

// BenchmarkClassify10k classifies 10,000 pending workloads against one
// ClusterQueue per iteration and reports the cost per workload.
func BenchmarkClassify10k(b *testing.B) {
	q := benchClusterQueue()
	ws := benchWorkloads(10_000)
	counts := map[Admissibility]int{}
	for _, w := range ws {
		counts[Classify(q, w).Admissibility]++
	}
	b.Logf("verdicts: %v", counts)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for b.Loop() {
		for _, w := range ws {
			_ = Classify(q, w)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	perWorkload := float64(b.N) * float64(len(ws))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/perWorkload, "ns/workload")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/perWorkload, "allocs/workload")
}

func BenchmarkClassify(b *testing.B) {
	q := benchClusterQueue()
	cases := map[string]Workload{
		"quotable-1podset": one(map[string]int64{"cpu": cores(4), "memory": 16 * gi, "nvidia.com/gpu": 2}),
		"quotable-3podsets": workload(
			podSet("driver", 1, map[string]int64{"cpu": cores(2), "memory": 8 * gi}),
			podSet("workers", 4, map[string]int64{"cpu": cores(8), "memory": 32 * gi, "nvidia.com/gpu": 4}),
			podSet("ps", 2, map[string]int64{"cpu": cores(1), "memory": 4 * gi})),
		"unfeasible-gpu": one(map[string]int64{"cpu": cores(4), "nvidia.com/gpu": 64}),
	}
	for name, w := range cases {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Classify(q, w)
			}
		})
		b.Run(name+"/verdict", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Verdict(q, w)
			}
		})
	}
}

func BenchmarkKEff(b *testing.B) {
	q := benchClusterQueue()
	w := workload(
		podSet("driver", 1, map[string]int64{"cpu": cores(2), "memory": 8 * gi}),
		podSet("workers", 4, map[string]int64{"cpu": cores(8), "memory": 32 * gi, "nvidia.com/gpu": 1}))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := KEff(q, w, BasisNominal); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkKEffMix(b *testing.B) {
	q := benchClusterQueue()
	ws := benchWorkloads(8)
	classes := make([]Class, len(ws))
	for i, w := range ws {
		delete(w.PodSets[0].Requests, "example.com/fpga")
		classes[i] = Class{Workload: w, Rate: float64(i + 1)}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := KEffMix(q, classes, BasisExpectedBorrowing); err != nil {
			b.Fatal(err)
		}
	}
}
