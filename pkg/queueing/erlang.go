package queueing

import "math"

// ErlangB returns the Erlang-B blocking probability B(k, a) of an M/M/k/k loss
// system with k = servers and offered load a = offeredLoad Erlangs (a = λ·E[S]).
//
// It is computed by the stable recursion
//
//	B(0) = 1,  B(n) = a·B(n−1) / (n + a·B(n−1)),
//
// never from a^k/k!, so it neither overflows nor loses precision for large k.
// Every step is a contraction (near the true value the derivative of the map
// B(n−1) ↦ B(n) is about n/a for n < a and at most a/n for n > a, so at most
// 1), which is what makes the recursion stable; it also means the recursion
// forgets its starting value.
// For large loads this function therefore starts the recursion at
// n₀ = min(k, a) − L with the fluid value B(n₀) ≈ 1 − n₀/a, where L is chosen
// so that the accumulated contraction Π n/a over the skipped-to window is
// below e^−80: the result equals the full recursion to rounding error (the
// tests check this), at a cost of O(min(k, √a)) steps instead of O(k). The
// recursion also stops early, returning 0, once B falls below the smallest
// normal float64 (2.2e−308).
//
// Edge cases: servers ≤ 0 gives 1 (with no servers every arrival is blocked,
// B(0) = 1); a NaN or +Inf load gives 1 (the limit a → ∞); a load ≤ 0 gives 0.
// Servers above MaxServers are evaluated at MaxServers, which bounds the work
// and yields an upper bound (B is decreasing in k at fixed a).
// The result is always in [0, 1].
func ErlangB(servers int, offeredLoad float64) float64 {
	switch {
	case servers <= 0:
		return 1
	case math.IsNaN(offeredLoad) || math.IsInf(offeredLoad, 1):
		return 1
	case offeredLoad <= 0:
		return 0
	}
	return erlangB(min(servers, MaxServers), offeredLoad)
}

// ErlangC returns the Erlang-C probability C(k, ρ) = P(W > 0) that an arrival
// to an M/M/k queue with k = servers and utilization ρ = rho = a/k must wait.
// It is derived from Erlang-B with a = k·ρ:
//
//	C(k, ρ) = B(k, a) / (1 − ρ·(1 − B(k, a))),
//
// which equals the textbook ((kρ)^k/k!) / ((kρ)^k/k! + (1−ρ)·Σ_{n<k} (kρ)^n/n!)
// without its overflow.
//
// Edge cases: servers ≤ 0 gives 1; ρ ≤ 0 gives 0; ρ ≥ 1 (including +Inf) and
// NaN give 1, the limit as ρ → 1. A result of 1 does not tell a stable queue
// at heavy load from an unstable one: callers that need to know use Analyze
// and its Stable flag. Servers above MaxServers are evaluated at MaxServers,
// an upper bound (C is non-increasing in k at fixed ρ). The result is always
// in [0, 1].
func ErlangC(servers int, rho float64) float64 {
	switch {
	case servers <= 0:
		return 1
	case math.IsNaN(rho) || rho >= 1:
		return 1
	case rho <= 0:
		return 0
	}
	servers = min(servers, MaxServers)
	b := erlangB(servers, float64(servers)*rho)
	return clampUnit(b / (1 - rho*(1-b)))
}

// erlangB runs the recursion for k ≥ 1 and finite a > 0.
func erlangB(k int, a float64) float64 {
	n0, b := recursionStart(k, a)
	for n := n0 + 1; n <= k; n++ {
		ab := a * b
		b = ab / (float64(n) + ab)
		if b < smallestNormal {
			// B only decreases from here on (n > a). Subnormals would be
			// slow and can stick at the smallest subnormal while a/n > 1/2.
			return 0
		}
	}
	return clampUnit(b)
}

const (
	// contractionTarget is the log of the error reduction demanded of the
	// skipped recursion window: e^−80 ≈ 1.8e−35, far below float64 rounding.
	contractionTarget = 80
	// recursionSlack is a fixed number of extra steps added to the window.
	recursionSlack = 64
	// smallestNormal is the smallest normal float64, 2^−1022 ≈ 2.2e−308.
	smallestNormal = 0x1p-1022
)

// recursionStart picks the index n₀ ≤ k at which to start the Erlang-B
// recursion and the value B(n₀) to start it with.
//
// With m = min(k, a) and d = a − m ≥ 0, each step n ≤ m contracts an error
// by about n/a = 1 − (a−n)/a, so L steps below m contract it by
// exp(−Σ_{j<L} (d+j)/a) = exp(−(L·d + L²/2)/a). Solving (L·d + L²/2)/a = T for
// L gives L = 2Ta / (d + √(d² + 2Ta)), computed with Hypot to avoid overflow.
// Past m (n > a) the steps contract further, by a/n each. Below n₀ the true
// B(n) is within a fraction of a percent of the fluid value 1 − n/a because
// a − n₀ ≥ √(2Ta) ≫ √a.
func recursionStart(k int, a float64) (int, float64) {
	m := math.Min(float64(k), math.Floor(a))
	d := a - m
	// s² = 2Ta; L = s²/(d + √(d² + s²)) = s · s/(d + Hypot(d, s)), which
	// cannot overflow even for a near math.MaxFloat64.
	s := math.Sqrt(2*contractionTarget) * math.Sqrt(a)
	window := s*(s/(d+math.Hypot(d, s))) + recursionSlack
	start := m - math.Ceil(window)
	if !(start > 0) { // also catches NaN
		return 0, 1
	}
	n0 := int(start)
	return n0, 1 - float64(n0)/a
}

func clampUnit(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return 1
	case x < 0:
		return 0
	case x > 1:
		return 1
	}
	return x
}
