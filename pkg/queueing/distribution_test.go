package queueing

import (
	"errors"
	"math"
	"testing"
)

func TestWaitQuantileHandValues(t *testing.T) {
	// M/M/1, ρ = 0.5, E[S] = 10: C = 0.5, θ = E[S]/(1−ρ) = 20 s.
	mm1, err := MMkWait(1, 0.5, 10)
	if err != nil {
		t.Fatal(err)
	}
	// M/M/4 at the paper's point: C = 0.340387, θ = 13.8889 s.
	mm4, err := MMkWait(4, 0.64, 20)
	if err != nil {
		t.Fatal(err)
	}
	// Approximation 1 with C_S² = 0: C kept, θ halved to 6.94444 s.
	det4, err := PaperApproximation1(4, 0.64, 20, 0)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		d    WaitDistribution
		q    float64
		want float64
	}{
		"M/M/1 median is zero since C <= 1-q": {d: mm1, q: 0.5, want: 0},
		"M/M/1 q=0.75: 20 ln 2":               {d: mm1, q: 0.75, want: 13.862944},
		"M/M/1 q=0.9: 20 ln 5":                {d: mm1, q: 0.9, want: 32.188758},
		"M/M/4 P50 is zero":                   {d: mm4, q: 0.5, want: 0},
		// 13.8889 · ln(0.340387/0.1) = 13.8889 · 1.224916 = 17.01273 s.
		"M/M/4 P90": {d: mm4, q: 0.9, want: 17.01273},
		// Half the conditional mean gives half the quantile.
		"Approximation 1 deterministic P90": {d: det4, q: 0.9, want: 8.506366},
		"q just below C":                    {d: mm4, q: 1 - cPaper + 1e-12, want: 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := tc.d.Quantile(tc.q)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if math.Abs(got-tc.want) > 1e-5*math.Max(1, tc.want) {
				t.Errorf("Quantile(%g) = %.9g, want %.9g", tc.q, got, tc.want)
			}
		})
	}
}

func TestWaitQuantileErrors(t *testing.T) {
	stable, err := MMkWait(2, 0.5, 10)
	if err != nil {
		t.Fatal(err)
	}
	unstable, err := MMkWait(2, 1.5, 10)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		d       WaitDistribution
		q       float64
		wantErr error
	}{
		"q zero":               {d: stable, q: 0, wantErr: ErrInvalidInput},
		"q one":                {d: stable, q: 1, wantErr: ErrInvalidInput},
		"q negative":           {d: stable, q: -0.5, wantErr: ErrInvalidInput},
		"q above one":          {d: stable, q: 1.5, wantErr: ErrInvalidInput},
		"q NaN":                {d: stable, q: math.NaN(), wantErr: ErrInvalidInput},
		"unstable queue":       {d: unstable, q: 0.5, wantErr: ErrUnstable},
		"zero value":           {d: WaitDistribution{}, q: 0.9, wantErr: ErrUnstable},
		"bad q beats unstable": {d: unstable, q: 2, wantErr: ErrInvalidInput},
		// θ = 1e308/1e-10 overflows.
		"overflowing conditional mean": {d: WaitDistribution{Stable: true, WaitProbability: 1e-10, MeanWait: 1e308}, q: 1 - 1e-15, wantErr: ErrUnstable},
		// θ = 1e308 is finite, θ·ln(1/1e-15) is not.
		"overflowing quantile": {d: WaitDistribution{Stable: true, WaitProbability: 1, MeanWait: 1e308}, q: 1 - 1e-15, wantErr: ErrUnstable},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := tc.d.Quantile(tc.q)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Quantile(%g) error = %v, want %v", tc.q, err, tc.wantErr)
			}
			if got != 0 {
				t.Errorf("Quantile(%g) = %g with an error, want 0", tc.q, got)
			}
		})
	}
}

func TestWaitSurvival(t *testing.T) {
	mm1, err := MMkWait(1, 0.5, 10)
	if err != nil {
		t.Fatal(err)
	}
	unstable, err := MMkWait(1, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	none, err := MMkWait(3, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		d    WaitDistribution
		t    float64
		want float64
	}{
		"at zero is C":          {d: mm1, t: 0, want: 0.5},
		"0.5·exp(−10/20)":       {d: mm1, t: 10, want: 0.30326533},
		"infinite time":         {d: mm1, t: math.Inf(1), want: 0},
		"negative time":         {d: mm1, t: -1, want: 1},
		"NaN time":              {d: mm1, t: math.NaN(), want: 1},
		"unstable never clears": {d: unstable, t: 1e9, want: 1},
		"nobody waits":          {d: none, t: 0, want: 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			assertApprox(t, "Survival", tc.d.Survival(tc.t), tc.want, 1e-7)
		})
	}
}

func TestConditionalMeanWait(t *testing.T) {
	mm1, err := MMkWait(1, 0.5, 10)
	if err != nil {
		t.Fatal(err)
	}
	if theta, ok := mm1.ConditionalMeanWait(); !ok || math.Abs(theta-20) > 1e-12 {
		t.Errorf("M/M/1 θ = %g, %v; want 20, true", theta, ok)
	}
	if theta, ok := (WaitDistribution{}).ConditionalMeanWait(); ok || theta != 0 {
		t.Errorf("unstable θ = %g, %v; want 0, false", theta, ok)
	}
	if theta, ok := (WaitDistribution{Stable: true}).ConditionalMeanWait(); !ok || theta != 0 {
		t.Errorf("no-wait θ = %g, %v; want 0, true", theta, ok)
	}
}
