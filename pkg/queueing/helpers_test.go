package queueing

import (
	"math"
	"testing"
)

// approxEqual reports whether got and want agree to within a relative
// tolerance rel, or an absolute tolerance rel when want is near zero.
func approxEqual(got, want, rel float64) bool {
	if got == want {
		return true
	}
	diff := math.Abs(got - want)
	scale := math.Max(math.Abs(want), 1)
	if math.Abs(want) > 0 && math.Abs(want) < 1 {
		scale = math.Abs(want)
	}
	return diff <= rel*scale
}

func assertApprox(t *testing.T, name string, got, want, rel float64) {
	t.Helper()
	if !approxEqual(got, want, rel) {
		t.Errorf("%s = %.15g, want %.15g (rel tol %g)", name, got, want, rel)
	}
}

func assertFiniteNonNegative(t *testing.T, name string, v float64) {
	t.Helper()
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		t.Errorf("%s = %v, want finite and >= 0", name, v)
	}
}
