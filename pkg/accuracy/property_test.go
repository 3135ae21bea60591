package accuracy

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// normalMAE is E|e| for e ~ N(μ, σ²): σ√(2/π)·exp(−μ²/2σ²) + μ(1 − 2Φ(−μ/σ)).
func normalMAE(mu, sigma float64) float64 {
	phi := 0.5 * math.Erfc(mu/sigma/math.Sqrt2) // Φ(−μ/σ)
	return sigma*math.Sqrt(2/math.Pi)*math.Exp(-mu*mu/(2*sigma*sigma)) + mu*(1-2*phi)
}

// coverageRepetitions is the number of seeded repetitions of the coverage
// experiments; with true coverage 0.95 the observed fraction has standard
// deviation √(0.95·0.05/2000) = 0.0049, so [0.93, 0.97] is ±4σ.
const coverageRepetitions = 2000

func assertCoverage(t *testing.T, name string, covered int) {
	t.Helper()
	c := float64(covered) / coverageRepetitions
	t.Logf("%s: coverage %.4f", name, c)
	if c < 0.93 || c > 0.97 {
		t.Errorf("%s: 95%% interval covered the truth in %.4f of %d repetitions, want [0.93, 0.97]", name, c, coverageRepetitions)
	}
}

// For i.i.d. normal errors the batch-means intervals of the bias and of the
// MAE cover the true mean error μ and the true E|e| in about 95% of
// repetitions, with equal and with unequal batch sizes.
func TestBatchMeansIntervalsCoverTheTruth(t *testing.T) {
	const mu, sigma = 2.0, 5.0
	trueMAE := normalMAE(mu, sigma)
	tests := map[string]struct {
		batchSize func(r *rand.Rand) int
	}{
		"20 batches of 25":       {batchSize: func(*rand.Rand) int { return 25 }},
		"20 batches of 10 to 40": {batchSize: func(r *rand.Rand) int { return 10 + r.IntN(31) }},
		"20 batches of 2 to 60":  {batchSize: func(r *rand.Rand) int { return 2 + r.IntN(59) }},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := newRand(42)
			var biasCovered, maeCovered int
			samples := make([]Sample, 0, 1200)
			for range coverageRepetitions {
				samples = samples[:0]
				for b := range 20 {
					for range tc.batchSize(r) {
						actual := r.ExpFloat64() * 30
						samples = append(samples, Sample{Predicted: actual + mu + sigma*r.NormFloat64(), Actual: actual, Batch: b})
					}
				}
				s := Summarize(samples, 1)
				if s.BiasInterval.Low <= mu && mu <= s.BiasInterval.High {
					biasCovered++
				}
				if s.MAEInterval.Low <= trueMAE && trueMAE <= s.MAEInterval.High {
					maeCovered++
				}
			}
			assertCoverage(t, "bias", biasCovered)
			assertCoverage(t, "MAE", maeCovered)
		})
	}
}

// With autocorrelated errors (AR(1), φ = 0.8, correlation time about 9
// samples) batches of 200 are nearly independent and the batch-means
// interval still covers; an interval that treated the samples as
// independent would be √((1+φ)/(1−φ)) = 3 times too narrow and cover about
// 50%.
func TestBatchMeansIntervalCoversUnderAutocorrelation(t *testing.T) {
	const mu, phi = 1.0, 0.8
	innovation := math.Sqrt(1 - phi*phi) // stationary variance 1
	r := newRand(7)
	covered := 0
	samples := make([]Sample, 20*200)
	batch := Batches(len(samples), 20)
	for range coverageRepetitions {
		e := r.NormFloat64()
		for i := range samples {
			e = phi*e + innovation*r.NormFloat64()
			samples[i] = Sample{Predicted: 10 + mu + e, Actual: 10, Batch: batch[i]}
		}
		s := Summarize(samples, 1)
		if s.BiasInterval.Low <= mu && mu <= s.BiasInterval.High {
			covered++
		}
	}
	assertCoverage(t, "AR(1) bias", covered)
}

// Two predictors with correlated normal errors of standard deviations 2 and
// 4 have MAE ratio exactly 2/4 = 0.5; the paired interval covers it about
// 95% of the time.
func TestMAERatioIntervalCoversTheTruth(t *testing.T) {
	const sigmaA, sigmaB, rho = 2.0, 4.0, 0.6
	r := newRand(99)
	covered := 0
	a := make([]Sample, 20*25)
	b := make([]Sample, len(a))
	batch := Batches(len(a), 20)
	for range coverageRepetitions {
		for i := range a {
			actual := r.ExpFloat64() * 30
			z1, z2 := r.NormFloat64(), r.NormFloat64()
			a[i] = Sample{Predicted: actual + sigmaA*z1, Actual: actual, Batch: batch[i]}
			b[i] = Sample{Predicted: actual + sigmaB*(rho*z1+math.Sqrt(1-rho*rho)*z2), Actual: actual, Batch: batch[i]}
		}
		ratio, ok := CompareMAE(a, b)
		if !ok || !ratio.Interval.Defined {
			t.Fatalf("CompareMAE = %+v, %v", ratio, ok)
		}
		if ratio.Interval.Low <= 0.5 && 0.5 <= ratio.Interval.High {
			covered++
		}
	}
	assertCoverage(t, "MAE ratio", covered)
}

