package queueing

import (
	"errors"
	"fmt"
	"math"
)

var (
	// ErrInvalidInput is wrapped by every error about an argument that is
	// negative, NaN, infinite or out of its documented range.
	ErrInvalidInput = errors.New("queueing: invalid input")

	// ErrUnstable is returned when a waiting-time figure is asked of a queue
	// with utilization ρ ≥ 1 (or whose wait overflows float64): the wait has
	// no finite value.
	ErrUnstable = errors.New("queueing: queue is unstable (utilization >= 1), the wait grows without bound")
)

// MaxServers is the largest server count the model-level functions accept
// (and the count at which ErlangB and ErlangC saturate). An Erlang evaluation
// costs O(min(k, √a)) recursion steps, so this bounds one evaluation to a few
// milliseconds; no ClusterQueue comes near it.
const MaxServers = 1_000_000_000

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidInput}, args...)...)
}

// checkNonNegativeFinite reports an error naming the quantity when v is NaN,
// infinite or negative.
func checkNonNegativeFinite(name string, v float64) error {
	switch {
	case math.IsNaN(v):
		return invalidf("%s is NaN", name)
	case math.IsInf(v, 0):
		return invalidf("%s is infinite", name)
	case v < 0:
		return invalidf("%s must be non-negative, got %g", name, v)
	}
	return nil
}

func checkServers(servers int) error {
	if servers < 1 {
		return invalidf("servers must be at least 1, got %d", servers)
	}
	if servers > MaxServers {
		return invalidf("servers must be at most %d, got %d", MaxServers, servers)
	}
	return nil
}

// checkUtilization accepts any ρ ≥ 0 including +Inf (an unstable queue).
func checkUtilization(rho float64) error {
	switch {
	case math.IsNaN(rho):
		return invalidf("utilization is NaN")
	case rho < 0:
		return invalidf("utilization must be non-negative, got %g", rho)
	}
	return nil
}
