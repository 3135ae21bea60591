package report

import (
	"bytes"
	"fmt"
	"io"
	"maps"
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
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/scenario"
)

var reportT0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// syntheticReport builds a report from two replicas of a one-queue spec
// whose workloads and ledger scores are made up, not run.
func syntheticReport(t *testing.T) *Report {
	t.Helper()
	spec := scenario.SpecFromScenario(&scenario.Scenario{
		Name: "synthetic", Quota: map[string]string{"cpu": "2"}, Demand: map[string]string{"cpu": "500m"},
		Levels: []float64{0.8}, JobsPerLevel: 10, MeanService: scenario.Duration{Duration: 2 * time.Second},
	})
	rec := &ScoreRecorder{}
	var replicas []*ReplicaRun
	for seed := range 2 {
		plan, err := spec.Plan(0.8, seed)
		if err != nil {
			t.Fatal(err)
		}
		rr := &ReplicaRun{Plan: plan, Replica: scenario.Replica{Prefix: "p", Namespace: "ns"}, PendingSamples: map[string][]int{}}
		for i, a := range plan.Arrivals {
			key := workload.NewReference("ns", a.Name+string(rune('a'+seed)))
			created := reportT0.Add(time.Duration(a.Offset * float64(time.Second)))
			run := &WorkloadRun{Arrival: a, Key: key, Created: created, Admissions: []time.Time{created.Add(3 * time.Second)}}
			rr.Runs = append(rr.Runs, run)
			if i%5 == 4 {
				continue // admitted before any estimate
			}
			at := created.Add(time.Second)
			rec.ReportScore(estimator.Score{
				Workload: key, ClusterQueue: "p-eval", EstimatedAt: at, Waited: time.Second, Actual: 2 * time.Second,
				Forecast: estimator.Prediction{Wait: 2500 * time.Millisecond, OK: true},
				P50:      estimator.Prediction{Wait: 2 * time.Second, OK: true},
				P90:      estimator.Prediction{Wait: time.Second, OK: true},
				EMA:      estimator.Prediction{Wait: time.Duration(i) * time.Second, OK: true},
				Whitt:    estimator.Prediction{Wait: 3 * time.Second, OK: i%2 == 0},
			})
		}
		replicas = append(replicas, rr)
	}
	return Build(spec, replicas, rec)
}

func TestBuildReportScoresEveryPredictorOnTheSameWorkloads(t *testing.T) {
	r := syntheticReport(t)
	if len(r.Levels) != 1 {
		t.Fatalf("levels: %d", len(r.Levels))
	}
	l := r.Levels[0]
	// 10 arrivals per replica, the first 2 are warm-up (20%): 8 feasible;
	// of those, the ones at index 4 and 9 were admitted unscored.
	want := struct {
		Seeds, Workloads, Warmup, Feasible, Scored, Before int
		ForecastMAE, WhittN                                float64
		P50, P90                                           float64
	}{Seeds: 2, Workloads: 20, Warmup: 4, Feasible: 16, Scored: 12, Before: 4, ForecastMAE: 0.5, WhittN: 6, P50: 1, P90: 0}
	got := want
	got.Seeds, got.Workloads, got.Warmup, got.Feasible, got.Scored, got.Before = l.Seeds, l.Workloads, l.Warmup, l.Feasible, l.Scored, l.AdmittedBeforeEstimate
	got.ForecastMAE = l.Predictors["forecast"].MAE
	got.WhittN = float64(l.Predictors["whitt"].N)
	got.P50, got.P90 = *l.P50Coverage, *l.P90Coverage
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("level (-want,+got):\n%s", diff)
	}
	if l.Forecasted != l.Scored || l.MAEForecast == nil || *l.MAEForecast != l.Predictors["forecast"].MAE || l.MAEPaper != nil {
		t.Errorf("the earlier keys: forecasted %d, maeForecast %v, maePaper %v", l.Forecasted, l.MAEForecast, l.MAEPaper)
	}
	if _, ok := l.Predictors["paper"]; ok {
		t.Errorf("the paper never answered but has figures: %+v", l.Predictors["paper"])
	}
	if l.Predictors["forecast"].MAECI95 == nil || l.ForecastMAERatio["whitt"].N != 6 {
		t.Errorf("no interval over 10 batches, or the Whitt ratio not on the pairs both answered: %+v", l.ForecastMAERatio)
	}
	if len(r.Samples) != 12 || len(l.Queues) != 1 || l.Queues[0].Scored != 12 {
		t.Errorf("samples %d, queues %+v", len(r.Samples), l.Queues)
	}

	var md, csv bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil || !strings.Contains(md.String(), "| 0.80 |") || !strings.Contains(md.String(), "12 / 16") {
		t.Errorf("markdown (err %v):\n%s", err, md.String())
	}
	if err := r.WriteCSV(&csv); err != nil || strings.Count(csv.String(), "\n") != 13 {
		t.Errorf("CSV has %d lines (err %v), want 13", strings.Count(csv.String(), "\n"), err)
	}
}

