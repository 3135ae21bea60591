package accuracy

import (
	"math"
	"sort"
)

// HistogramQuantile estimates the q-quantile (0 ≤ q ≤ 1; q = 0.5 is the
// median) of observations recorded in a cumulative histogram, the way
// Prometheus's histogram_quantile does for a classic histogram. Bucket i
// holds the observations ≤ upperBounds[i]; cumulativeCounts[i] is how many
// there are. The last bound must be +Inf, so its count is the total N.
//
// It is an estimate: the individual observations are gone, and the result
// assumes they are spread uniformly inside each bucket. With rank = q·N and
// b the first bucket whose cumulative count reaches rank, it returns
//
//	lower_b + (upper_b − lower_b) · (rank − count_{b−1}) / (count_b − count_{b−1}),
//
// where lower_b is the previous bucket's bound (0 for the first bucket, as
// in Prometheus, or upper_0 itself when upper_0 ≤ 0). When the rank falls in
// the +Inf bucket it returns the highest finite bound, the only finite answer
// (the error is then unbounded). A rank of 0 that falls in an empty bucket
// gives lower_b, where Prometheus would give NaN. Counts that decrease from
// one bucket to the next (as when buckets are scraped at slightly different
// times) are raised to their running maximum, as Prometheus does.
//
// ok is false, and the result 0, when q is NaN or outside [0, 1]; when the
// slices differ in length or have fewer than 2 buckets; when the bounds are
// not strictly increasing finite numbers followed by +Inf; when a count is
// NaN, ±Inf or negative; or when the histogram is empty (N = 0). The result
// is finite.
func HistogramQuantile(q float64, upperBounds []float64, cumulativeCounts []float64) (float64, bool) {
	last := len(upperBounds) - 1
	if !(q >= 0 && q <= 1) || len(cumulativeCounts) != len(upperBounds) || last < 1 ||
		!math.IsInf(upperBounds[last], 1) {
		return 0, false
	}
	counts := make([]float64, len(cumulativeCounts))
	for i, c := range cumulativeCounts {
		if !(c >= 0) || math.IsInf(c, 1) {
			return 0, false
		}
		if i < last && (math.IsInf(upperBounds[i], 0) || i > 0 && !(upperBounds[i] > upperBounds[i-1])) {
			return 0, false
		}
		counts[i] = c
		if i > 0 {
			counts[i] = max(c, counts[i-1])
		}
	}
	total := counts[last]
	if total == 0 {
		return 0, false
	}
	rank := q * total
	b := sort.Search(last, func(i int) bool { return counts[i] >= rank })
	if b == last {
		return upperBounds[last-1], true
	}
	if b == 0 && upperBounds[0] <= 0 {
		return upperBounds[0], true
	}
	lower, upper, count := 0.0, upperBounds[b], counts[b]
	if b > 0 {
		lower = upperBounds[b-1]
		count -= counts[b-1]
		rank -= counts[b-1]
	}
	if count <= 0 {
		return lower, true
	}
	fraction := min(max(rank/count, 0), 1)
	v := lower + (upper-lower)*fraction
	if math.IsInf(v, 0) || math.IsNaN(v) {
		// upper − lower overflowed (bounds near ±MaxFloat64).
		v = lower*(1-fraction) + upper*fraction
	}
	return v, true
}
