package stats

import (
	"math"
	"time"
)

// EMA is the paper's exponential-moving-average baseline for wait times:
//
//	EMA₁ = x₁,   EMAₙ = α·xₙ + (1 − α)·EMAₙ₋₁,
//
// with α = DefaultEMAAlpha = 0.3 in the paper's evaluation. Feed it the
// observed wait (creation to admission, in seconds) of each admitted
// workload, in admission order; Value is its prediction for the next one.
// It is ok after the first observation.
type EMA struct {
	alpha           float64
	value           float64
	count, rejected uint64
}

// NewEMA returns an EMA with smoothing factor alpha. It returns an error
// wrapping ErrInvalidInput unless 0 < alpha ≤ 1 (α = 1 follows the latest
// observation exactly).
func NewEMA(alpha float64) (*EMA, error) {
	if math.IsNaN(alpha) || alpha <= 0 || alpha > 1 {
		return nil, invalidf("EMA alpha must be in (0, 1], got %g", alpha)
	}
	return &EMA{alpha: alpha}, nil
}

// Observe records a wait of seconds and reports whether it was accepted.
// Negative, NaN and infinite values are rejected (counted in Rejected) and
// leave the average unchanged.
func (e *EMA) Observe(seconds float64) bool {
	if math.IsNaN(seconds) || math.IsInf(seconds, 0) || seconds < 0 {
		e.rejected++
		return false
	}
	if e.count == 0 {
		e.value = seconds
	} else {
		e.value = e.alpha*seconds + (1-e.alpha)*e.value
	}
	e.count++
	return true
}

// Seed warm-starts the average from known waits: for each span (creation
// and admission times of an admitted workload) it observes End − Start, in
// order of End (a sorted copy). Spans with End before Start are rejected. It
// returns the number accepted.
func (e *EMA) Seed(spans []Span) int {
	return seedSpans(spans, func(_ time.Time, seconds float64) bool { return e.Observe(seconds) })
}

// Value returns the current average in seconds, and false (with 0) before
// any observation.
func (e *EMA) Value() (float64, bool) { return e.value, e.count > 0 }

// Alpha returns the smoothing factor α.
func (e *EMA) Alpha() float64 { return e.alpha }

// Count returns the number of accepted observations.
func (e *EMA) Count() uint64 { return e.count }

// Rejected returns the number of rejected observations.
func (e *EMA) Rejected() uint64 { return e.rejected }
