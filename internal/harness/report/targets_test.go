package report

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"sigs.k8s.io/kueue/pkg/scheduler/waittime/estimator"
)

// scoredAt is a scored workload of queue at level that waited actual
// seconds from its first estimate, when the forecast said forecast and the
// EMA ema (negative: no answer).
func scoredAt(level float64, queue, class string, actual, forecast, ema float64) ScoredSample {
	secs := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	return ScoredSample{Level: level, Queue: queue, PriorityClass: class, Score: estimator.Score{
		Actual:   secs(actual),
		Forecast: estimator.Prediction{Wait: secs(forecast), OK: forecast >= 0},
		EMA:      estimator.Prediction{Wait: secs(ema), OK: ema >= 0},
	}}
}

func TestLongWaitRowsCountOnlyOverloadLevelsAndWaitsOfTwoMeanServices(t *testing.T) {
	queues := reportedQueues{1.1: {"a": {meanService: 2}, "b": {meanService: 4}, "c": {target: 1.1}}, 0.9: {"a": {meanService: 2}}}
	type row struct {
		Level         float64
		Scored, Long  int
		Forecast, EMA *float64
	}
	cases := map[string]struct {
		levels map[float64][]ScoredSample
		want   []row
	}{
		"a level below 1.1 has no row": {
			levels: map[float64][]ScoredSample{0.9: {scoredAt(0.9, "a", "", 10, 10, 10)}},
		},
		"each queue's own 2 E[S]; a queue without a mean service is left out": {
			levels: map[float64][]ScoredSample{1.1: {
				scoredAt(1.1, "a", "", 4, 5, 2),   // a: 2 E[S] = 4, counted: 0.25 and 0.5
				scoredAt(1.1, "a", "", 3.9, 0, 0), // below a's 4
				scoredAt(1.1, "b", "", 7, 0, 0),   // below b's 8
				scoredAt(1.1, "b", "", 10, 5, -1), // b, counted: 0.5; no EMA
				scoredAt(1.1, "c", "", 100, 0, 0), // no mean service
			}},
			want: []row{{Level: 1.1, Scored: 4, Long: 2, Forecast: ptr(0.375), EMA: ptr(0.5)}},
		},
		"no long wait: a row with no errors": {
			levels: map[float64][]ScoredSample{1.1: {scoredAt(1.1, "a", "", 1, 1, 1)}},
			want:   []row{{Level: 1.1, Scored: 1}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []row
			for _, r := range longWaitRows("s", tc.levels, queues) {
				got = append(got, row{Level: r.level, Scored: r.scored, Long: r.long,
					Forecast: r.relative[estimator.PredictorForecast], EMA: r.relative[estimator.PredictorEMA]})
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("rows (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestPriorityBiasRowsNeedTwoClassesAndFiftyScores(t *testing.T) {
	repeat := func(n int, s ScoredSample) []ScoredSample {
		out := make([]ScoredSample, n)
		for i := range out {
			out[i] = s
			out[i].Batch = i % 5
		}
		return out
	}
	type row struct {
		Class           string
		N               int
		Bias, Remaining float64
	}
	cases := map[string]struct {
		samples []ScoredSample
		want    []row
	}{
		"one class: no rows": {
			samples: repeat(60, scoredAt(0.8, "q", "low", 2, 3, 0)),
		},
		"two classes, one with fewer than 50": {
			samples: append(repeat(60, scoredAt(0.8, "q", "low", 2, 2.5, 0)), repeat(49, scoredAt(0.8, "q", "high", 1, 1, 0))...),
			want:    []row{{Class: "low", N: 60, Bias: 0.5, Remaining: 2}},
		},
		"both classes; workloads without a forecast are left out": {
			samples: append(append(repeat(50, scoredAt(0.8, "q", "low", 4, 3, 0)), repeat(50, scoredAt(0.8, "q", "high", 1, 1.5, 0))...),
				repeat(10, scoredAt(0.8, "q", "high", 1, -1, 0))...),
			want: []row{{Class: "high", N: 50, Bias: 0.5, Remaining: 1}, {Class: "low", N: 50, Bias: -1, Remaining: 4}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []row
			for _, r := range priorityBiasRows("s", samplesByLevel(tc.samples)) {
				got = append(got, row{Class: r.class, N: r.summary.N, Bias: r.summary.Bias, Remaining: r.summary.MeanActual})
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("rows (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestReportQueuesReadMeanServiceAndTarget(t *testing.T) {
	dir := t.TempDir()
	report := `{"levels": [{"targetUtilization": 1.2, "queues": [
		{"name": "a", "targetUtilization": 1.2, "predictors": {"forecast": {"relativeFloorSeconds": 0.75}}},
		{"name": "b", "targetUtilization": 0.05, "predictors": {"ema": {"relativeFloorSeconds": 1}}}]}]}`
	if err := os.WriteFile(filepath.Join(dir, "s.json"), []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := reportQueues(dir, "s")
	if err != nil {
		t.Fatal(err)
	}
	want := reportedQueues{1.2: {"a": {meanService: 1.5, target: 1.2}, "b": {target: 0.05}}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(queueFacts{})); diff != "" {
		t.Errorf("ClusterQueues (-want,+got):\n%s", diff)
	}
	if _, err := reportQueues(dir, "missing"); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a missing report: err %v, want one naming it", err)
	}
}

func TestRatioRowsJudgeEachBusyClusterQueueAgainstItsBounds(t *testing.T) {
	// Batches of five workloads per ClusterQueue; the forecast is off by
	// forecastErr, the EMA by emaErr, the oracle (where oracleErr > 0) by
	// oracleErr, the paper formula by 10 s.
	queue := func(level float64, name string, n int, forecastErr, emaErr, oracleErr float64) []ScoredSample {
		out := make([]ScoredSample, n)
		for i := range out {
			s := scoredAt(level, name, "", 5, 5+forecastErr*float64(1+i%2), 5+emaErr*float64(1+i%2))
			s.Score.Paper = estimator.Prediction{Wait: 15 * time.Second, OK: true}
			if oracleErr > 0 {
				s.Oracle = estimator.Prediction{Wait: time.Duration((5 + oracleErr*float64(1+i%2)) * float64(time.Second)), OK: true}
			}
			s.Batch = i / 5
			out[i] = s
		}
		return out
	}
	queues := reportedQueues{0.8: {"busy": {target: 0.8}, "light": {target: 0.05}, "few": {target: 0.8}, "tie": {target: 0.9}, "floor": {target: 0.7}}}
	samples := slices.Concat(queue(0.8, "busy", 50, 1, 2, 1), queue(0.8, "light", 50, 1, 2, 0),
		queue(0.8, "few", 29, 1, 2, 0), queue(0.8, "tie", 30, 2, 2, 0), queue(0.8, "floor", 40, 1.2, 2, 1))
	type row struct {
		Queue       string
		EMA, Oracle string
	}
	var got []row
	rows := ratioRows("s", samplesByLevel(samples), queues)
	for _, r := range rows {
		ema, emaOK := r.figures.ForecastMAERatio[string(estimator.PredictorEMA)]
		oracle, oracleOK := r.figures.ForecastMAERatio[string(PredictorOracle)]
		got = append(got, row{Queue: r.queue, EMA: ratioVerdict(ema, emaOK, maxRatioEMA), Oracle: ratioVerdict(oracle, oracleOK, maxRatioOracle)})
	}
	// busy: ÷ EMA 0.5, ÷ oracle 1 (errors that do not vary by batch:
	// intervals of zero width); tie: ÷ EMA 1, no oracle; floor: ÷ EMA 0.6,
	// ÷ oracle 1.2. light's target ρ and few's 29 workloads leave them out.
	want := []row{{Queue: "busy", EMA: "met", Oracle: "met"}, {Queue: "floor", EMA: "met", Oracle: "**missed**"}, {Queue: "tie", EMA: "**missed**", Oracle: "—"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want,+got):\n%s", diff)
	}
	// Pooled over busy, floor and tie: (50·1.5 + 40·1.8 + 30·3) / (120·3).
	pooled, ok := pooledRatio(rows, estimator.PredictorEMA)
	if want := (50*1.5 + 40*1.8 + 30*3) / (120 * 3.0); !ok || pooled.N != 120 || math.Abs(pooled.Ratio-want) > 1e-9 {
		t.Errorf("pooled forecast ÷ EMA = %+v, %v; want %v on 120", pooled, ok, want)
	}
	var out strings.Builder
	writeRatios(&out, rows)
	for _, line := range []string{
		"Against the EMA (≤ 0.85): met in 2 of 3, the ratio alone in 0 more, missed in 1.",
		"Against the oracle (≤ 1.10): met in 1 of 2, the ratio alone in 0 more, missed in 1.",
		"Pooled over these ClusterQueues, forecast ÷ EMA 0.66",
	} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("the section lacks %q:\n%s", line, out.String())
		}
	}
}

func TestRatioVerdictNeedsTheIntervalBelowTheBound(t *testing.T) {
	cases := map[string]struct {
		ratio RatioResult
		ok    bool
		want  string
	}{
		"no ratio":               {want: "—"},
		"interval below":         {ratio: RatioResult{Ratio: 0.6, CI95: &[2]float64{0.5, 0.7}}, ok: true, want: "met"},
		"interval across":        {ratio: RatioResult{Ratio: 0.7, CI95: &[2]float64{0.6, 0.8}}, ok: true, want: "point only"},
		"no interval":            {ratio: RatioResult{Ratio: 0.7}, ok: true, want: "point only"},
		"above":                  {ratio: RatioResult{Ratio: 0.8, CI95: &[2]float64{0.7, 0.9}}, ok: true, want: "**missed**"},
		"interval ends at bound": {ratio: RatioResult{Ratio: 0.7, CI95: &[2]float64{0.65, 0.75}}, ok: true, want: "point only"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ratioVerdict(tc.ratio, tc.ok, 0.75); got != tc.want {
				t.Errorf("ratioVerdict = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDemandClassBiasRowsNeedTwoClassesInAClusterQueue(t *testing.T) {
	repeat := func(n int, s ScoredSample) []ScoredSample {
		out := make([]ScoredSample, n)
		for i := range out {
			out[i] = s
			out[i].Batch = i % 5
			out[i].Score.P50 = estimator.Prediction{Wait: s.Score.Forecast.Wait, OK: true}
		}
		return out
	}
	withClass := func(s ScoredSample, class string) ScoredSample { s.Class = class; return s }
	samples := append(append(append(
		repeat(60, withClass(scoredAt(0.9, "mixed", "", 4, 3, 0), "large")),
		repeat(60, withClass(scoredAt(0.9, "mixed", "", 1, 1.5, 0), "small"))...),
		repeat(60, withClass(scoredAt(0.9, "alone", "", 1, 1, 0), "batch"))...),
		repeat(60, withClass(scoredAt(0.9, "other", "", 1, 1, 0), "small"))...)
	type row struct {
		Class     string
		N         int
		Bias, P50 float64
	}
	var got []row
	for _, r := range demandClassBiasRows("s", samplesByLevel(samples)) {
		got = append(got, row{Class: r.class, N: r.summary.N, Bias: r.summary.Bias, P50: r.p50})
	}
	// "alone" and "other" hold one class each: no rows. mixed/large's
	// forecast of 3 s covers none of its 4 s waits; small's 1.5 s all.
	want := []row{{Class: "mixed/large", N: 60, Bias: -1, P50: 0}, {Class: "mixed/small", N: 60, Bias: 0.5, P50: 1}}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("rows (-want,+got):\n%s", diff)
	}
}
