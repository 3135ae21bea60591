package queueing

import (
	"math"
	"testing"
)

var propertyServers = []int{1, 2, 3, 4, 8, 16, 50, 100, 1000, 10_000, 100_000}

// rhoGrid returns n+1 utilizations evenly spaced on [0, 1) plus points near 1.
func rhoGrid(n int) []float64 {
	grid := make([]float64, 0, n+4)
	for i := 0; i < n; i++ {
		grid = append(grid, float64(i)/float64(n))
	}
	return append(grid, 0.999, 0.9999, 0.999999, math.Nextafter(1, 0))
}

func TestErlangCInUnitIntervalAndMonotoneInRho(t *testing.T) {
	for _, k := range propertyServers {
		prev := -1.0
		prevRho := 0.0
		for _, rho := range rhoGrid(200) {
			c := ErlangC(k, rho)
			if math.IsNaN(c) || c < 0 || c > 1 {
				t.Fatalf("ErlangC(%d, %g) = %g, not in [0, 1]", k, rho, c)
			}
			if c < prev {
				t.Fatalf("ErlangC(%d, ·) decreases: %g at ρ=%g, %g at ρ=%g", k, prev, prevRho, c, rho)
			}
			prev, prevRho = c, rho
		}
	}
}

func TestErlangBInUnitIntervalAndMonotone(t *testing.T) {
	for _, k := range propertyServers {
		prev := -1.0
		for _, ratio := range []float64{0, 0.01, 0.1, 0.5, 0.9, 0.99, 1, 1.01, 1.5, 2, 10, 1e3, 1e9} {
			b := ErlangB(k, ratio*float64(k))
			if math.IsNaN(b) || b < 0 || b > 1 {
				t.Fatalf("ErlangB(%d, %g·k) = %g, not in [0, 1]", k, ratio, b)
			}
			if b < prev {
				t.Fatalf("ErlangB(%d, ·) decreases in the load at %g·k", k, ratio)
			}
			prev = b
		}
	}
}

func TestMeanWaitMonotoneInRho(t *testing.T) {
	for _, k := range propertyServers {
		for _, scv := range []float64{0, 0.5, 1, 4} {
			prev := -1.0
			for _, rho := range rhoGrid(100) {
				d, err := PaperApproximation1(k, rho, 30, scv)
				if err != nil {
					t.Fatal(err)
				}
				if !d.Stable {
					t.Fatalf("k=%d ρ=%g: unstable below 1", k, rho)
				}
				assertFiniteNonNegative(t, "MeanWait", d.MeanWait)
				if d.MeanWait < prev {
					t.Fatalf("k=%d C_S²=%g: mean wait decreases at ρ=%g (%g < %g)", k, scv, rho, d.MeanWait, prev)
				}
				prev = d.MeanWait
			}
		}
	}
}

// At a fixed arrival rate and mean service time (fixed offered load a), more
// servers never increase the wait probability or the mean wait.
func TestMoreServersNeverIncreaseWait(t *testing.T) {
	for _, load := range []float64{0.3, 2.56, 7.3, 95, 950} {
		const meanService = 20.0
		lambda := load / meanService
		prevC, prevW := 2.0, math.Inf(1)
		for k := int(load) + 1; k <= int(load)+400; k++ {
			r, err := Analyze(Model{Servers: k, ArrivalRate: lambda, MeanService: meanService, ServiceSCV: 0.7, ArrivalSCV: 1.3})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Stable {
				t.Fatalf("a=%g k=%d: unstable with ρ=%g", load, k, r.Utilization)
			}
			if r.WaitProbability > prevC || r.Approximation1.MeanWait > prevW {
				t.Fatalf("a=%g: k=%d gives C=%g W=%g, more than k-1 (C=%g W=%g)", load, k,
					r.WaitProbability, r.Approximation1.MeanWait, prevC, prevW)
			}
			if r.Whitt.MeanWait > r.Approximation1.MeanWait*(1.3+0.7)/(1+0.7)*(1+1e-12) {
				t.Fatalf("Whitt and Approximation 1 disagree beyond their SCV factor")
			}
			prevC, prevW = r.WaitProbability, r.Approximation1.MeanWait
		}
	}
}

func TestQuantilesMonotoneAndSurvivalConsistent(t *testing.T) {
	for _, k := range []int{1, 4, 100} {
		for _, rho := range []float64{0.1, 0.64, 0.95} {
			d, err := WhittGIGkWait(k, rho, 20, 1.5, 0.8)
			if err != nil {
				t.Fatal(err)
			}
			prev := 0.0
			for _, q := range []float64{0.01, 0.1, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999999} {
				tq, err := d.Quantile(q)
				if err != nil {
					t.Fatal(err)
				}
				assertFiniteNonNegative(t, "quantile", tq)
				if tq < prev {
					t.Fatalf("k=%d ρ=%g: quantile decreases at q=%g", k, rho, q)
				}
				// The quantile inverts the survival function where it is positive.
				if tq > 0 && math.Abs(d.Survival(tq)-(1-q)) > 1e-9 {
					t.Errorf("k=%d ρ=%g q=%g: P(W > t_q) = %g, want %g", k, rho, q, d.Survival(tq), 1-q)
				}
				prev = tq
			}
		}
	}
}
