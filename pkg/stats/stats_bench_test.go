package stats

import (
	"testing"
	"time"
)

var benchSink float64

func BenchmarkEventRateObserve(b *testing.B) {
	clock := newFakeClock()
	r, err := NewEventRate(clock, DecayOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		clock.Advance(time.Second)
		r.Observe()
	}
}

func BenchmarkEventRateRate(b *testing.B) {
	clock := newFakeClock()
	r, err := NewEventRate(clock, DecayOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for range 100 {
		clock.Advance(time.Second)
		r.Observe()
	}
	b.ReportAllocs()
	for b.Loop() {
		v, _ := r.Rate()
		s, _ := r.IntervalSCV()
		benchSink = v + s
	}
}

func BenchmarkServiceTimesObserve(b *testing.B) {
	for name, halfLife := range map[string]time.Duration{"uniform": 0, "decayed": time.Hour} {
		b.Run(name, func(b *testing.B) {
			clock := newFakeClock()
			s, err := NewServiceTimes(clock, newRand(1), ReservoirOptions{HalfLife: halfLife})
			if err != nil {
				b.Fatal(err)
			}
			for i := range 10_000 { // full reservoir: the replacement path
				s.Observe(float64(i))
			}
			b.ReportAllocs()
			v := 0.0
			for b.Loop() {
				clock.Advance(time.Second)
				v++
				s.Observe(v)
			}
		})
	}
}

func BenchmarkServiceTimesSummary(b *testing.B) {
	s, err := NewServiceTimes(newFakeClock(), newRand(1), ReservoirOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 10_000 {
		s.Observe(float64(i % 977))
	}
	b.ReportAllocs()
	for b.Loop() {
		s.Observe(5) // invalidate the sorted cache, as a new completion would
		m, _ := s.Mean()
		c, _ := s.SCV()
		q, _, _ := s.Quantile(0.9)
		benchSink = m + c + q
	}
}

func BenchmarkEMAObserve(b *testing.B) {
	e, err := NewEMA(DefaultEMAAlpha)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		e.Observe(12.5)
	}
}
