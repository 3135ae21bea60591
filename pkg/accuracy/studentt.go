package accuracy

import "math"

// StudentT975 returns t_{0.975, ν}, the 0.975 quantile of Student's t
// distribution with ν = df degrees of freedom: the multiplier of the
// standard error in a two-sided 95% confidence interval for a mean
// estimated from df+1 independent normal values. It decreases from
// 12.706204736 at ν = 1 (4.302652730 at ν = 2, 2.262157163 at ν = 9,
// 2.042272456 at ν = 30) towards the normal quantile 1.959963985 as ν → ∞.
//
// For ν ≤ 1000 it inverts the t distribution function exactly: for t > 0,
// P(T > t) = I_x(ν/2, 1/2)/2 with x = ν/(ν + t²), where I is the regularized
// incomplete beta function (evaluated by its continued fraction with
// Lentz's method), so the quantile is t = √(ν(1 − x)/x) for the x solving
// I_x(ν/2, 1/2) = 0.05, found by bisection on x ∈ (0, 1) to the last bit.
// For ν > 1000 it uses the Cornish–Fisher expansion in 1/ν (Abramowitz and
// Stegun 26.7.5) to order ν⁻⁴ around the normal quantile z, whose truncation
// error there is below 1e-14. The result is accurate to better than 1e-9
// for every ν.
//
// Edge case: df < 1 is taken as 1, the widest finite quantile.
func StudentT975(df int) float64 {
	df = max(df, 1)
	if df > 1000 {
		return studentT975Expansion(float64(df))
	}
	nu := float64(df)
	a := nu / 2
	lo, hi := 0.0, 1.0
	for {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if regularizedIncompleteBeta(a, 0.5, mid) < 0.05 {
			lo = mid
		} else {
			hi = mid
		}
	}
	x := lo + (hi-lo)/2
	return math.Sqrt(nu * (1 - x) / x)
}

// studentT975Expansion is the Cornish–Fisher expansion of t_{0.975,ν}
// (Abramowitz and Stegun 26.7.5): z + g₁(z)/ν + g₂(z)/ν² + g₃(z)/ν³ +
// g₄(z)/ν⁴ with z the normal 0.975 quantile.
func studentT975Expansion(nu float64) float64 {
	const z = z975
	z2 := z * z
	z3 := z2 * z
	z5 := z3 * z2
	z7 := z5 * z2
	z9 := z7 * z2
	g1 := (z3 + z) / 4
	g2 := (5*z5 + 16*z3 + 3*z) / 96
	g3 := (3*z7 + 19*z5 + 17*z3 - 15*z) / 384
	g4 := (79*z9 + 776*z7 + 1482*z5 - 1920*z3 - 945*z) / 92160
	return z + (g1+(g2+(g3+g4/nu)/nu)/nu)/nu
}

// regularizedIncompleteBeta returns I_x(a, b) for a, b > 0, by the continued
// fraction of Numerical Recipes (betacf) on whichever of I_x(a, b) and
// 1 − I_{1−x}(b, a) converges fast (x < (a+1)/(a+b+2) or not).
func regularizedIncompleteBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	lgab, _ := math.Lgamma(a + b)
	lga, _ := math.Lgamma(a)
	lgb, _ := math.Lgamma(b)
	front := math.Exp(lgab - lga - lgb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaContinuedFraction(a, b, x) / a
	}
	return 1 - front*betaContinuedFraction(b, a, 1-x)/b
}

// betaContinuedFraction evaluates the continued fraction for I_x(a, b) by
// the modified Lentz method.
func betaContinuedFraction(a, b, x float64) float64 {
	const (
		tiny          = 1e-300
		epsilon       = 1e-15
		maxIterations = 10_000
	)
	guard := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	c := 1.0
	d := 1 / guard(1-(a+b)*x/(a+1))
	h := d
	for m := 1; m <= maxIterations; m++ {
		fm := float64(m)
		// Even step.
		num := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		d = 1 / guard(1+num*d)
		c = guard(1 + num/c)
		h *= d * c
		// Odd step.
		num = -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
		d = 1 / guard(1+num*d)
		c = guard(1 + num/c)
		delta := d * c
		h *= delta
		if math.Abs(delta-1) < epsilon {
			break
		}
	}
	return h
}