// The summary read back from the CSV agrees with the report it was
// written from.
func TestWriteDirSummaryReadsBackTheCSV(t *testing.T) {
	r := syntheticReport(t)
	dir := t.TempDir()
	writeRun(t, dir, r)
	if err := WriteDirSummary(dir); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	l := r.Levels[0]
	for _, want := range []string{
		"| synthetic | 0.80 | 12 | " + l.maeCell(estimator.PredictorForecast) + " | " + l.ratioCell(estimator.PredictorEMA),
		"| **all** | | 12 |",
		coverageCell(l.P90Coverage, l.P90CoverageCI95),
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("summary lacks %q:\n%s", want, data)
		}
	}
	if err := WriteDirSummary(t.TempDir()); err == nil {
		t.Error("an empty directory was summarized")
	}
	if err := os.Remove(filepath.Join(dir, r.Spec.Name+".json")); err != nil {
		t.Fatal(err)
	}
	if err := WriteDirSummary(dir); err == nil || !strings.Contains(err.Error(), "synthetic.json") {
		t.Errorf("a CSV without its report: err %v, want one naming the report", err)
	}
}

// writeRun writes the per-workload CSV and the JSON report of r into dir,
// as eval --out does (without the plots).
func writeRun(t *testing.T, dir string, r *Report) {
	t.Helper()
	if err := WriteFiles(dir, map[string]func(io.Writer) error{
		r.Spec.Name + ".json":   r.WriteJSON,
		r.Spec.Name + csvSuffix: r.WriteCSV,
	}); err != nil {
		t.Fatal(err)
	}
}

func TestReplicaAgreement(t *testing.T) {
	cases := map[string]struct {
		diffs []float64
		want  *ReplicaAgreement
	}{
		"none":          {want: nil},
		"odd count":     {diffs: []float64{0.3, 0.05, 0.1}, want: &ReplicaAgreement{Samples: 3, MedianRelativeDifference: 0.1, Within10Percent: 2.0 / 3}},
		"even count":    {diffs: []float64{0.2, 0.0, 0.5, 0.04}, want: &ReplicaAgreement{Samples: 4, MedianRelativeDifference: 0.12, Within10Percent: 0.5}},
		"all identical": {diffs: []float64{0, 0}, want: &ReplicaAgreement{Samples: 2, Within10Percent: 1}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, replicaAgreement(tc.diffs), cmpopts.EquateApprox(1e-12, 0)); diff != "" {
				t.Errorf("agreement (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestSummarizeRefreshes(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	cases := map[string]struct {
		durations []time.Duration
		budget    time.Duration
		want      *RefreshSummary
		sentence  string
	}{
		"no refresh": {},
		"ten refreshes, two over a 10 ms budget": {
			durations: ms(3, 1, 12, 2, 5, 4, 9, 30, 6, 10),
			budget:    10 * time.Millisecond,
			want: &RefreshSummary{Count: 10, MedianMilliseconds: 6, P90Milliseconds: 12, MaxMilliseconds: 30,
				BudgetMilliseconds: 10, OverBudget: new(2)},
			sentence: " The estimator refreshed 10 times, median 6.0 ms, P90 12.0 ms, longest 30.0 ms; 2 took longer than the 10 ms its CPU budget allows a refresh period and stretched it.",
		},
		"unknown budget": {
			durations: ms(7),
			want:      &RefreshSummary{Count: 1, MedianMilliseconds: 7, P90Milliseconds: 7, MaxMilliseconds: 7},
			sentence:  " The estimator refreshed 1 times, median 7.0 ms, P90 7.0 ms, longest 7.0 ms.",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := SummarizeRefreshes(tc.durations, tc.budget)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("summary (-want,+got):\n%s", diff)
			}
			if s := got.sentence(); s != tc.sentence {
				t.Errorf("sentence = %q, want %q", s, tc.sentence)
			}
		})
	}
}

