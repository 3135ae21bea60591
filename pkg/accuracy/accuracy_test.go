package accuracy

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// t975 are the exact quantiles t_{0.975,1} = tan(0.475π) and
// t_{0.975,2} = 0.95/√(2·0.975·0.025) used in the hand computations.
var (
	t975df1 = math.Tan(0.475 * math.Pi) // 12.706204736174696
	t975df2 = 0.95 / math.Sqrt(0.04875) // 4.302652729749464
)

// workedSummary is Summarize(handSamples(), 5), computed by hand:
//
//	errors e = 2, −4 | 0, 6 | 2, −1 (batches 0 | 1 | 2), N = 6, B = 3
//	MAE = (2+4+0+6+2+1)/6 = 15/6 = 2.5
//	batch sums of |e| = 6, 6, 3; n̄ = 2; r_b = (S_b − 2.5·2)/2 = 0.5, 0.5, −1
//	se = √((0.25+0.25+1)/(3·2)) = √0.25 = 0.5
//	MAE interval = 2.5 ± t(2)·0.5 = 2.5 ± 4.302652730·0.5 = [0.348673635, 4.651326365]
//	Bias = (2−4+0+6+2−1)/6 = 5/6; batch sums −2, 6, 1;
//	r_b = (−2 − 5/3)/2, (6 − 5/3)/2, (1 − 5/3)/2 = −11/6, 13/6, −2/6
//	se = √((121+169+4)/36/6) = √(49/36) = 7/6
//	Bias interval = 5/6 ± 4.302652730·7/6 = [−4.186428185, 5.853094851]
//	median |e| of 0, 1, 2, 2, 4, 6 = (2+2)/2 = 2
//	Actual ≥ 5: |e|/a = 2/8, 4/9, 2/10, 1/5 → mean 1.094444/4 = 0.273611
func workedSummary() Summary {
	return Summary{
		N: 6, Batches: 3,
		MeanPredicted: 41.0 / 6, MeanActual: 6,
		MAE:                 2.5,
		MAEInterval:         Interval{Low: 2.5 - t975df2*0.5, High: 2.5 + t975df2*0.5, Defined: true},
		MedianAbsoluteError: 2,
		Bias:                5.0 / 6,
		BiasInterval:        Interval{Low: 5.0/6 - t975df2*7/6, High: 5.0/6 + t975df2*7/6, Defined: true},
		RelativeFloor:       5,
		RelativeN:           4,
		MeanRelativeError:   (2.0/8 + 4.0/9 + 2.0/10 + 1.0/5) / 4,
	}
}

