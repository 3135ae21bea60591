package accuracy

import (
	"math"
	"slices"
)

// Sample is one prediction of one workload's wait, with the wait realized.
//
// Predicted is the predictor's wait in seconds and Actual the realized wait
// (admission time − creation time) in seconds. Batch labels the contiguous
// time-ordered group the sample belongs to, for the batch-means confidence
// intervals; Batches assigns such labels. Samples with equal Batch form one
// batch wherever they sit in the slice; any int is a valid label.
type Sample struct {
	Predicted float64
	Actual    float64
	Batch     int
}

// Interval is a two-sided 95% confidence interval [Low, High] in the units
// of the figure it brackets. Defined is false when the interval does not
// exist (fewer than 2 batches, or a zero denominator); Low and High are then
// 0. A defined interval is finite, has Low ≤ High and contains its point
// estimate.
type Interval struct {
	Low, High float64
	Defined   bool
}

// Summary is the accuracy of one predictor's point predictions (expected or
// median waits) over a set of samples. Every figure is in seconds except
// MeanRelativeError (a dimensionless fraction) and the counts. When N = 0
// every figure is 0 and every Interval undefined: check N before reading a
// zero MAE as a perfect score.
type Summary struct {
	// N is the number of samples scored; Dropped the number dropped because
	// Predicted or Actual was NaN. Batches is the number of distinct Batch
	// labels among the N scored samples.
	N, Dropped, Batches int

	// MeanPredicted = (1/N)·Σ Predicted and MeanActual = (1/N)·Σ Actual.
	MeanPredicted, MeanActual float64

	// MAE is the mean absolute error (1/N)·Σ|Predicted − Actual| ≥ 0.
	// MAEInterval is its batch-means interval (see Bias), with Low clamped
	// at 0 because an MAE cannot be negative.
	MAE         float64
	MAEInterval Interval

	// MedianAbsoluteError is the median of |Predicted − Actual|: the middle
	// value for odd N, the mean of the two middle values for even N.
	MedianAbsoluteError float64

	// Bias is the mean error (1/N)·Σ(Predicted − Actual) = MeanPredicted −
	// MeanActual (up to rounding); positive means the predictor over-predicts
	// waits.
	//
	// BiasInterval is its 95% batch-means interval, defined when Batches ≥ 2.
	// With S_b the sum of the errors and n_b the number of samples in batch b
	// (b = 1…B), n̄ = N/B and residuals r_b = (S_b − Bias·n_b)/n̄, it is
	//
	//	Bias ± t_{0.975, B−1} · √( Σ_b r_b² / (B·(B−1)) ),
	//
	// the linearization (ratio-estimator) variance of Σ S_b / Σ n_b across
	// batches. With equal batch sizes r_b is the batch mean minus Bias and
	// this is the textbook batch-means interval m̄ ± t·s/√B over the batch
	// means m_b; with unequal sizes it weights each batch by its size and is
	// centred on the overall mean rather than on the unweighted mean of the
	// batch means. MAEInterval is the same with |error| in place of error.
	Bias         float64
	BiasInterval Interval

	// RelativeFloor is the floor used for MeanRelativeError: the
	// relativeFloor argument of Summarize raised to at least 1e-9 s and
	// lowered to at most 1e12 s. RelativeN is the number of scored samples
	// with Actual ≥ RelativeFloor and MeanRelativeError is
	// (1/RelativeN)·Σ |Predicted − Actual| / Actual over them (0 when
	// RelativeN = 0). The floor keeps near-zero waits, whose relative error
	// is meaningless, from dominating.
	RelativeFloor     float64
	RelativeN         int
	MeanRelativeError float64
}

