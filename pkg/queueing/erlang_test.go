package queueing

import (
	"math"
	"math/big"
	"testing"
)

func TestErlangBHandValues(t *testing.T) {
	tests := map[string]struct {
		servers int
		load    float64
		want    float64
	}{
		// B(1,a) = a/(1+a).
		"one server, a=1": {servers: 1, load: 1, want: 0.5},
		"one server, a=3": {servers: 1, load: 3, want: 0.75},
		// B(2,a) = (a²/2)/(1+a+a²/2): a=2 gives 2/5.
		"two servers, a=2": {servers: 2, load: 2, want: 0.4},
		// By hand with the recursion: B(1)=2.56/3.56=0.719101,
		// B(2)=1.840899/3.840899=0.479294, B(3)=1.226993/4.226993=0.290276,
		// B(4)=0.743107/4.743107=0.156670.
		"four servers, a=2.56": {servers: 4, load: 2.56, want: 0.15667},
		// Textbook table value: B(10, 5) = 0.018385.
		"ten servers, a=5": {servers: 10, load: 5, want: 0.018385},
		"zero servers":     {servers: 0, load: 2, want: 1},
		"negative servers": {servers: -3, load: 2, want: 1},
		"zero load":        {servers: 3, load: 0, want: 0},
		"negative load":    {servers: 3, load: -1, want: 0},
		"NaN load":         {servers: 3, load: math.NaN(), want: 1},
		"infinite load":    {servers: 3, load: math.Inf(1), want: 1},
		"-infinite load":   {servers: 3, load: math.Inf(-1), want: 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			assertApprox(t, "ErlangB", ErlangB(tc.servers, tc.load), tc.want, 5e-5)
		})
	}
}

func TestErlangCHandValues(t *testing.T) {
	tests := map[string]struct {
		servers int
		rho     float64
		want    float64
		rel     float64
	}{
		// M/M/1: C = ρ.
		"M/M/1 rho=0.3": {servers: 1, rho: 0.3, want: 0.3, rel: 1e-14},
		"M/M/1 rho=0.9": {servers: 1, rho: 0.9, want: 0.9, rel: 1e-14},
		// M/M/2: C = 2ρ²/(1+ρ).
		"M/M/2 rho=0.5": {servers: 2, rho: 0.5, want: 2 * 0.25 / 1.5, rel: 1e-14},
		"M/M/2 rho=0.8": {servers: 2, rho: 0.8, want: 2 * 0.64 / 1.8, rel: 1e-14},
		// The brief's hand value, from B(4, 2.56)=0.156670:
		// C = 0.156670 / (1 − 0.64·0.843330) = 0.156670/0.460269 = 0.340389.
		"paper k=4 rho=0.64": {servers: 4, rho: 0.64, want: 0.340389, rel: 1e-5},
		"rho zero":           {servers: 4, rho: 0, want: 0, rel: 0},
		"rho negative":       {servers: 4, rho: -0.5, want: 0, rel: 0},
		"rho one":            {servers: 4, rho: 1, want: 1, rel: 0},
		"rho above one":      {servers: 4, rho: 1.7, want: 1, rel: 0},
		"rho +Inf":           {servers: 4, rho: math.Inf(1), want: 1, rel: 0},
		"rho NaN":            {servers: 4, rho: math.NaN(), want: 1, rel: 0},
		"zero servers":       {servers: 0, rho: 0.5, want: 1, rel: 0},
		"negative servers":   {servers: -1, rho: 0.5, want: 1, rel: 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			assertApprox(t, "ErlangC", ErlangC(tc.servers, tc.rho), tc.want, tc.rel)
		})
	}
}

