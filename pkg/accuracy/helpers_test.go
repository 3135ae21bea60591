package accuracy

import (
	"math"
	"math/rand/v2"

	"github.com/google/go-cmp/cmp/cmpopts"
)

// approx compares floats to a relative tolerance of 1e-9 (1e-12 absolute
// near zero).
var approx = cmpopts.EquateApprox(1e-9, 1e-12)

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func finiteNonNegative(v float64) bool { return finite(v) && v >= 0 }

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// handSamples is the worked example of the tests: six workloads in three
// batches of two, with errors e = Predicted − Actual of 2, −4 | 0, 6 | 2, −1.
func handSamples() []Sample {
	return []Sample{
		{Predicted: 10, Actual: 8, Batch: 0},
		{Predicted: 5, Actual: 9, Batch: 0},
		{Predicted: 3, Actual: 3, Batch: 1},
		{Predicted: 7, Actual: 1, Batch: 1},
		{Predicted: 12, Actual: 10, Batch: 2},
		{Predicted: 4, Actual: 5, Batch: 2},
	}
}

// withPredictions returns samples with the Actual and Batch of base and the
// given predictions.
func withPredictions(base []Sample, predicted ...float64) []Sample {
	out := make([]Sample, len(base))
	for i := range base {
		out[i] = Sample{Predicted: predicted[i], Actual: base[i].Actual, Batch: base[i].Batch}
	}
	return out
}