func TestSummarizeHandValues(t *testing.T) {
	worked := workedSummary()
	// The same in numbers, against slips in the expressions above.
	if diff := cmp.Diff(Interval{Low: 0.348673635, High: 4.651326365, Defined: true}, worked.MAEInterval,
		cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Fatalf("hand MAE interval (-want +got):\n%s", diff)
	}
	floorAboveAll := workedSummary()
	floorAboveAll.RelativeFloor, floorAboveAll.RelativeN, floorAboveAll.MeanRelativeError = 1e12, 0, 0

	tests := map[string]struct {
		samples []Sample
		floor   float64
		want    Summary
	}{
		"worked example": {samples: handSamples(), floor: 5, want: worked},
		"worked example, batches shuffled in the slice": {
			samples: []Sample{handSamples()[4], handSamples()[0], handSamples()[3], handSamples()[5], handSamples()[1], handSamples()[2]},
			floor:   5, want: worked,
		},
		"floor +Inf is 1e12 s":   {samples: handSamples(), floor: math.Inf(1), want: floorAboveAll},
		"nil":                    {samples: nil, floor: 5, want: Summary{RelativeFloor: 5}},
		"negative floor is 1 ns": {samples: []Sample{}, floor: -3, want: Summary{RelativeFloor: 1e-9}},
		"every sample NaN": {
			samples: []Sample{{Predicted: math.NaN(), Actual: 1}, {Predicted: 1, Actual: math.NaN()}},
			floor:   1, want: Summary{Dropped: 2, RelativeFloor: 1},
		},
		// One batch: the point figures exist, the intervals do not.
		"one batch": {
			samples: []Sample{{Predicted: 3, Actual: 1}, {Predicted: 1, Actual: 2}},
			floor:   1,
			want: Summary{N: 2, Batches: 1, MeanPredicted: 2, MeanActual: 1.5, MAE: 1.5,
				MedianAbsoluteError: 1.5, Bias: 0.5, RelativeFloor: 1, RelativeN: 2, MeanRelativeError: (2.0/1 + 1.0/2) / 2},
		},
		// e = 1e12 (+Inf clamped, Actual 0) | 0, the NaN dropped; n̄ = 1,
		// r_b = ±5e11, se = √(5e23/2) = 5e11, half = t(1)·5e11.
		"NaN dropped, Inf clamped, NaN floor": {
			samples: []Sample{
				{Predicted: math.NaN(), Actual: 1, Batch: 0},
				{Predicted: math.Inf(1), Actual: 0, Batch: 0},
				{Predicted: 1, Actual: 1, Batch: 1},
			},
			floor: math.NaN(),
			want: Summary{N: 2, Dropped: 1, Batches: 2, MeanPredicted: (1e12 + 1) / 2, MeanActual: 0.5,
				MAE:                 5e11,
				MAEInterval:         Interval{Low: 0, High: 5e11 + t975df1*5e11, Defined: true},
				MedianAbsoluteError: 5e11,
				Bias:                5e11,
				BiasInterval:        Interval{Low: 5e11 - t975df1*5e11, High: 5e11 + t975df1*5e11, Defined: true},
				RelativeFloor:       1e-9, RelativeN: 1, MeanRelativeError: 0},
		},
		// Batches of 1 and 3 samples, errors 4 | 0, 0, 2. The overall MAE is
		// 6/4 = 1.5, not the mean of batch means (4 + 2/3)/2 = 2.33; the
		// interval is centred on 1.5: n̄ = 2, r_b = (4 − 1.5)/2, (2 − 4.5)/2
		// = ±1.25, se = √(3.125/2) = 1.25, half = t(1)·1.25 = 15.882755920.
		"unequal batches are weighted by size": {
			samples: []Sample{
				{Predicted: 4, Actual: 0, Batch: 7},
				{Predicted: 0, Actual: 0, Batch: -2},
				{Predicted: 0, Actual: 0, Batch: -2},
				{Predicted: 2, Actual: 0, Batch: -2},
			},
			floor: 1,
			want: Summary{N: 4, Batches: 2, MeanPredicted: 1.5, MeanActual: 0,
				MAE:                 1.5,
				MAEInterval:         Interval{Low: 0, High: 1.5 + t975df1*1.25, Defined: true},
				MedianAbsoluteError: 1,
				Bias:                1.5,
				BiasInterval:        Interval{Low: 1.5 - t975df1*1.25, High: 1.5 + t975df1*1.25, Defined: true},
				RelativeFloor:       1},
		},
		"perfect predictor": {
			samples: []Sample{{Predicted: 2, Actual: 2, Batch: 0}, {Predicted: 3, Actual: 3, Batch: 1}},
			floor:   1,
			want: Summary{N: 2, Batches: 2, MeanPredicted: 2.5, MeanActual: 2.5,
				MAEInterval: Interval{Defined: true}, BiasInterval: Interval{Defined: true},
				RelativeFloor: 1, RelativeN: 2},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Summarize(tc.samples, tc.floor)
			if diff := cmp.Diff(tc.want, got, approx); diff != "" {
				t.Errorf("Summarize (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompareMAEHandValues(t *testing.T) {
	forecast := handSamples()
	// |e| = 1, 0 | 2, 3 | 3, 0: batch sums 1, 5, 3, MAE 9/6 = 1.5.
	baseline := withPredictions(forecast, 9, 9, 5, 4, 7, 5)
	oneBatch := withPredictions(forecast, 9, 9, 5, 4, 7, 5)
	for i := range oneBatch {
		oneBatch[i].Batch = 0
	}
	oneBatchForecast := withPredictions(oneBatch, 10, 5, 3, 7, 12, 4)
	exact := withPredictions(forecast, 8, 9, 3, 1, 10, 5)
	withNaN := withPredictions(forecast, 9, 9, 5, math.NaN(), 7, 5)
	otherBatch := withPredictions(forecast, 9, 9, 5, 4, 7, 5)
	otherBatch[2].Batch = 5
	otherActual := withPredictions(forecast, 9, 9, 5, 4, 7, 5)
	otherActual[5].Actual++

	tests := map[string]struct {
		numerator, denominator []Sample
		want                   MAERatio
		wantOK                 bool
	}{
		// R = 15/9 = 5/3, C̄ = 3, r_b = (6 − 5/3)/3, (6 − 25/3)/3, (3 − 5)/3
		// = 13/9, −7/9, −6/9; se = √(254/81/6) = 0.722934;
		// half = 4.302652730·0.722934 = 3.110535; Low = 1.667 − 3.111 < 0 → 0.
		"forecast over baseline": {
			numerator: forecast, denominator: baseline, wantOK: true,
			want: MAERatio{Ratio: 5.0 / 3, N: 6, Batches: 3,
				Interval: Interval{Low: 0, High: 5.0/3 + t975df2*math.Sqrt(254.0/81/6), Defined: true}},
		},
		// R = 9/15 = 0.6, C̄ = 5, r_b = (1 − 3.6)/5, (5 − 3.6)/5, (3 − 1.8)/5
		// = −0.52, 0.28, 0.24; se = √(0.4064/6) = 0.260256; half = 1.119792,
		// so Low = 0.6 − 1.12 < 0 is clamped to 0.
		"baseline over forecast": {
			numerator: baseline, denominator: forecast, wantOK: true,
			want: MAERatio{Ratio: 0.6, N: 6, Batches: 3,
				Interval: Interval{Low: 0, High: 0.6 + t975df2*math.Sqrt(0.4064/6), Defined: true}},
		},
		"a predictor against itself": {
			numerator: forecast, denominator: forecast, wantOK: true,
			want: MAERatio{Ratio: 1, N: 6, Batches: 3, Interval: Interval{Low: 1, High: 1, Defined: true}},
		},
		"one batch: ratio without interval": {
			numerator: oneBatchForecast, denominator: oneBatch, wantOK: true,
			want: MAERatio{Ratio: 5.0 / 3, N: 6, Batches: 1},
		},
		// The NaN at index 3 drops the pair from both predictors:
		// forecast |e| 2, 4, 0, 2, 1 = 9, baseline 1, 0, 2, 3, 0 = 6.
		"NaN pair dropped from both": {
			numerator: forecast, denominator: withNaN, wantOK: true,
			want: MAERatio{Ratio: 1.5, N: 5, Dropped: 1, Batches: 3,
				Interval: ratioIntervalByFormula(1.5, []float64{6, 0, 3}, []float64{1, 2, 3})},
		},
		"denominator MAE zero":     {numerator: forecast, denominator: exact},
		"numerator MAE zero":       {numerator: exact, denominator: forecast, wantOK: true, want: MAERatio{N: 6, Batches: 3, Interval: Interval{Defined: true}}},
		"lengths differ":           {numerator: forecast, denominator: baseline[:5]},
		"batch labels differ":      {numerator: forecast, denominator: otherBatch},
		"actual waits differ":      {numerator: forecast, denominator: otherActual},
		"empty":                    {numerator: nil, denominator: []Sample{}},
		"every pair dropped":       {numerator: withNaN[3:4], denominator: forecast[3:4]},
		"denominator below 1 ns":   {numerator: []Sample{{Predicted: 1}}, denominator: []Sample{{Predicted: 1e-10}}},
		"denominator exactly 1 ns": {numerator: []Sample{{Predicted: 1e-9}}, denominator: []Sample{{Predicted: 1e-9}}, wantOK: true, want: MAERatio{Ratio: 1, N: 1, Batches: 1}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, ok := CompareMAE(tc.numerator, tc.denominator)
			if ok != tc.wantOK {
				t.Errorf("CompareMAE ok = %v, want %v", ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, got, approx); diff != "" {
				t.Errorf("CompareMAE (-want +got):\n%s", diff)
			}
		})
	}
}

// ratioIntervalByFormula spells out the interval formula (three batches) for a case whose
// numbers are not worth doing by hand.
func ratioIntervalByFormula(r float64, num, den []float64) Interval {
	b := float64(len(num))
	var denMean, squares float64
	for _, d := range den {
		denMean += d / b
	}
	for i := range num {
		squares += math.Pow((num[i]-r*den[i])/denMean, 2)
	}
	half := t975df2 * math.Sqrt(squares/(b*(b-1)))
	return Interval{Low: max(r-half, 0), High: r + half, Defined: true}
}