// erlangCReference evaluates the textbook Erlang-C formula
// ((kρ)^k/k!) / ((kρ)^k/k! + (1−ρ)·Σ_{n<k}(kρ)^n/n!) in 256-bit floating
// point, independently of the recursion.
func erlangCReference(k int, rho float64) float64 {
	const prec = 256
	a := new(big.Float).SetPrec(prec).SetFloat64(float64(k) * rho)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	sum := new(big.Float).SetPrec(prec)
	for n := 1; n <= k; n++ {
		sum.Add(sum, term)
		term.Mul(term, a)
		term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(int64(n)))
	}
	oneMinusRho := new(big.Float).SetPrec(prec).SetFloat64(1 - rho)
	den := new(big.Float).SetPrec(prec).Mul(oneMinusRho, sum)
	den.Add(den, term)
	c, _ := new(big.Float).SetPrec(prec).Quo(term, den).Float64()
	return c
}

func TestErlangCMatchesHighPrecisionSum(t *testing.T) {
	for _, k := range []int{1, 2, 3, 4, 7, 10, 50, 100, 500, 1000} {
		for _, rho := range []float64{0.01, 0.1, 0.3, 0.5, 0.64, 0.8, 0.9, 0.95, 0.99, 0.999} {
			want := erlangCReference(k, rho)
			got := ErlangC(k, rho)
			if want < 1e-290 {
				if got > 1e-280 {
					t.Errorf("ErlangC(%d, %g) = %g, want ≈ %g", k, rho, got, want)
				}
				continue
			}
			if math.Abs(got-want) > 1e-11*want {
				t.Errorf("ErlangC(%d, %g) = %.17g, reference %.17g", k, rho, got, want)
			}
		}
	}
}

// fullErlangB runs the recursion from B(0) = 1, with no shortcut.
func fullErlangB(k int, a float64) float64 {
	b := 1.0
	for n := 1; n <= k; n++ {
		b = a * b / (float64(n) + a*b)
	}
	return b
}

func TestErlangBWindowedRecursionMatchesFullRecursion(t *testing.T) {
	for _, k := range []int{1, 5, 64, 100, 1000, 10_000, 100_000} {
		for _, ratio := range []float64{0.001, 0.2, 0.5, 0.9, 0.99, 0.999, 0.99999, 1, 1.001, 1.01, 1.5, 3, 100, 1e6, 1e300} {
			a := ratio * float64(k)
			want := fullErlangB(k, a)
			got := ErlangB(k, a)
			if want < 1e-300 {
				if got > 1e-290 {
					t.Errorf("ErlangB(%d, %g) = %g, want ≈ %g", k, a, got, want)
				}
				continue
			}
			if math.Abs(got-want) > 1e-12*want {
				t.Errorf("ErlangB(%d, %g) = %.17g, full recursion %.17g", k, a, got, want)
			}
		}
	}
}

// In the Halfin–Whitt regime k = a + β√a, C(k, a/k) → 1/(1 + βΦ(β)/φ(β)) as
// k → ∞. At k = 100,000 the O(1/√k) error is a few parts per thousand.
func TestErlangCHalfinWhittLimitAtLargeK(t *testing.T) {
	const k = 100_000
	for _, beta := range []float64{0.5, 1, 2} {
		sqrtA := (-beta + math.Sqrt(beta*beta+4*k)) / 2
		rho := sqrtA * sqrtA / k
		phi := math.Exp(-beta*beta/2) / math.Sqrt(2*math.Pi)
		cdf := 0.5 * math.Erfc(-beta/math.Sqrt2)
		want := 1 / (1 + beta*cdf/phi)
		got := ErlangC(k, rho)
		if math.Abs(got-want) > 0.01*want {
			t.Errorf("β=%g: ErlangC(%d, %.6f) = %.6f, Halfin–Whitt limit %.6f", beta, k, rho, got, want)
		}
	}
}

func TestErlangSaturatesAboveMaxServers(t *testing.T) {
	if got, want := ErlangC(MaxServers+1, 0.999999), ErlangC(MaxServers, 0.999999); got != want {
		t.Errorf("ErlangC above MaxServers = %g, want the MaxServers value %g", got, want)
	}
	if got, want := ErlangB(math.MaxInt, 1e9), ErlangB(MaxServers, 1e9); got != want {
		t.Errorf("ErlangB(MaxInt) = %g, want the MaxServers value %g", got, want)
	}
}
