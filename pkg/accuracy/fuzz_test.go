package accuracy

import (
	"encoding/binary"
	"math"
	"testing"
)

// decodeSamples reads samples from fuzz bytes, 17 bytes each: the bits of
// Predicted and of Actual (any float64, NaN and ±Inf included) and a batch
// label in [−8, 8).
func decodeSamples(data []byte) []Sample {
	var out []Sample
	for len(data) >= 17 && len(out) < 4096 {
		out = append(out, Sample{
			Predicted: math.Float64frombits(binary.LittleEndian.Uint64(data)),
			Actual:    math.Float64frombits(binary.LittleEndian.Uint64(data[8:])),
			Batch:     int(data[16]%16) - 8,
		})
		data = data[17:]
	}
	return out
}

func encodeSamples(samples ...Sample) []byte {
	var out []byte
	for _, s := range samples {
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(s.Predicted))
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(s.Actual))
		out = append(out, byte(s.Batch+8))
	}
	return out
}

func FuzzSummarize(f *testing.F) {
	f.Add(encodeSamples(handSamples()...), 5.0, 0.9, 3)
	f.Add(encodeSamples(), 0.0, 0.5, 1)
	f.Add(encodeSamples(Sample{Predicted: math.Inf(1), Actual: math.NaN()}, Sample{Predicted: -1e308, Actual: 1e308, Batch: 1}), math.NaN(), 1.0, 0)
	f.Add(encodeSamples(Sample{Predicted: 5e-324, Actual: 1e-300}, Sample{Predicted: 0, Actual: 1e-300, Batch: -8}), -1.0, 0.0, 2)
	f.Add(encodeSamples(Sample{Predicted: 1e12, Actual: 1e-9}, Sample{Predicted: -1e12, Actual: 1e12, Batch: 7}), math.Inf(1), 0.99, 16)
	f.Fuzz(func(t *testing.T, data []byte, relativeFloor, level float64, want int) {
		samples := decodeSamples(data)

		s := Summarize(samples, relativeFloor)
		if s.N+s.Dropped != len(samples) || s.RelativeN > s.N || (s.N > 0) != (s.Batches > 0) {
			t.Fatalf("inconsistent counts %+v for %d samples", s, len(samples))
		}
		for name, v := range map[string]float64{
			"MAE": s.MAE, "MedianAbsoluteError": s.MedianAbsoluteError,
			"MeanRelativeError": s.MeanRelativeError, "RelativeFloor": s.RelativeFloor,
		} {
			if !finiteNonNegative(v) {
				t.Fatalf("%s = %g", name, v)
			}
		}
		if !finite(s.Bias) || !finite(s.MeanPredicted) || !finite(s.MeanActual) {
			t.Fatalf("non-finite figure in %+v", s)
		}
		checkInterval(t, "MAEInterval", s.MAEInterval, s.MAE, s.Batches >= 2)
		checkInterval(t, "BiasInterval", s.BiasInterval, s.Bias, s.Batches >= 2)
		if s.MAEInterval.Low < 0 {
			t.Fatalf("MAE interval below 0: %+v", s.MAEInterval)
		}

		q, ok := ScoreQuantile(samples, level)
		if ok {
			if !finiteNonNegative(q.PinballLoss) || q.Coverage < 0 || q.Coverage > 1 {
				t.Fatalf("ScoreQuantile = %+v", q)
			}
			checkInterval(t, "CoverageInterval", q.CoverageInterval, q.Coverage, true)
		} else if q.PinballLoss != 0 || q.Coverage != 0 || q.CoverageInterval.Defined {
			t.Fatalf("ScoreQuantile not ok but scored: %+v", q)
		}

		// The samples against a copy predicting the mean actual wait.
		baseline := append([]Sample(nil), samples...)
		for i := range baseline {
			baseline[i].Predicted = s.MeanActual
		}
		if r, ok := CompareMAE(samples, baseline); ok {
			if !finiteNonNegative(r.Ratio) || r.N != s.N {
				t.Fatalf("CompareMAE = %+v with summary %+v", r, s)
			}
			checkInterval(t, "ratio Interval", r.Interval, r.Ratio, r.Batches >= 2)
		}

		// The same bytes as a histogram: bounds from the predictions,
		// counts from the actual waits.
		bounds := make([]float64, 0, len(samples)+1)
		counts := make([]float64, 0, len(samples)+1)
		for _, smp := range samples {
			bounds = append(bounds, smp.Predicted)
			counts = append(counts, smp.Actual)
		}
		bounds = append(bounds, math.Inf(1))
		counts = append(counts, float64(len(samples)))
		if v, ok := HistogramQuantile(level, bounds, counts); !finite(v) || !ok && v != 0 {
			t.Fatalf("HistogramQuantile = %g, %v", v, ok)
		}

		if want = want % 64; len(samples) > 0 {
			b := Batches(len(samples), want)
			if len(b) != len(samples) || b[0] != 0 || b[len(b)-1] >= max(want, 1) {
				t.Fatalf("Batches(%d, %d) = %v", len(samples), want, b)
			}
		}
	})
}
