package stats

import (
	"errors"
	"fmt"
	"time"
)

// Clock tells the current time. Production callers pass a wrapper of
// time.Now; tests pass a fake.
type Clock interface {
	Now() time.Time
}

const (
	// DefaultHalfLife is the decay half-life used when DecayOptions.HalfLife
	// is zero: an observation half an hour old counts half as much as a new
	// one.
	DefaultHalfLife = 30 * time.Minute
	// DefaultMinSamples is the minimum-sample threshold used when an options
	// struct leaves MinSamples at zero.
	DefaultMinSamples = 10
	// DefaultReservoirCapacity is the service-time sample size used when
	// ReservoirOptions.Capacity is zero.
	DefaultReservoirCapacity = 512
	// DefaultEMAAlpha is the paper's EMA smoothing factor α = 0.3.
	DefaultEMAAlpha = 0.3
)

// ErrInvalidInput is wrapped by errors about invalid options or arguments.
var ErrInvalidInput = errors.New("stats: invalid input")

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidInput}, args...)...)
}

// DecayOptions configures a time-decayed estimator.
type DecayOptions struct {
	// HalfLife is the age at which an observation's weight halves. Zero
	// means DefaultHalfLife; negative is an error.
	HalfLife time.Duration
	// MinSamples is the number of observations below which the estimator
	// reports ok=false. Zero means DefaultMinSamples; negative is an error.
	MinSamples int
}

func resolveHalfLife(h time.Duration, zero time.Duration) (float64, error) {
	switch {
	case h < 0:
		return 0, invalidf("half-life must be non-negative, got %v", h)
	case h == 0:
		h = zero
	}
	return h.Seconds(), nil
}

func resolveMinSamples(n int) (int, error) {
	switch {
	case n < 0:
		return 0, invalidf("minimum sample count must be non-negative, got %d", n)
	case n == 0:
		return DefaultMinSamples, nil
	}
	return n, nil
}

// Span is a closed time interval, for warm starts: a workload's admission
// and finish times (service time = End − Start), or its creation and
// admission times (wait = End − Start).
type Span struct {
	Start, End time.Time
}

// Seconds returns End − Start in seconds (negative when End is before Start).
func (s Span) Seconds() float64 { return s.End.Sub(s.Start).Seconds() }
