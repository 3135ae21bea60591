package stats

import (
	"testing"
	"time"
)

// Observe paths must not allocate: they run on Kueue's scheduling path.
func TestObserveDoesNotAllocate(t *testing.T) {
	clock := newFakeClock()
	rate, err := NewEventRate(clock, DecayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := NewServiceTimes(clock, newRand(1), ReservoirOptions{Capacity: 16, HalfLife: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ema, err := NewEMA(DefaultEMAAlpha)
	if err != nil {
		t.Fatal(err)
	}
	v := 0.0
	allocs := testing.AllocsPerRun(1000, func() {
		clock.Advance(time.Second)
		v++
		rate.Observe()
		svc.Observe(v) // fills, then replaces
		ema.Observe(v)
		_, _ = rate.Rate()
		_, _ = svc.Mean()
		_, _, _ = svc.Quantile(0.5)
	})
	if allocs != 0 {
		t.Errorf("Observe and getters allocate %g times per run, want 0", allocs)
	}
}
