package calibration

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// Defaults of a [Quantile] built with zero options.
const (
	// DefaultStep is the adaptive conformal step γ. The long-run
	// miscoverage of T predictions is within (1 + γ)/(γ·T) of the nominal
	// one (Gibbs & Candès 2021, Prop. 4.1): 0.01 for 10,000 predictions.
	DefaultStep = 0.01
	// DefaultWindow is how many recent scores are kept.
	DefaultWindow = 512
	// DefaultMinScores is how many scores it needs before it adjusts.
	DefaultMinScores = 20
	// DefaultHalfLife is the age at which a score's weight halves.
	DefaultHalfLife = 30 * time.Minute
)

// Options configure a [Quantile]; zero fields take the defaults.
type Options struct {
	// Step is γ in (0, 1).
	Step float64
	// Window bounds the scores kept (≥ 1): the oldest is dropped first.
	Window int
	// MinScores is how many scores are needed before the adjustment is
	// anything but none (≥ 1).
	MinScores int
	// HalfLife weights the scores by age: a score HalfLife older than
	// another counts half as much in the quantile (> 0).
	HalfLife time.Duration
}

// ErrInvalidOptions is wrapped by the errors of [New].
var ErrInvalidOptions = errors.New("calibration: invalid options")

// Quantile calibrates one predicted quantile online, by adaptive conformal
// inference (Gibbs & Candès 2021) on a time-decayed window of conformity
// scores.
//
// A forecaster predicts the level-p quantile r of a wait (seconds). Once
// the wait x is known, its conformity score is
//
//	s = ln((x + ε) / (r + ε)),
//
// the log-ratio of realized to predicted (ε > 0, the caller's scale floor,
// keeps zero waits finite). The published quantile is
//
//	r' = max((r + ε)·e^q − ε, 0),   q = Q_{1−αₜ}(s₁ … sₙ),
//
// with Q_τ the τ-quantile of the kept scores, each weighted 2^(−age/h).
// With αₜ = 1 − p this is split conformal prediction on the recent past;
// adaptive conformal inference moves αₜ after every outcome,
//
//	αₜ₊₁ = αₜ + γ·((1 − p) − errₜ),   errₜ = 1 if x > r'ₜ (the published one) else 0,
//
// so that the realized coverage returns to p even when the distribution of
// scores drifts (a load step, a change of service times). When 1 − αₜ ≥ 1
// the largest score is used, when ≤ 0 the smallest.
//
// Until MinScores scores are kept, q = 0 (r' = r) and αₜ stays at 1 − p.
// A Quantile is not safe for concurrent use.
type Quantile struct {
	level     float64
	step      float64
	window    int
	minScores int
	halfLife  float64 // seconds

	alpha  float64
	scores []score // ring, oldest at next once full
	next   int
	// sorted holds the same scores in order of value.
	sorted []score

	// q is the cached adjustment; stale when scores or alpha changed.
	q      float64
	qStale bool
}

type score struct {
	// at is when the score was observed, in seconds from an arbitrary
	// origin (the first score): relative weights do not depend on it.
	at    float64
	value float64
}

// New returns a calibrator of the level-p quantile, 0 < p < 1.
func New(p float64, opts Options) (*Quantile, error) {
	if !(p > 0 && p < 1) {
		return nil, fmt.Errorf("%w: quantile level %v must be in (0, 1)", ErrInvalidOptions, p)
	}
	if opts.Step == 0 {
		opts.Step = DefaultStep
	}
	if opts.Window == 0 {
		opts.Window = DefaultWindow
	}
	if opts.MinScores == 0 {
		opts.MinScores = DefaultMinScores
	}
	if opts.HalfLife == 0 {
		opts.HalfLife = DefaultHalfLife
	}
	switch {
	case !(opts.Step > 0 && opts.Step < 1):
		return nil, fmt.Errorf("%w: step %v must be in (0, 1)", ErrInvalidOptions, opts.Step)
	case opts.Window < 1:
		return nil, fmt.Errorf("%w: window %d must be ≥ 1", ErrInvalidOptions, opts.Window)
	case opts.MinScores < 1 || opts.MinScores > opts.Window:
		return nil, fmt.Errorf("%w: minimum scores %d must be in 1..window (%d)", ErrInvalidOptions, opts.MinScores, opts.Window)
	case opts.HalfLife < 0:
		return nil, fmt.Errorf("%w: half-life %v must be > 0", ErrInvalidOptions, opts.HalfLife)
	}
	return &Quantile{
		level: p, step: opts.Step, window: opts.Window, minScores: opts.MinScores,
		halfLife: opts.HalfLife.Seconds(), alpha: 1 - p,
	}, nil
}

// origin is the time scores are measured from.
var origin = time.Unix(0, 0)

