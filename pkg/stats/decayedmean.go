package stats

import (
	"math"
	"time"
)

// DecayedMean is a time-decayed average of observations:
//
//	m(t) = Σ wᵢ·xᵢ / Σ wᵢ,   wᵢ = 2^(−(t − tᵢ)/h),
//
// with h the half-life. Fed 1 for a hit and 0 for a miss it is the realized
// coverage of a quantile over a window that forgets at half-life h. Weights
// are kept relative to the latest observation, so the ratio does not depend
// on when it is read; Weight tells how much evidence is behind it (the
// effective sample count Σ wᵢ at the latest observation).
//
// Observations out of time order are weighted by their age relative to the
// latest one. NaN and infinite values are rejected and counted.
type DecayedMean struct {
	halfLife   float64 // seconds
	minSamples int

	latest    time.Time
	hasLatest bool
	weight    float64 // Σ wᵢ at latest
	sum       float64 // Σ wᵢ·xᵢ at latest

	count, rejected uint64
}

// NewDecayedMean returns an empty average. It returns an error wrapping
// ErrInvalidInput for invalid options (zero fields take the defaults:
// DefaultHalfLife and DefaultMinSamples).
func NewDecayedMean(opts DecayOptions) (*DecayedMean, error) {
	h, err := resolveHalfLife(opts.HalfLife, DefaultHalfLife)
	if err != nil {
		return nil, err
	}
	n, err := resolveMinSamples(opts.MinSamples)
	if err != nil {
		return nil, err
	}
	return &DecayedMean{halfLife: h, minSamples: n}, nil
}

// ObserveAt records x observed at t and reports whether it was accepted.
func (m *DecayedMean) ObserveAt(t time.Time, x float64) bool {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		m.rejected++
		return false
	}
	m.count++
	if !m.hasLatest {
		m.latest, m.hasLatest, m.weight, m.sum = t, true, 1, x
		return true
	}
	if t.Before(m.latest) {
		w := math.Exp2(-m.latest.Sub(t).Seconds() / m.halfLife)
		m.weight += w
		m.sum += w * x
		return true
	}
	d := math.Exp2(-t.Sub(m.latest).Seconds() / m.halfLife)
	m.weight = m.weight*d + 1
	m.sum = m.sum*d + x
	m.latest = t
	return true
}

// Value returns the decayed average, and false (with 0) until MinSamples
// observations were accepted.
func (m *DecayedMean) Value() (float64, bool) {
	if m.count < uint64(m.minSamples) || !(m.weight > 0) {
		return 0, false
	}
	return m.sum / m.weight, true
}

// Weight returns Σ wᵢ at the latest observation: the effective number of
// observations behind Value.
func (m *DecayedMean) Weight() float64 { return m.weight }

// Count returns the number of accepted observations.
func (m *DecayedMean) Count() uint64 { return m.count }

// Rejected returns the number of rejected observations.
func (m *DecayedMean) Rejected() uint64 { return m.rejected }