// coverageSamples makes n scored samples of one ClusterQueue whose first
// hits50 remaining waits lie within the P50 and first hits90 within the
// P90, spread over five batches.
func coverageSamples(queue, priority string, n, hits50, hits90 int) []ScoredSample {
	var out []ScoredSample
	for i := range n {
		actual := 10 * time.Second
		p50, p90 := 5*time.Second, 5*time.Second
		if i < hits50 {
			p50 = 20 * time.Second
		}
		if i < hits90 {
			p90 = 20 * time.Second
		}
		out = append(out, ScoredSample{Level: 0.9, Queue: queue, PriorityClass: priority, Batch: i % 5,
			Workload: fmt.Sprintf("%s-%d", queue, i),
			Score: estimator.Score{Method: estimator.MethodForecast, Actual: actual,
				Forecast: estimator.Prediction{Wait: p50, OK: true},
				P50:      estimator.Prediction{Wait: p50, OK: true}, P90: estimator.Prediction{Wait: p90, OK: true}}})
	}
	return out
}

func TestCoverageSlicesJudgeEveryLevelQueueAndPriorityWithEnoughScores(t *testing.T) {
	type slice struct {
		Of       string
		Scored   int
		P50, P90 float64
	}
	cases := map[string]struct {
		samples []ScoredSample
		want    []slice
	}{
		"a ClusterQueue with too few scores is judged only within its level": {
			samples: slices.Concat(
				coverageSamples("a", "", 60, 30, 54),
				coverageSamples("b", "", 50, 40, 50),
				coverageSamples("c", "", 10, 0, 0)),
			want: []slice{
				{Of: "all", Scored: 120, P50: 70.0 / 120, P90: 104.0 / 120},
				{Of: "ClusterQueue a", Scored: 60, P50: 0.5, P90: 0.9},
				{Of: "ClusterQueue b", Scored: 50, P50: 0.8, P90: 1},
			},
		},
		"one ClusterQueue with two priorities gives the level and each priority": {
			samples: slices.Concat(
				coverageSamples("a", "high", 50, 25, 45),
				coverageSamples("a", "low", 50, 10, 40)),
			want: []slice{
				{Of: "all", Scored: 100, P50: 0.35, P90: 0.85},
				{Of: "priority high", Scored: 50, P50: 0.5, P90: 0.9},
				{Of: "priority low", Scored: 50, P50: 0.2, P90: 0.8},
			},
		},
		"a level with too few scores gives nothing": {
			samples: coverageSamples("a", "", 49, 25, 45),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []slice
			for _, s := range coverageSlices("s", 0.9, tc.samples) {
				if s.p50 == nil || s.p90 == nil {
					t.Fatalf("slice %s has no coverage", s.of)
				}
				got = append(got, slice{Of: s.of, Scored: s.scored, P50: *s.p50, P90: *s.p90})
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
				t.Errorf("slices (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInTargetChanceWidensWithCorrelatedScores checks the chance that an
// exactly calibrated P50 lands within 0.45–0.55: with scores as good as
// independent it is the binomial one, 2Φ(0.05/√(0.25/n)) − 1; when whole
// batches hit or miss together it shrinks by the design effect the batch
// means show; without a published quantile it is 0.
func TestInTargetChanceWidensWithCorrelatedScores(t *testing.T) {
	normal := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	p50 := func(s ScoredSample) estimator.Prediction { return s.Score.P50 }
	sample := func(batch int, hit bool) ScoredSample {
		p := 5 * time.Second
		if hit {
			p = 20 * time.Second
		}
		return ScoredSample{Batch: batch, Score: estimator.Score{Actual: 10 * time.Second, P50: estimator.Prediction{Wait: p, OK: true}}}
	}
	var independent, together []ScoredSample
	for i := range 100 {
		// Alternating hits, one batch each: the batch means vary as
		// much as single scores do.
		independent = append(independent, sample(i, i%2 == 0))
		// Four batches of 25 that hit (two) or miss (two) together.
		together = append(together, sample(i/25, i/25 < 2))
	}
	// Batch means 1, 1, 0, 0: standard error √(1/3)/2, design effect
	// (1/12) / (0.25/100) = 100/3.
	sigmaTogether := math.Sqrt(100.0 / 3 * 0.25 / 100)
	cases := map[string]struct {
		samples []ScoredSample
		want    float64
	}{
		"independent scores":              {independent, 2*normal(0.05/math.Sqrt(0.25/100)) - 1},
		"batches that hit or miss as one": {together, 2*normal(0.05/sigmaTogether) - 1},
		"no quantile published":           {[]ScoredSample{{Batch: 0}}, 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := inTargetChance(tc.samples, p50, 0.5, p50CoverageLow, p50CoverageHigh)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0.01, 1e-9)); diff != "" {
				t.Errorf("chance (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCoverageTargetsCountAndMarkTheMisses(t *testing.T) {
	targets := coverageSlices("s", 0.9, slices.Concat(
		coverageSamples("a", "", 60, 30, 54),
		coverageSamples("b", "", 50, 40, 50)))
	var b strings.Builder
	writeCoverageTargets(&b, targets)
	expectLines(t, "coverage targets", b.String(),
		"the P90 covers 0.85–0.95 of the remaining waits in 2 of 3, the P50 0.45–0.55 in 1 of 3",
		"| s | 0.90 | ClusterQueue a | 60 | 0.500 [",
		"| met | met |",
		"| s | 0.90 | ClusterQueue b | 50 | 0.800 [",
		"| **missed** | **missed** |")
}

// expectLines reports every want that out (what is named what) lacks.
func expectLines(t *testing.T, what, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, out)
		}
	}
}

func TestRunToRunSetsEachSliceBesideItsReruns(t *testing.T) {
	targets := coverageSlices("s", 0.9, slices.Concat(
		coverageSamples("a", "", 60, 30, 54),
		coverageSamples("b", "", 50, 40, 50)))
	reruns := []rerun{
		{name: "run-2", slices: map[string][]coverageSlice{"s": coverageSlices("s", 0.9, slices.Concat(
			coverageSamples("a", "", 60, 30, 45),
			coverageSamples("b", "", 50, 25, 45)))}},
		// b scored too few here to be judged.
		{name: "run-3", slices: map[string][]coverageSlice{"s": coverageSlices("s", 0.9, slices.Concat(
			coverageSamples("a", "", 60, 30, 54),
			coverageSamples("b", "", 10, 5, 9)))}},
		// Another scenario: no slice of s is set beside it.
		{name: "run-4", slices: map[string][]coverageSlice{"other": coverageSlices("other", 0.9, coverageSamples("a", "", 60, 30, 54))}},
	}
	var b strings.Builder
	writeRunToRun(&b, "Run to run", "The intro.", targets, reruns)
	expectLines(t, "run to run", b.String(),
		"### Run to run\n\nThe intro.\n",
		"Of these 3 slices the P90 met its target in every run in 0, in some runs only in 3 and in none in 0; the P50 in every run in 1, in some only in 2, in none in 0.",
		"| s | 0.90 | all | 0.636, 0.500, 0.500 | 0.945, 0.818, 0.900 | 2 of 3 | 2 of 3 |",
		"| s | 0.90 | ClusterQueue a | 0.500, 0.500, 0.500 | 0.900, 0.750, 0.900 | 3 of 3 | 2 of 3 |",
		"| s | 0.90 | ClusterQueue b | 0.800, 0.500, — | 1.000, 0.900, — | 1 of 2 | 1 of 2 |")
}

func TestReadRerunsNeedsCSVsInEveryRerun(t *testing.T) {
	dir := t.TempDir()
	if got, err := readReruns(filepath.Join(dir, rerunsDir)); err != nil || got != nil {
		t.Errorf("no reruns directory: got %v, %v; want none and no error", got, err)
	}
	r := syntheticReport(t)
	wantSeeds := map[string]uint64{"run-2": 50, "run-3": 7}
	for _, run := range []string{"run-3", "run-2"} {
		r.Spec.Seed = wantSeeds[run]
		writeRun(t, filepath.Join(dir, rerunsDir, run), r)
	}
	got, err := readReruns(filepath.Join(dir, rerunsDir))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	seeds := map[string]uint64{}
	for _, g := range got {
		names = append(names, g.name)
		if _, ok := g.slices["synthetic"]; !ok {
			t.Errorf("rerun %s lacks the scenario synthetic", g.name)
		}
		seeds[g.name] = g.seeds["synthetic"]
	}
	if diff := cmp.Diff([]string{"run-2", "run-3"}, names); diff != "" {
		t.Errorf("reruns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantSeeds, seeds); diff != "" {
		t.Errorf("seeds read from the reports (-want +got):\n%s", diff)
	}
	if err := os.MkdirAll(filepath.Join(dir, rerunsDir, "run-4"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := readReruns(filepath.Join(dir, rerunsDir)); err == nil || !strings.Contains(err.Error(), "run-4 holds no") {
		t.Errorf("a rerun without CSVs: err %v, want one naming it", err)
	}
}

// A rerun with the scenario's own seed repeats its arrivals and goes under
// "Run to run"; one with another seed draws other arrivals and goes under
// "Other arrival sequences", named with its seed.
func TestRerunsWithAnotherSeedAreSetApart(t *testing.T) {
	dir := t.TempDir()
	r := syntheticReport(t)
	r.Spec.Seed = 11
	writeRun(t, dir, r)
	writeRun(t, filepath.Join(dir, rerunsDir, "run-2"), r)
	r.Spec.Seed = 12
	writeRun(t, filepath.Join(dir, rerunsDir, "run-3"), r)
	writeRun(t, filepath.Join(dir, rerunsDir, "run-4"), r)
	if err := WriteDirSummary(dir); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	same, other, ok := strings.Cut(string(data), "### Other arrival sequences")
	if !ok || !strings.Contains(same, "### Run to run") {
		t.Fatalf("summary lacks one of the two sections:\n%s", data)
	}
	expectLines(t, "run to run", same, "(reruns/: run-2; `make eval-rerun`)")
	expectLines(t, "other arrival sequences", other, "(reruns/: run-3 (seed 12), run-4 (seed 12); `make eval-rerun SEED=N`)")
	if strings.Contains(same, "run-3") {
		t.Errorf("a rerun with another seed is set under run to run:\n%s", same)
	}
}

// splitBySeed puts each scenario of a rerun on the side of its seed: a
// rerun of two scenarios, one with its own seed and one with another, is on
// both sides with one scenario each.
func TestSplitBySeedPutsEachScenarioOnTheSideOfItsSeed(t *testing.T) {
	s := coverageSlices("s", 0.9, coverageSamples("a", "", 60, 30, 54))
	u := coverageSlices("u", 0.9, coverageSamples("a", "", 60, 30, 54))
	reruns := []rerun{
		{name: "run-2", slices: map[string][]coverageSlice{"s": s, "u": u}, seeds: map[string]uint64{"s": 1, "u": 5}},
		{name: "run-3", slices: map[string][]coverageSlice{"s": s}, seeds: map[string]uint64{"s": 3}},
		// A scenario the first run does not hold goes with its own seed.
		{name: "run-4", slices: map[string][]coverageSlice{"v": u}, seeds: map[string]uint64{"v": 9}},
	}
	same, other := splitBySeed(reruns, map[string]uint64{"s": 1, "u": 2})
	scenarios := func(rs []rerun) map[string][]string {
		out := map[string][]string{}
		for _, r := range rs {
			out[r.name] = slices.Sorted(maps.Keys(r.slices))
		}
		return out
	}
	if diff := cmp.Diff(map[string][]string{"run-2": {"s"}, "run-4": {"v"}}, scenarios(same)); diff != "" {
		t.Errorf("same seed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string][]string{"run-2": {"u"}, "run-3": {"s"}}, scenarios(other)); diff != "" {
		t.Errorf("other seeds (-want +got):\n%s", diff)
	}
	if got, want := rerunNames(other), "run-2 (seed 5), run-3 (seed 3)"; got != want {
		t.Errorf("names of the other seeds' reruns: %q, want %q", got, want)
	}
	if got, want := rerunNames(same), "run-2, run-4"; got != want {
		t.Errorf("names of the same seed's reruns: %q, want %q", got, want)
	}
}