// Observe records the outcome of one prediction made at the given
// adjustment: raw is the forecaster's quantile, published the one that was
// published for it (see Adjust), actual the wait that happened, all in
// seconds, and eps the scale floor the score uses. Invalid values (NaN,
// negative, infinite, eps ≤ 0) are ignored and reported false.
func (c *Quantile) Observe(at time.Time, raw, published, actual, eps float64) bool {
	if !validOutcome(raw, actual, eps) || !validOutcome(published, 0, 1) {
		return false
	}
	if c.active() {
		miss := 0.0
		if actual > published {
			miss = 1
		}
		c.alpha += c.step * ((1 - c.level) - miss)
	}
	c.addScore(at, raw, actual, eps)
	return true
}

// MissedEarly records, before its outcome is known, that a prediction
// missed: the wait has already run past the quantile published for it. It
// moves αₜ as Observe does for a miss, and reports whether it did (only
// once MinScores scores are kept, as Observe); when it did, that
// prediction's outcome goes to ObserveScore, not Observe, so that αₜ moves
// once per prediction. The bound on the long-run miscoverage holds for the
// errors in any order (Gibbs & Candès 2021, Prop. 4.1, is deterministic),
// so it holds with misses counted early; what changes is that a run of
// long waits moves αₜ as they pass the quantile, not at their admissions.
func (c *Quantile) MissedEarly() bool {
	if !c.active() {
		return false
	}
	c.alpha += c.step * ((1 - c.level) - 1)
	c.qStale = true
	return true
}

// ObserveScore is Observe without the update of αₜ, for a prediction whose
// miss MissedEarly counted: it adds the outcome's score alone.
func (c *Quantile) ObserveScore(at time.Time, raw, actual, eps float64) bool {
	if !validOutcome(raw, actual, eps) {
		return false
	}
	c.addScore(at, raw, actual, eps)
	return true
}

// validOutcome says whether a quantile and a wait (finite, ≥ 0) and a
// scale floor (finite, > 0) make a score.
func validOutcome(raw, actual, eps float64) bool {
	for _, v := range []float64{raw, actual} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return false
		}
	}
	return eps > 0 && !math.IsInf(eps, 0)
}

// addScore adds the score of one outcome to the window.
func (c *Quantile) addScore(at time.Time, raw, actual, eps float64) {
	s := score{at: at.Sub(origin).Seconds(), value: math.Log((actual + eps) / (raw + eps))}
	if len(c.scores) < c.window {
		c.scores = append(c.scores, s)
	} else {
		c.remove(c.scores[c.next])
		c.scores[c.next] = s
		c.next = (c.next + 1) % c.window
	}
	i, _ := slices.BinarySearchFunc(c.sorted, s, compareScores)
	c.sorted = slices.Insert(c.sorted, i, s)
	c.qStale = true
}

func (c *Quantile) active() bool { return len(c.scores) >= c.minScores }

// Adjustment returns q: a published quantile is (r + ε)·e^q − ε. It is 0
// until MinScores scores were observed (ok false).
func (c *Quantile) Adjustment() (q float64, ok bool) {
	if !c.active() {
		return 0, false
	}
	if c.qStale {
		c.q = c.quantile(1 - c.alpha)
		c.qStale = false
	}
	return c.q, true
}

// Adjust returns the published quantile of a raw one with adjustment q and
// scale floor eps (seconds): max((raw + eps)·e^q − eps, 0), finite for
// finite arguments.
func Adjust(raw, q, eps float64) float64 {
	v := (raw+eps)*math.Exp(q) - eps
	if !(v > 0) {
		return 0
	}
	return min(v, math.MaxFloat64)
}

// Level is the nominal level p.
func (c *Quantile) Level() float64 { return c.level }

// Miscoverage is the current working level αₜ of adaptive conformal
// inference (1 − p while inactive).
func (c *Quantile) Miscoverage() float64 { return c.alpha }

// Scores is how many scores are kept.
func (c *Quantile) Scores() int { return len(c.scores) }

// remove drops one score equal to s from sorted.
func (c *Quantile) remove(s score) {
	i, _ := slices.BinarySearchFunc(c.sorted, s, compareScores)
	for ; i < len(c.sorted); i++ {
		if c.sorted[i] == s {
			c.sorted = slices.Delete(c.sorted, i, i+1)
			return
		}
	}
}

// quantile is the weighted τ-quantile of the kept scores: the smallest
// score whose cumulative weight reaches τ of the total.
func (c *Quantile) quantile(tau float64) float64 {
	sorted := c.sorted
	if tau <= 0 {
		return sorted[0].value
	}
	if tau >= 1 {
		return sorted[len(sorted)-1].value
	}
	latest := sorted[0].at
	for _, s := range sorted {
		latest = max(latest, s.at)
	}
	weight := func(s score) float64 { return math.Exp2(-(latest - s.at) / c.halfLife) }
	var total float64
	for _, s := range sorted {
		total += weight(s)
	}
	target, cum := tau*total, 0.0
	for _, s := range sorted {
		cum += weight(s)
		if cum >= target {
			return s.value
		}
	}
	return sorted[len(sorted)-1].value
}

// compareScores orders scores by value, then time.
func compareScores(a, b score) int {
	if c := cmp.Compare(a.value, b.value); c != 0 {
		return c
	}
	return cmp.Compare(a.at, b.at)
}
