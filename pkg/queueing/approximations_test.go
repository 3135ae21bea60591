package queueing

import (
	"errors"
	"math"
	"testing"
)

// cPaper is C(4, 0.64), checked against the hand value 0.340389 in
// TestErlangCHandValues; E[S]/(k(1−ρ)) = 20/(4·0.36) = 13.8889 s.
const cPaper = 0.34038735123334807

func TestWaitFormulasHandValues(t *testing.T) {
	tests := map[string]struct {
		wait     func() (WaitDistribution, error)
		wantC    float64
		wantMean float64
	}{
		// M/M/1: E[W] = ρ·E[S]/(1−ρ) = 0.5·10/0.5 = 10 s.
		"M/M/1 exact": {
			wait:  func() (WaitDistribution, error) { return MMkWait(1, 0.5, 10) },
			wantC: 0.5, wantMean: 10,
		},
		// 0.340387·13.8889 = 4.727602 s.
		"M/M/4 exact at the paper's rho=0.64": {
			wait:  func() (WaitDistribution, error) { return MMkWait(4, 0.64, 20) },
			wantC: cPaper, wantMean: 4.727602,
		},
		"Approximation 1, exponential service equals M/M/k": {
			wait:  func() (WaitDistribution, error) { return PaperApproximation1(4, 0.64, 20, 1) },
			wantC: cPaper, wantMean: 4.727602,
		},
		// C_S = 0.8: factor (0.64+1)/2 = 0.82, 4.727602·0.82 = 3.876634 s.
		"Approximation 1, C_S=0.8": {
			wait:  func() (WaitDistribution, error) { return PaperApproximation1(4, 0.64, 20, 0.64) },
			wantC: cPaper, wantMean: 3.876634,
		},
		// Deterministic service halves the M/M/k wait: 2.363801 s.
		"Approximation 1, deterministic service": {
			wait:  func() (WaitDistribution, error) { return PaperApproximation1(4, 0.64, 20, 0) },
			wantC: cPaper, wantMean: 2.363801,
		},
		"Whitt, Poisson arrivals equals Approximation 1": {
			wait:  func() (WaitDistribution, error) { return WhittGIGkWait(4, 0.64, 20, 1, 0.64) },
			wantC: cPaper, wantMean: 3.876634,
		},
		// Periodic arrivals, exponential service: (0+1)/2 · 4.727602.
		"Whitt, periodic arrivals": {
			wait:  func() (WaitDistribution, error) { return WhittGIGkWait(4, 0.64, 20, 0, 1) },
			wantC: cPaper, wantMean: 2.363801,
		},
		// Bursty arrivals c_a² = 2: (2+1)/2 · 4.727602 = 7.091403 s.
		"Whitt, bursty arrivals": {
			wait:  func() (WaitDistribution, error) { return WhittGIGkWait(4, 0.64, 20, 2, 1) },
			wantC: cPaper, wantMean: 7.091403,
		},
		// D/D/k below saturation never waits.
		"Whitt, no variability at all": {
			wait:  func() (WaitDistribution, error) { return WhittGIGkWait(4, 0.64, 20, 0, 0) },
			wantC: 0, wantMean: 0,
		},
		"zero utilization": {
			wait:  func() (WaitDistribution, error) { return PaperApproximation1(4, 0, 20, 1) },
			wantC: 0, wantMean: 0,
		},
		"zero service time": {
			wait:  func() (WaitDistribution, error) { return MMkWait(4, 0.5, 0) },
			wantC: 0, wantMean: 0,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			d, err := tc.wait()
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !d.Stable {
				t.Fatalf("Stable = false, want true")
			}
			assertApprox(t, "WaitProbability", d.WaitProbability, tc.wantC, 1e-6)
			assertApprox(t, "MeanWait", d.MeanWait, tc.wantMean, 1e-6)
		})
	}
}

