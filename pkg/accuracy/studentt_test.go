package accuracy

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestStudentT975KnownValues(t *testing.T) {
	// Closed forms: ν = 1 (Cauchy) tan(π(p − ½)); ν = 2 (2p−1)/√(2p(1−p));
	// ν = 4 2√(q−1) with q = cos(arccos(√α)/3)/√α, α = 4p(1−p).
	alpha := 4 * 0.975 * 0.025
	q4 := math.Cos(math.Acos(math.Sqrt(alpha))/3) / math.Sqrt(alpha)
	tests := map[string]struct {
		df   int
		want float64
		tol  float64
	}{
		"df=1 closed form": {df: 1, want: math.Tan(0.475 * math.Pi), tol: 1e-10},
		"df=2 closed form": {df: 2, want: 0.95 / math.Sqrt(2*0.975*0.025), tol: 1e-10},
		"df=4 closed form": {df: 4, want: 2 * math.Sqrt(q4-1), tol: 1e-10},
		"df=1 table":       {df: 1, want: 12.706204736, tol: 1e-9},
		"df=2 table":       {df: 2, want: 4.302652730, tol: 1e-9},
		"df=9 table":       {df: 9, want: 2.262157163, tol: 1e-9},
		"df=30 table":      {df: 30, want: 2.042272456, tol: 1e-9},
		// t(ν) ≈ z + (z³+z)/(4ν): at ν = 1e12 within 3e-12 of the limit z.
		"df=1e12 is normal":  {df: 1_000_000_000_000, want: 1.959963985, tol: 1e-9},
		"df=MaxInt":          {df: math.MaxInt, want: z975, tol: 1e-15},
		"df=0 is taken as 1": {df: 0, want: math.Tan(0.475 * math.Pi), tol: 1e-10},
		"negative df is 1":   {df: -7, want: math.Tan(0.475 * math.Pi), tol: 1e-10},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, StudentT975(tc.df), cmpopts.EquateApprox(0, tc.tol)); diff != "" {
				t.Errorf("StudentT975(%d) (-want +got):\n%s", tc.df, diff)
			}
		})
	}
}

// tDensity is Student's t density with ν degrees of freedom.
func tDensity(nu, t float64) float64 {
	lgHalfNu1, _ := math.Lgamma((nu + 1) / 2)
	lgHalfNu, _ := math.Lgamma(nu / 2)
	return math.Exp(lgHalfNu1-lgHalfNu-(nu+1)/2*math.Log1p(t*t/nu)) / math.Sqrt(nu*math.Pi)
}

// TestStudentT975InvertsTheDensity integrates the t density from 0 to the
// returned quantile by Simpson's rule, independently of the incomplete beta
// function, and checks the mass is 0.475; the error in probability divided
// by the density there is the error in t.
func TestStudentT975InvertsTheDensity(t *testing.T) {
	dfs := []int{1001, 1500, 5000, 100_000}
	for df := 1; df <= 200; df++ {
		dfs = append(dfs, df)
	}
	dfs = append(dfs, 250, 333, 500, 999, 1000)
	const intervals = 4000
	for _, df := range dfs {
		nu := float64(df)
		q := StudentT975(df)
		h := q / intervals
		sum := tDensity(nu, 0) + tDensity(nu, q)
		for i := 1; i < intervals; i++ {
			w := 2.0
			if i%2 == 1 {
				w = 4
			}
			sum += w * tDensity(nu, float64(i)*h)
		}
		mass := sum * h / 3
		if errT := math.Abs(mass-0.475) / tDensity(nu, q); errT > 1e-9 {
			t.Errorf("df=%d: StudentT975 = %.12f, mass to it %.15f, error in t %.3g", df, q, mass, errT)
		}
	}
}

func TestStudentT975DecreasesTowardsNormal(t *testing.T) {
	prev := math.Inf(1)
	for df := 1; df <= 3000; df++ {
		q := StudentT975(df)
		if !(q < prev) || !(q > z975) {
			t.Fatalf("StudentT975(%d) = %.15f after %.15f: not decreasing, or not above z = %.15f", df, q, prev, z975)
		}
		prev = q
	}
}

// The two methods agree where they meet: at ν = 1000 the expansion's
// truncation error is far below the 1e-9 promised.
func TestStudentT975MethodsAgreeAtTheSeam(t *testing.T) {
	for _, df := range []int{300, 600, 1000} {
		exact := StudentT975(df)
		series := studentT975Expansion(float64(df))
		if math.Abs(exact-series) > 1e-11 {
			t.Errorf("df=%d: inversion %.15f, expansion %.15f", df, exact, series)
		}
	}
}
