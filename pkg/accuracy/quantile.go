package accuracy

import "math"

// QuantileScore is the accuracy of one predictor's quantile predictions
// (e.g. its P90 waits) over a set of samples, Predicted being the predicted
// quantile in seconds.
type QuantileScore struct {
	// Level is the quantile level τ ∈ [0, 1] the predictions claim, e.g. 0.9.
	Level float64

	// N is the number of samples scored, Dropped the number dropped because
	// Predicted or Actual was NaN.
	N, Dropped int

	// PinballLoss is the mean quantile loss in seconds, ≥ 0:
	//
	//	(1/N)·Σ ℓ_τ(a, q),  ℓ_τ(a, q) = τ·(a − q) if a ≥ q, else (1 − τ)·(q − a),
	//
	// with q = Predicted and a = Actual. Its expectation is minimized by the
	// true τ-quantile, so lower is better; at τ = 0.5 it is half the MAE.
	PinballLoss float64

	// Covered is the number of samples with Actual ≤ Predicted and Coverage
	// = Covered/N the fraction, to compare with Level: a calibrated P90 has
	// Coverage near 0.9.
	Covered  int
	Coverage float64

	// CoverageInterval is the Wilson score 95% interval of Coverage (see
	// Wilson); it treats the samples as independent, so it is too narrow
	// when successive waits are correlated.
	CoverageInterval Interval
}

// ScoreQuantile scores quantile predictions at level τ = level: pinball loss
// and coverage with its Wilson interval (see QuantileScore for the
// formulas). Samples with a NaN Predicted or Actual are dropped, and values
// beyond ±1e12 s clamped, as in Summarize; Batch is ignored.
//
// ok is false when level is NaN or outside [0, 1] (the score is then zero)
// and when no sample is left to score (only Level and Dropped are then set).
// Every field of the result is finite.
func ScoreQuantile(samples []Sample, level float64) (QuantileScore, bool) {
	if !(level >= 0 && level <= 1) {
		return QuantileScore{}, false
	}
	s := QuantileScore{Level: level}
	var loss float64
	for _, smp := range samples {
		q, a, ok := usable(smp)
		if !ok {
			s.Dropped++
			continue
		}
		s.N++
		if a <= q {
			s.Covered++
		}
		if a >= q {
			loss += level * (a - q)
		} else {
			loss += (1 - level) * (q - a)
		}
	}
	if s.N == 0 {
		return s, false
	}
	s.PinballLoss = loss / float64(s.N)
	s.Coverage = float64(s.Covered) / float64(s.N)
	lo, hi, _ := Wilson(s.Covered, s.N)
	s.CoverageInterval = Interval{Low: lo, High: hi, Defined: true}
	return s, true
}

// z975 is the 0.975 quantile of the standard normal distribution.
const z975 = 1.959963984540054

// Wilson returns the Wilson score 95% interval [lo, hi] for a proportion
// observed as k successes in n independent trials. With p̂ = k/n and
// z = 1.959963984540054 (the 0.975 normal quantile) it is
//
//	(p̂ + z²/(2n) ± z·√(p̂(1 − p̂)/n + z²/(4n²))) / (1 + z²/n).
//
// Unlike the Wald interval p̂ ± z·√(p̂(1−p̂)/n) it has close to nominal
// coverage for small n and p̂ near 0 or 1, and it is never degenerate: for
// k = 0 it is [0, z²/(n + z²)]. The result lies in [0, 1] and contains k/n
// (rounding is corrected so that both hold exactly).
//
// ok is false, and lo = hi = 0, when n ≤ 0 (no trials, no interval) or k is
// outside [0, n].
func Wilson(k, n int) (lo, hi float64, ok bool) {
	if n <= 0 || k < 0 || k > n {
		return 0, 0, false
	}
	nf := float64(n)
	p := float64(k) / nf
	z2n := z975 * z975 / nf
	denominator := 1 + z2n
	center := (p + z2n/2) / denominator
	half := z975 / denominator * math.Sqrt(p*(1-p)/nf+z2n/(4*nf))
	lo = min(max(center-half, 0), p)
	hi = max(min(center+half, 1), p)
	return lo, hi, true
}