// Summarize scores point predictions. It returns N, the means, MAE with its
// batch-means interval, the median absolute error, the bias with its
// interval, and the mean relative error over samples whose Actual is at
// least relativeFloor seconds. The fields of Summary give the formulas.
//
// Samples with a NaN Predicted or Actual are dropped (Summary.Dropped);
// values beyond ±1e12 s, ±Inf included, are clamped to ±1e12 s. A NaN
// relativeFloor is taken as 1e-9 s. Summarize never panics and every field
// of the result is finite.
func Summarize(samples []Sample, relativeFloor float64) Summary {
	floor := clampFloor(relativeFloor)
	s := Summary{RelativeFloor: floor}
	g := newBatchGroups(len(samples))
	absErrors := make([]float64, 0, len(samples))
	var sumPredicted, sumActual, sumAbs, sumErr, sumRelative float64
	var absPerBatch, errPerBatch []float64
	for _, smp := range samples {
		p, a, ok := usable(smp)
		if !ok {
			s.Dropped++
			continue
		}
		b := g.index(smp.Batch)
		if b == len(absPerBatch) {
			absPerBatch = append(absPerBatch, 0)
			errPerBatch = append(errPerBatch, 0)
		}
		e := p - a
		absPerBatch[b] += math.Abs(e)
		errPerBatch[b] += e
		absErrors = append(absErrors, math.Abs(e))
		sumPredicted += p
		sumActual += a
		sumAbs += math.Abs(e)
		sumErr += e
		if a >= floor {
			s.RelativeN++
			sumRelative += math.Abs(e) / a
		}
	}
	s.N = len(absErrors)
	if s.N == 0 {
		return s
	}
	n := float64(s.N)
	s.Batches = len(g.counts)
	s.MeanPredicted = sumPredicted / n
	s.MeanActual = sumActual / n
	s.MAE = sumAbs / n
	s.Bias = sumErr / n
	s.MedianAbsoluteError = median(absErrors)
	if s.RelativeN > 0 {
		s.MeanRelativeError = sumRelative / float64(s.RelativeN)
	}
	s.MAEInterval = ratioInterval(s.MAE, absPerBatch, g.counts)
	if s.MAEInterval.Defined {
		s.MAEInterval.Low = max(s.MAEInterval.Low, 0)
	}
	s.BiasInterval = ratioInterval(s.Bias, errPerBatch, g.counts)
	return s
}

// MAERatio compares the MAEs of two predictors on the same samples.
type MAERatio struct {
	// Ratio is MAE(numerator) / MAE(denominator) over the N pairs scored,
	// ≥ 0; below 1 the numerator predictor is the more accurate.
	Ratio float64

	// Interval is the 95% batch-means interval of Ratio, defined when
	// Batches ≥ 2, with Low clamped at 0. With A_b and C_b the sums of the
	// numerator's and the denominator's absolute errors in batch b (b = 1…B),
	// C̄ = Σ C_b / B and residuals r_b = (A_b − Ratio·C_b)/C̄, it is
	//
	//	Ratio ± t_{0.975, B−1} · √( Σ_b r_b² / (B·(B−1)) ),
	//
	// the delta-method (linearization) variance of the ratio estimator
	// Σ A_b / Σ C_b across batches. Because both predictors are scored on
	// the same workloads the batch sums are paired, and the interval is much
	// narrower than one built from the two MAE intervals separately.
	Interval Interval

	// N is the number of pairs scored, Dropped the number dropped because
	// either sample of the pair had a NaN Predicted or Actual, Batches the
	// number of distinct Batch labels among the N pairs.
	N, Dropped, Batches int
}

// CompareMAE returns the ratio of the numerator predictor's MAE to the
// denominator predictor's MAE on the same samples, e.g. forecast MAE / EMA
// MAE, with its batch-means interval (see MAERatio).
//
// The two slices must be paired: the same length, and at every index the
// same Batch and the same Actual (bitwise, or both NaN); otherwise ok is
// false. A pair is dropped when either of its samples has a NaN Predicted or
// Actual, and values beyond ±1e12 s are clamped, as in Summarize.
//
// ok is false, and the result zero, when the slices are not paired, when no
// pair is left, or when the denominator's MAE is below 1e-9 s (one
// nanosecond, the resolution of time.Duration; a ratio over a zero MAE does
// not exist). With a single batch the ratio is defined but its Interval is
// not. Every field of the result is finite.
func CompareMAE(numerator, denominator []Sample) (MAERatio, bool) {
	if len(numerator) != len(denominator) {
		return MAERatio{}, false
	}
	var r MAERatio
	g := newBatchGroups(len(numerator))
	var numPerBatch, denPerBatch []float64
	var numSum, denSum float64
	for i, x := range numerator {
		y := denominator[i]
		if x.Batch != y.Batch || !(x.Actual == y.Actual || math.IsNaN(x.Actual) && math.IsNaN(y.Actual)) {
			return MAERatio{}, false
		}
		px, ax, okx := usable(x)
		py, ay, oky := usable(y)
		if !okx || !oky {
			r.Dropped++
			continue
		}
		b := g.index(x.Batch)
		if b == len(numPerBatch) {
			numPerBatch = append(numPerBatch, 0)
			denPerBatch = append(denPerBatch, 0)
		}
		ex, ey := math.Abs(px-ax), math.Abs(py-ay)
		numPerBatch[b] += ex
		denPerBatch[b] += ey
		numSum += ex
		denSum += ey
		r.N++
	}
	if r.N == 0 || !(denSum/float64(r.N) >= timeResolution) {
		return MAERatio{}, false
	}
	r.Batches = len(g.counts)
	r.Ratio = numSum / denSum
	r.Interval = ratioInterval(r.Ratio, numPerBatch, denPerBatch)
	if r.Interval.Defined {
		r.Interval.Low = max(r.Interval.Low, 0)
	}
	return r, true
}