func TestWaitFormulasUnstable(t *testing.T) {
	for name, wait := range map[string]func() (WaitDistribution, error){
		"MMk rho=1":            func() (WaitDistribution, error) { return MMkWait(4, 1, 20) },
		"Approx1 rho=1.2":      func() (WaitDistribution, error) { return PaperApproximation1(4, 1.2, 20, 1) },
		"Whitt rho=+Inf":       func() (WaitDistribution, error) { return WhittGIGkWait(4, math.Inf(1), 20, 1, 1) },
		"overflow near rho=1":  func() (WaitDistribution, error) { return PaperApproximation1(1, math.Nextafter(1, 0), 1e300, 1e300) },
		"overflow of variance": func() (WaitDistribution, error) { return WhittGIGkWait(1, 0.9, 1e300, 1e300, 1e300) },
	} {
		t.Run(name, func(t *testing.T) {
			d, err := wait()
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if d.Stable || d.MeanWait != 0 || d.WaitProbability != 1 {
				t.Errorf("got %+v, want unstable with zero mean and C = 1", d)
			}
		})
	}
}

func TestWaitFormulasRejectInvalidInput(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := map[string]func() (WaitDistribution, error){
		"zero servers":            func() (WaitDistribution, error) { return MMkWait(0, 0.5, 10) },
		"too many servers":        func() (WaitDistribution, error) { return MMkWait(MaxServers+1, 0.5, 10) },
		"negative rho":            func() (WaitDistribution, error) { return MMkWait(2, -0.1, 10) },
		"NaN rho":                 func() (WaitDistribution, error) { return PaperApproximation1(2, nan, 10, 1) },
		"negative service":        func() (WaitDistribution, error) { return PaperApproximation1(2, 0.5, -1, 1) },
		"infinite service":        func() (WaitDistribution, error) { return PaperApproximation1(2, 0.5, inf, 1) },
		"NaN service SCV":         func() (WaitDistribution, error) { return PaperApproximation1(2, 0.5, 10, nan) },
		"negative service SCV":    func() (WaitDistribution, error) { return WhittGIGkWait(2, 0.5, 10, 1, -1) },
		"infinite arrival SCV":    func() (WaitDistribution, error) { return WhittGIGkWait(2, 0.5, 10, inf, 1) },
		"negative arrival SCV":    func() (WaitDistribution, error) { return WhittGIGkWait(2, 0.5, 10, -0.5, 1) },
		"NaN rho even when Whitt": func() (WaitDistribution, error) { return WhittGIGkWait(2, nan, 10, 1, 1) },
	}
	for name, wait := range tests {
		t.Run(name, func(t *testing.T) {
			d, err := wait()
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("error = %v, want ErrInvalidInput", err)
			}
			if d != (WaitDistribution{}) {
				t.Errorf("distribution = %+v, want zero value with an error", d)
			}
		})
	}
}

func TestArrivalRateForUtilization(t *testing.T) {
	tests := map[string]struct {
		rho         float64
		servers     int
		meanService float64
		want        float64
		wantErr     bool
	}{
		// The paper's sweep: λ = ρ·k_eff/E[S].
		"paper rho=0.3":     {rho: 0.3, servers: 4, meanService: 20, want: 0.06},
		"paper rho=0.64":    {rho: 0.64, servers: 4, meanService: 20, want: 0.128},
		"overload allowed":  {rho: 1.5, servers: 2, meanService: 10, want: 0.3},
		"zero utilization":  {rho: 0, servers: 2, meanService: 10, want: 0},
		"negative rho":      {rho: -0.1, servers: 4, meanService: 20, wantErr: true},
		"NaN rho":           {rho: math.NaN(), servers: 4, meanService: 20, wantErr: true},
		"infinite rho":      {rho: math.Inf(1), servers: 4, meanService: 20, wantErr: true},
		"zero servers":      {rho: 0.5, servers: 0, meanService: 20, wantErr: true},
		"zero service time": {rho: 0.5, servers: 4, meanService: 0, wantErr: true},
		"NaN service time":  {rho: 0.5, servers: 4, meanService: math.NaN(), wantErr: true},
		"overflow":          {rho: 1e300, servers: 1000, meanService: 1e-300, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ArrivalRateForUtilization(tc.rho, tc.servers, tc.meanService)
			if tc.wantErr {
				if !errors.Is(err, ErrInvalidInput) {
					t.Fatalf("error = %v, want ErrInvalidInput", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			assertApprox(t, "λ", got, tc.want, 1e-12)
		})
	}
}
