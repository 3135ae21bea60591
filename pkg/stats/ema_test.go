package stats

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestNewEMA(t *testing.T) {
	tests := map[string]struct {
		alpha   float64
		wantErr bool
	}{
		"paper default": {alpha: DefaultEMAAlpha},
		"one":           {alpha: 1},
		"tiny":          {alpha: 1e-9},
		"zero":          {alpha: 0, wantErr: true},
		"negative":      {alpha: -0.3, wantErr: true},
		"above one":     {alpha: 1.3, wantErr: true},
		"NaN":           {alpha: math.NaN(), wantErr: true},
		"infinite":      {alpha: math.Inf(1), wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e, err := NewEMA(tc.alpha)
			if tc.wantErr {
				if !errors.Is(err, ErrInvalidInput) || e != nil {
					t.Fatalf("got %v, %v; want nil, ErrInvalidInput", e, err)
				}
				return
			}
			if err != nil || e.Alpha() != tc.alpha {
				t.Fatalf("got %v, %v", e, err)
			}
		})
	}
}

func TestEMAHandValues(t *testing.T) {
	e, err := NewEMA(DefaultEMAAlpha)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := e.Value(); v != 0 || ok {
		t.Errorf("Value before any observation = %g, %v; want 0, false", v, ok)
	}
	// First observation initialises; then 0.3·x + 0.7·prev:
	// 10 → 10; 20 → 6 + 7 = 13; 0 → 9.1; 5 → 1.5 + 6.37 = 7.87.
	for i, step := range []struct{ x, want float64 }{{10, 10}, {20, 13}, {0, 9.1}, {5, 7.87}} {
		if !e.Observe(step.x) {
			t.Fatalf("Observe(%g) rejected", step.x)
		}
		v, ok := e.Value()
		assertOK(t, "Value", ok, true)
		assertApprox(t, "EMA after observation "+string(rune('1'+i)), v, step.want, 1e-12)
	}
	// Invalid observations leave it unchanged.
	for _, bad := range []float64{-3, math.NaN(), math.Inf(1)} {
		if e.Observe(bad) {
			t.Errorf("Observe(%g) accepted", bad)
		}
	}
	v, _ := e.Value()
	assertApprox(t, "EMA after rejected observations", v, 7.87, 1e-12)
	if e.Count() != 4 || e.Rejected() != 3 {
		t.Errorf("Count %d, Rejected %d; want 4, 3", e.Count(), e.Rejected())
	}
}

func TestEMARejectedFirstObservationDoesNotInitialise(t *testing.T) {
	e, err := NewEMA(0.5)
	if err != nil {
		t.Fatal(err)
	}
	e.Observe(math.NaN())
	if _, ok := e.Value(); ok {
		t.Fatalf("ok after only a rejected observation")
	}
	e.Observe(8)
	if v, ok := e.Value(); v != 8 || !ok {
		t.Errorf("Value = %g, %v; want 8, true", v, ok)
	}
}

func TestEMAAlphaOneFollowsLatest(t *testing.T) {
	e, err := NewEMA(1)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []float64{3, 9, 1} {
		e.Observe(x)
	}
	if v, _ := e.Value(); v != 1 {
		t.Errorf("Value = %g, want the latest observation 1", v)
	}
}

func TestEMASeed(t *testing.T) {
	now := newFakeClock().Now()
	// Waits in admission order: 10 (admitted at −50), 20 (at −40), 0 (at −30).
	spans := []Span{
		{Start: now.Add(-30 * time.Second), End: now.Add(-30 * time.Second)},
		{Start: now.Add(-60 * time.Second), End: now.Add(-50 * time.Second)},
		{Start: now.Add(-10 * time.Second), End: now.Add(-20 * time.Second)}, // negative: rejected
		{Start: now.Add(-60 * time.Second), End: now.Add(-40 * time.Second)},
	}
	e, err := NewEMA(DefaultEMAAlpha)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Seed(spans); got != 3 {
		t.Errorf("Seed accepted %d, want 3", got)
	}
	v, _ := e.Value()
	assertApprox(t, "seeded EMA", v, 9.1, 1e-12)
}
