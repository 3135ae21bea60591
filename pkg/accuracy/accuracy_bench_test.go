package accuracy

import (
	"fmt"
	"testing"
)

var (
	benchSummary Summary
	benchRatio   MAERatio
	benchFloat   float64
)

// benchSamples returns n samples in 20 batches, as from one evaluation level.
func benchSamples(n int, seed uint64) []Sample {
	r := newRand(seed)
	batch := Batches(n, 20)
	out := make([]Sample, n)
	for i := range out {
		actual := r.ExpFloat64() * 30
		out[i] = Sample{Predicted: actual + 5*r.NormFloat64(), Actual: actual, Batch: batch[i]}
	}
	return out
}

func BenchmarkSummarize(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		samples := benchSamples(n, 1)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				benchSummary = Summarize(samples, 1)
			}
		})
	}
}

func BenchmarkCompareMAE(b *testing.B) {
	numerator, denominator := benchSamples(10_000, 1), benchSamples(10_000, 1)
	for i := range denominator {
		denominator[i].Predicted *= 1.5
	}
	for b.Loop() {
		benchRatio, _ = CompareMAE(numerator, denominator)
	}
}

func BenchmarkStudentT975(b *testing.B) {
	for b.Loop() {
		benchFloat = StudentT975(19)
	}
}
