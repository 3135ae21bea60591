package forecast

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func approx(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol
}

func TestServiceConstructorsRejectBadInput(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	cases := map[string]func() error{
		"exponential zero":       func() error { _, err := NewExponential(0); return err },
		"exponential negative":   func() error { _, err := NewExponential(-1); return err },
		"exponential NaN":        func() error { _, err := NewExponential(nan); return err },
		"exponential Inf":        func() error { _, err := NewExponential(inf); return err },
		"deterministic zero":     func() error { _, err := NewDeterministic(0); return err },
		"deterministic NaN":      func() error { _, err := NewDeterministic(nan); return err },
		"deterministic Inf":      func() error { _, err := NewDeterministic(inf); return err },
		"empirical empty":        func() error { _, err := NewEmpirical(nil); return err },
		"empirical NaN":          func() error { _, err := NewEmpirical([]float64{1, nan}); return err },
		"empirical negative":     func() error { _, err := NewEmpirical([]float64{-1, 2}); return err },
		"empirical Inf":          func() error { _, err := NewEmpirical([]float64{inf}); return err },
		"empirical negative Inf": func() error { _, err := NewEmpirical([]float64{math.Inf(-1)}); return err },
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			if err := build(); !errors.Is(err, ErrInvalidServiceModel) {
				t.Fatalf("error = %v, want ErrInvalidServiceModel", err)
			}
		})
	}
}

func TestExponentialMoments(t *testing.T) {
	e, err := NewExponential(20)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	const n = 200000
	var sum, sumRes float64
	for range n {
		sum += e.Sample(r)
		sumRes += e.Residual(1000, r)
	}
	// Standard error of the mean is 20/√n ≈ 0.045.
	if m := sum / n; !approx(m, 20, 0.2) {
		t.Errorf("sample mean = %v, want 20", m)
	}
	if m := sumRes / n; !approx(m, 20, 0.2) {
		t.Errorf("residual mean at age 1000 = %v, want 20 (memoryless)", m)
	}
	if e.Mean() != 20 {
		t.Errorf("Mean() = %v", e.Mean())
	}
}

func TestEmpiricalResidualIsConditioned(t *testing.T) {
	e, err := NewEmpirical([]float64{30, 10, 20})
	if err != nil {
		t.Fatal(err)
	}
	if !approx(e.Mean(), 20, 1e-12) {
		t.Errorf("Mean() = %v, want 20", e.Mean())
	}
	// Top ⌈√3⌉ = 2 observations {20, 30}: mean excess over 20 is 5.
	if !approx(e.tailMean, 5, 1e-12) {
		t.Errorf("tail mean = %v, want 5", e.tailMean)
	}
	r := rand.New(rand.NewPCG(3, 4))
	cases := map[string]struct {
		age     float64
		allowed map[float64]bool
	}{
		"age zero draws the sample":   {age: 0, allowed: map[float64]bool{10: true, 20: true, 30: true}},
		"negative age is zero":        {age: -5, allowed: map[float64]bool{10: true, 20: true, 30: true}},
		"NaN age is zero":             {age: math.NaN(), allowed: map[float64]bool{10: true, 20: true, 30: true}},
		"age 15 keeps 20 and 30":      {age: 15, allowed: map[float64]bool{5: true, 15: true}},
		"age equal to an observation": {age: 20, allowed: map[float64]bool{10: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			seen := map[float64]bool{}
			for range 500 {
				x := e.Residual(tc.age, r)
				if !tc.allowed[x] {
					t.Fatalf("Residual(%v) = %v, want one of %v", tc.age, x, tc.allowed)
				}
				seen[x] = true
			}
			if len(seen) != len(tc.allowed) {
				t.Errorf("saw %v, want every one of %v", seen, tc.allowed)
			}
		})
	}
	t.Run("past every observation uses the exponential tail", func(t *testing.T) {
		const n = 100000
		sum := 0.0
		for range n {
			x := e.Residual(45, r)
			if !(x >= 0) || math.IsInf(x, 0) {
				t.Fatalf("Residual(45) = %v", x)
			}
			sum += x
		}
		if m := sum / n; !approx(m, 5, 0.1) {
			t.Errorf("tail residual mean = %v, want 5", m)
		}
	})
}

func TestEmpiricalTailFallsBackToMean(t *testing.T) {
	cases := map[string]struct {
		obs  []float64
		want float64
	}{
		"single observation": {obs: []float64{30}, want: 30},
		"ties at the top":    {obs: []float64{10, 40, 40, 40}, want: 32.5},
		"all zero":           {obs: []float64{0, 0}, want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e, err := NewEmpirical(tc.obs)
			if err != nil {
				t.Fatal(err)
			}
			if !approx(e.tailMean, tc.want, 1e-12) {
				t.Errorf("tail mean = %v, want %v", e.tailMean, tc.want)
			}
		})
	}
}

func TestEmpiricalTailOfExponentialSample(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	obs := make([]float64, 10000)
	for i := range obs {
		obs[i] = 20 * r.ExpFloat64()
	}
	e, err := NewEmpirical(obs)
	if err != nil {
		t.Fatal(err)
	}
	// Memoryless: the mean excess of the top 100 of 10 000 is about 20
	// (standard error 2).
	if !approx(e.tailMean, 20, 6) {
		t.Errorf("tail mean = %v, want ≈ 20", e.tailMean)
	}
}

func TestDeterministic(t *testing.T) {
	d, err := NewDeterministic(40)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct{ age, want float64 }{
		"fresh":      {0, 40},
		"negative":   {-3, 40},
		"NaN":        {math.NaN(), 40},
		"midway":     {30, 10},
		"overdue":    {55, 0},
		"exactly at": {40, 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := d.Residual(tc.age, nil); got != tc.want {
				t.Errorf("Residual(%v) = %v, want %v", tc.age, got, tc.want)
			}
		})
	}
	if d.Sample(nil) != 40 || d.Mean() != 40 {
		t.Errorf("Sample/Mean = %v/%v, want 40", d.Sample(nil), d.Mean())
	}
}