const (
	// maxSeconds bounds every Predicted and Actual: 1e12 s ≈ 31,700 years.
	// It keeps every sum, square and quotient below in float64 range.
	maxSeconds = 1e12
	// timeResolution is one nanosecond, the resolution of time.Duration:
	// the smallest relative-error floor and denominator MAE accepted.
	timeResolution = 1e-9
)

// usable returns the sample's values clamped to ±maxSeconds, and false when
// either is NaN.
func usable(s Sample) (predicted, actual float64, ok bool) {
	if math.IsNaN(s.Predicted) || math.IsNaN(s.Actual) {
		return 0, 0, false
	}
	return clampSeconds(s.Predicted), clampSeconds(s.Actual), true
}

func clampSeconds(v float64) float64 {
	return min(max(v, -maxSeconds), maxSeconds)
}

func clampFloor(floor float64) float64 {
	if math.IsNaN(floor) {
		return timeResolution
	}
	return min(max(floor, timeResolution), maxSeconds)
}

// batchGroups maps Batch labels to dense indices 0, 1, … in order of first
// appearance and counts the samples of each.
type batchGroups struct {
	dense  map[int]int
	counts []float64
}

func newBatchGroups(hint int) batchGroups {
	return batchGroups{dense: make(map[int]int, min(hint, 64))}
}

// index returns the dense index of label and counts one sample in it; a new
// label gets the next index, len(counts) before the call.
func (g *batchGroups) index(label int) int {
	b, ok := g.dense[label]
	if !ok {
		b = len(g.counts)
		g.dense[label] = b
		g.counts = append(g.counts, 0)
	}
	g.counts[b]++
	return b
}

// ratioInterval returns the 95% interval of the ratio estimate
// R = Σ num_b / Σ den_b from per-batch sums, by linearization:
// R ± t_{0.975,B−1}·√(Σ_b ((num_b − R·den_b)/d̄)² / (B(B−1))), d̄ = Σ den_b/B.
// It is undefined for fewer than 2 batches, a non-positive d̄ or a
// non-finite half-width.
func ratioInterval(estimate float64, num, den []float64) Interval {
	batches := len(num)
	if batches < 2 {
		return Interval{}
	}
	var denSum float64
	for _, d := range den {
		denSum += d
	}
	denMean := denSum / float64(batches)
	if !(denMean > 0) {
		return Interval{}
	}
	var squares float64
	for b := range num {
		r := (num[b] - estimate*den[b]) / denMean
		squares += r * r
	}
	half := StudentT975(batches-1) * math.Sqrt(squares/(float64(batches)*float64(batches-1)))
	low, high := estimate-half, estimate+half
	if math.IsNaN(half) || math.IsInf(low, 0) || math.IsInf(high, 0) {
		return Interval{}
	}
	return Interval{Low: low, High: high, Defined: true}
}

// median sorts v in place and returns its median; v must not be empty.
func median(v []float64) float64 {
	slices.Sort(v)
	mid := len(v) / 2
	if len(v)%2 == 1 {
		return v[mid]
	}
	return v[mid-1] + (v[mid]-v[mid-1])/2
}
