package stats

import (
	"encoding/binary"
	"math"
	"testing"
	"time"
)

func checkGetter(t *testing.T, name string, v float64) {
	t.Helper()
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		t.Fatalf("%s = %g, want finite and >= 0", name, v)
	}
}

// FuzzEstimators drives every estimator with an arbitrary sequence of
// (clock step, timestamp offset, value) triples and checks that no getter
// ever returns NaN, Inf or a negative value and the reservoir stays bounded.
func FuzzEstimators(f *testing.F) {
	seed := func(steps ...[3]float64) []byte {
		var b []byte
		for _, s := range steps {
			b = binary.LittleEndian.AppendUint64(b, uint64(int64(s[0]*1e9)))
			b = binary.LittleEndian.AppendUint64(b, uint64(int64(s[1]*1e9)))
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s[2]))
		}
		return b
	}
	f.Add(seed([3]float64{1, 0, 10}, [3]float64{2, 0, 20}, [3]float64{2, -5, 30}), int64(time.Minute))
	f.Add(seed([3]float64{0, 0, math.NaN()}, [3]float64{0, 0, -1}, [3]float64{0, 0, math.Inf(1)}), int64(0))
	f.Add(seed([3]float64{-3, -1e9, 1e308}, [3]float64{1e9, 1e9, 5e-324}), int64(1))
	f.Add([]byte{1, 2, 3}, int64(-5))
	f.Fuzz(func(t *testing.T, ops []byte, halfLife int64) {
		clock := newFakeClock()
		rate, err := NewEventRate(clock, DecayOptions{HalfLife: time.Duration(halfLife), MinSamples: 2})
		if err != nil {
			if halfLife >= 0 {
				t.Fatalf("NewEventRate rejected half-life %d: %v", halfLife, err)
			}
			return
		}
		svc, err := NewServiceTimes(clock, newRand(1), ReservoirOptions{Capacity: 8, HalfLife: time.Duration(halfLife)})
		if err != nil {
			t.Fatal(err)
		}
		ema, err := NewEMA(DefaultEMAAlpha)
		if err != nil {
			t.Fatal(err)
		}
		for len(ops) >= 24 {
			step := time.Duration(int64(binary.LittleEndian.Uint64(ops)))
			offset := time.Duration(int64(binary.LittleEndian.Uint64(ops[8:])))
			value := math.Float64frombits(binary.LittleEndian.Uint64(ops[16:]))
			ops = ops[24:]

			clock.Advance(step)
			at := clock.Now().Add(offset)
			rate.ObserveAt(at)
			svc.ObserveAt(at, value)
			ema.Observe(value)

			r, _ := rate.Rate()
			checkGetter(t, "Rate", r)
			m, _ := rate.MeanInterval()
			checkGetter(t, "MeanInterval", m)
			c, _ := rate.IntervalSCV()
			checkGetter(t, "IntervalSCV", c)
			if svc.Len() > svc.Capacity() {
				t.Fatalf("reservoir holds %d > %d", svc.Len(), svc.Capacity())
			}
			sm, _ := svc.Mean()
			checkGetter(t, "Mean", sm)
			sc, _ := svc.SCV()
			checkGetter(t, "SCV", sc)
			for _, q := range []float64{0, 0.5, 0.9, 1} {
				v, _, err := svc.Quantile(q)
				if err != nil {
					t.Fatal(err)
				}
				checkGetter(t, "Quantile", v)
			}
			ev, _ := ema.Value()
			checkGetter(t, "EMA", ev)
		}
	})
}
