package queueing

import "testing"

var benchSink float64

func benchmarkErlangC(b *testing.B, servers int, rho float64) {
	for b.Loop() {
		benchSink = ErlangC(servers, rho)
	}
}

func BenchmarkErlangC(b *testing.B) {
	b.Run("k=4/rho=0.64", func(b *testing.B) { benchmarkErlangC(b, 4, 0.64) })
	b.Run("k=1000/rho=0.9", func(b *testing.B) { benchmarkErlangC(b, 1000, 0.9) })
	b.Run("k=1000/rho=0.999", func(b *testing.B) { benchmarkErlangC(b, 1000, 0.999) })
	b.Run("k=100000/rho=0.5", func(b *testing.B) { benchmarkErlangC(b, 100_000, 0.5) })
	b.Run("k=100000/rho=0.99", func(b *testing.B) { benchmarkErlangC(b, 100_000, 0.99) })
	b.Run("k=100000/rho=0.99999", func(b *testing.B) { benchmarkErlangC(b, 100_000, 0.99999) })
}

// BenchmarkErlangBFullRecursion is the un-windowed O(k) recursion, for
// comparison with BenchmarkErlangC at the same k.
func BenchmarkErlangBFullRecursion(b *testing.B) {
	b.Run("k=1000", func(b *testing.B) {
		for b.Loop() {
			benchSink = fullErlangB(1000, 900)
		}
	})
	b.Run("k=100000", func(b *testing.B) {
		for b.Loop() {
			benchSink = fullErlangB(100_000, 99_000)
		}
	})
}

func BenchmarkAnalyze(b *testing.B) {
	m := Model{Servers: 64, ArrivalRate: 2, PreemptionRate: 0.1, MeanService: 25, ServiceSCV: 0.8, ArrivalSCV: 1.2}
	for b.Loop() {
		r, err := Analyze(m)
		if err != nil {
			b.Fatal(err)
		}
		benchSink = r.Approximation1.MeanWait
	}
}