// The exact coverage of the Wilson interval, Σ_k C(n,k)p^k(1−p)^(n−k) over
// the k whose interval holds p, averaged over p ∈ [0.05, 0.95], is close to
// 0.95 (about 0.9506 for n = 100), and never far below it.
func TestWilsonExactCoverage(t *testing.T) {
	for _, n := range []int{20, 50, 100} {
		sum, worst := 0.0, 1.0
		const grid = 300
		for i := 0; i <= grid; i++ {
			p := 0.05 + 0.9*float64(i)/grid
			c := 0.0
			for k := 0; k <= n; k++ {
				lo, hi, _ := Wilson(k, n)
				if lo <= p && p <= hi {
					lgn, _ := math.Lgamma(float64(n + 1))
					lgk, _ := math.Lgamma(float64(k + 1))
					lgnk, _ := math.Lgamma(float64(n - k + 1))
					c += math.Exp(lgn - lgk - lgnk + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
				}
			}
			sum += c
			worst = min(worst, c)
		}
		mean := sum / (grid + 1)
		if mean < 0.945 || mean > 0.96 || worst < 0.91 {
			t.Errorf("n=%d: Wilson coverage mean %.4f, worst %.4f; want mean in [0.945, 0.96], worst ≥ 0.91", n, mean, worst)
		}
	}
}

func TestWilsonWithinUnitAndContainsProportion(t *testing.T) {
	for n := 1; n <= 300; n++ {
		prevLo, prevHi := -1.0, -1.0
		for k := 0; k <= n; k++ {
			lo, hi, ok := Wilson(k, n)
			p := float64(k) / float64(n)
			if !ok || !(0 <= lo && lo <= p && p <= hi && hi <= 1) {
				t.Fatalf("Wilson(%d, %d) = [%g, %g], %v: not within [0, 1] around %g", k, n, lo, hi, ok, p)
			}
			if lo < prevLo || hi < prevHi {
				t.Fatalf("Wilson(%d, %d) = [%g, %g] below Wilson(%d, %d) = [%g, %g]", k, n, lo, hi, k-1, n, prevLo, prevHi)
			}
			prevLo, prevHi = lo, hi
			// Symmetry: failures are successes seen the other way.
			mlo, mhi, _ := Wilson(n-k, n)
			if math.Abs(lo-(1-mhi)) > 1e-12 || math.Abs(hi-(1-mlo)) > 1e-12 {
				t.Fatalf("Wilson(%d, %d) = [%g, %g] not the mirror of Wilson(%d, %d) = [%g, %g]", k, n, lo, hi, n-k, n, mlo, mhi)
			}
		}
	}
}

// randomSamples draws n samples with batch labels in [−3, 5] and values
// that are mostly ordinary waits, sometimes zero, huge, infinite or NaN.
func randomSamples(r *rand.Rand, n int) []Sample {
	value := func() float64 {
		switch r.IntN(40) {
		case 0:
			return math.NaN()
		case 1:
			return math.Inf(1 - 2*r.IntN(2))
		case 2:
			return 1e15 * r.Float64()
		case 3, 4, 5:
			return 0
		}
		return r.ExpFloat64() * 60
	}
	out := make([]Sample, n)
	for i := range out {
		out[i] = Sample{Predicted: value(), Actual: value(), Batch: r.IntN(9) - 3}
	}
	return out
}

func checkInterval(t *testing.T, name string, iv Interval, estimate float64, wantDefined bool) {
	t.Helper()
	if iv.Defined != wantDefined {
		t.Fatalf("%s: Defined = %v, want %v", name, iv.Defined, wantDefined)
	}
	if !iv.Defined {
		if iv.Low != 0 || iv.High != 0 {
			t.Fatalf("%s: undefined interval %+v carries bounds", name, iv)
		}
		return
	}
	if !finite(iv.Low) || !finite(iv.High) || !(iv.Low <= estimate && estimate <= iv.High) {
		t.Fatalf("%s: interval [%g, %g] does not contain %g", name, iv.Low, iv.High, estimate)
	}
}

func TestSummarizeInvariants(t *testing.T) {
	r := newRand(2026)
	for trial := range 2000 {
		samples := randomSamples(r, r.IntN(60))
		s := Summarize(samples, r.Float64()*30)
		if s.N+s.Dropped != len(samples) {
			t.Fatalf("trial %d: N %d + Dropped %d ≠ %d samples", trial, s.N, s.Dropped, len(samples))
		}
		for name, v := range map[string]float64{
			"MAE": s.MAE, "MedianAbsoluteError": s.MedianAbsoluteError,
			"MeanRelativeError": s.MeanRelativeError, "RelativeFloor": s.RelativeFloor,
		} {
			if !finiteNonNegative(v) {
				t.Fatalf("trial %d: %s = %g", trial, name, v)
			}
		}
		if !finite(s.Bias) || !finite(s.MeanPredicted) || !finite(s.MeanActual) {
			t.Fatalf("trial %d: non-finite figure in %+v", trial, s)
		}
		if math.Abs(s.Bias) > s.MAE*(1+1e-12) {
			t.Fatalf("trial %d: |Bias| %g > MAE %g", trial, s.Bias, s.MAE)
		}
		// magnitude is the total size of the values summed, which bounds
		// the rounding of the sums.
		var magnitude float64
		for _, smp := range samples {
			if p, a, ok := usable(smp); ok {
				magnitude += math.Abs(p) + math.Abs(a)
			}
		}
		if d := s.MeanPredicted - s.MeanActual - s.Bias; math.Abs(d) > 1e-12*max(magnitude, 1) {
			t.Fatalf("trial %d: MeanPredicted − MeanActual − Bias = %g", trial, d)
		}
		checkInterval(t, "MAEInterval", s.MAEInterval, s.MAE, s.Batches >= 2)
		checkInterval(t, "BiasInterval", s.BiasInterval, s.Bias, s.Batches >= 2)
		if s.MAEInterval.Low < 0 {
			t.Fatalf("trial %d: MAE interval below 0: %+v", trial, s.MAEInterval)
		}

		// The order of the samples and the names of the batches do not
		// matter, up to the rounding of sums in another order: relative 1e-9,
		// or 1e-12 of the total magnitude of the values summed.
		rounding := cmpopts.EquateApprox(1e-9, 1e-12*max(magnitude, 1))
		shuffled := append([]Sample(nil), samples...)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		for i := range shuffled {
			shuffled[i].Batch = 1000 - 7*shuffled[i].Batch
		}
		if diff := cmp.Diff(s, Summarize(shuffled, s.RelativeFloor), rounding); diff != "" {
			t.Fatalf("trial %d: shuffled and relabelled samples change the summary (-orig +shuffled):\n%s", trial, diff)
		}
	}
}

func TestScoreQuantileInvariants(t *testing.T) {
	r := newRand(17)
	for trial := range 2000 {
		samples := randomSamples(r, 1+r.IntN(60))
		level := r.Float64()
		q, ok := ScoreQuantile(samples, level)
		if ok != (q.N > 0) || q.N+q.Dropped != len(samples) {
			t.Fatalf("trial %d: ok = %v with %+v", trial, ok, q)
		}
		if !ok {
			continue
		}
		if !finiteNonNegative(q.PinballLoss) || q.Coverage < 0 || q.Coverage > 1 {
			t.Fatalf("trial %d: %+v", trial, q)
		}
		checkInterval(t, "CoverageInterval", q.CoverageInterval, q.Coverage, true)
		if q.CoverageInterval.Low < 0 || q.CoverageInterval.High > 1 {
			t.Fatalf("trial %d: coverage interval %+v outside [0, 1]", trial, q.CoverageInterval)
		}
		// Raising every prediction (a P90 above the P50) covers at least
		// as many samples.
		higher := append([]Sample(nil), samples...)
		for i := range higher {
			higher[i].Predicted += r.ExpFloat64() * 10
		}
		h, _ := ScoreQuantile(higher, level)
		if h.Covered < q.Covered {
			t.Fatalf("trial %d: raising predictions lowered coverage from %d to %d", trial, q.Covered, h.Covered)
		}
	}
}

func TestCompareMAEInvariants(t *testing.T) {
	r := newRand(5)
	for trial := range 2000 {
		a := randomSamples(r, r.IntN(60))
		b := append([]Sample(nil), a...)
		for i := range b {
			b[i].Predicted = b[i].Actual + r.NormFloat64()*20
		}
		ratio, ok := CompareMAE(a, b)
		if !ok {
			continue
		}
		if !finiteNonNegative(ratio.Ratio) || ratio.N+ratio.Dropped != len(a) {
			t.Fatalf("trial %d: %+v", trial, ratio)
		}
		checkInterval(t, "Interval", ratio.Interval, ratio.Ratio, ratio.Batches >= 2)
		if ratio.Interval.Low < 0 {
			t.Fatalf("trial %d: interval below 0: %+v", trial, ratio.Interval)
		}
		// On the same kept pairs, the ratio is the ratio of the two MAEs.
		var keptA, keptB []Sample
		for i := range a {
			if _, _, okA := usable(a[i]); okA {
				if _, _, okB := usable(b[i]); okB {
					keptA, keptB = append(keptA, a[i]), append(keptB, b[i])
				}
			}
		}
		want := Summarize(keptA, 1).MAE / Summarize(keptB, 1).MAE
		if math.Abs(ratio.Ratio-want) > 1e-9*want {
			t.Fatalf("trial %d: ratio %g, MAE quotient %g", trial, ratio.Ratio, want)
		}
		if inverse, ok := CompareMAE(b, a); ok && math.Abs(inverse.Ratio*ratio.Ratio-1) > 1e-9 {
			t.Fatalf("trial %d: ratio %g and inverse %g", trial, ratio.Ratio, inverse.Ratio)
		}
	}
}
