package dispatcheval

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestQuantile(t *testing.T) {
	cases := map[string]struct {
		sorted []float64
		q      float64
		want   float64
	}{
		"one value":                     {sorted: []float64{3}, q: 0.9, want: 3},
		"P90 of ten interpolates 9..10": {sorted: []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, q: 0.9, want: 9.1},
		"median of four":                {sorted: []float64{1, 2, 4, 8}, q: 0.5, want: 3},
		"max":                           {sorted: []float64{1, 5}, q: 1, want: 5},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, quantile(tc.sorted, tc.q), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("quantile (-want +got):\n%s", diff)
			}
		})
	}
	if !math.IsNaN(quantile(nil, 0.5)) {
		t.Error("the quantile of no values is not NaN")
	}
}

func TestMeanInterval(t *testing.T) {
	// 1, 2, 3: mean 2, s = 1, t₀.₉₇₅,₂ = 4.302652730.
	half := 4.302652730 / math.Sqrt(3)
	cases := map[string]struct {
		values []float64
		want   Interval
	}{
		"three values":              {values: []float64{1, 2, 3}, want: Interval{Estimate: 2, CI95: &[2]float64{2 - half, 2 + half}, N: 3}},
		"one value has no interval": {values: []float64{5}, want: Interval{Estimate: 5, N: 1}},
		"no values":                 {want: Interval{}},
		"equal values, zero width":  {values: []float64{4, 4}, want: Interval{Estimate: 4, CI95: &[2]float64{4, 4}, N: 2}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, meanInterval(tc.values), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("meanInterval (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSummarizeComparesWithTheBestBuiltInPerStatistic(t *testing.T) {
	run := func(d string, seed uint64, mean, p90 float64, onTwo int) RunResult {
		return RunResult{Dispatcher: d, Seed: seed, Stats: WaitStats{N: 10, Mean: mean, P90: p90, Max: p90 + 1}, AdmittedOnTwo: onTwo}
	}
	runs := []RunResult{
		// a has the lower mean, b the lower P90.
		run("a", 1, 10, 30, 0), run("a", 2, 12, 34, 0),
		run("b", 1, 11, 20, 1), run("b", 2, 13, 22, 0),
		run("c", 1, 5, 30, 0), run("c", 2, 9, 11, 0),
	}
	sums, comps := summarize(runs, []string{"a", "b", "c"}, "c", 0.8, 0.85)
	wantComps := []Comparison{
		// Ratios 5/10 and 9/12.
		{Statistic: "mean", Against: "a", Ratio: meanInterval([]float64{0.5, 0.75}), Goal: 0.8, Met: true},
		// Ratios 30/20 and 11/22.
		{Statistic: "p90", Against: "b", Ratio: meanInterval([]float64{1.5, 0.5}), Goal: 0.85, Met: false},
	}
	if diff := cmp.Diff(wantComps, comps, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("comparisons (-want +got):\n%s", diff)
	}
	if _, comps := summarize(runs[:2], []string{"a", "b", "c"}, "c", 0.8, 0.85); len(comps) != 2 || comps[0].Ratio.N != 0 || comps[0].Met {
		t.Errorf("with no candidate runs: %+v, want two comparisons with no ratio, not met", comps)
	}
	if got := sums[1].AdmittedOnTwo; got != 1 {
		t.Errorf("b admitted on two: %d, want 1", got)
	}
	if diff := cmp.Diff(Interval{Estimate: 12, CI95: sums[1].Mean.CI95, N: 2}, sums[1].Mean); diff != "" {
		t.Errorf("b's mean (-want +got):\n%s", diff)
	}
}

func TestDrawIsDeterministicPerSeed(t *testing.T) {
	s := Scenario{
		Workers:     []Worker{{Name: "w", CPUMilli: 4000, BackgroundRate: 1, BackgroundCPUMilli: 1000, BackgroundMeanService: time.Second}},
		Jobs:        20,
		JobRate:     1,
		Warmup:      5 * time.Second,
		JobCPUMilli: []int64{1000, 2000},
		MeanService: 3 * time.Second,
		MinService:  time.Second,
		MaxService:  10 * time.Second,
	}
	a, err := s.Draw(1)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := s.Draw(1)
	if diff := cmp.Diff(a, again); diff != "" {
		t.Errorf("the same seed drew another plan (-first +second):\n%s", diff)
	}
	other, _ := s.Draw(2)
	if cmp.Equal(a.Jobs, other.Jobs) {
		t.Error("seeds 1 and 2 drew the same Jobs")
	}
	for _, j := range a.Jobs {
		if j.Offset < s.Warmup || j.Offset > a.End || j.Service < s.MinService || j.Service > s.MaxService {
			t.Errorf("Job %+v outside the warm-up..end %v or the service bounds", j, a.End)
		}
	}
	for _, bg := range a.Background["w"] {
		if bg.Offset > a.End {
			t.Errorf("background %+v after the last Job at %v", bg, a.End)
		}
	}
	if len(a.Background["w"]) == 0 {
		t.Error("no background drawn")
	}
}

func TestDrawRejectsAnInvalidScenario(t *testing.T) {
	cases := map[string]Scenario{
		"no workers": {Jobs: 1, JobRate: 1, JobCPUMilli: []int64{1}, MeanService: time.Second, MinService: time.Second, MaxService: time.Second},
		"no jobs":    {Workers: []Worker{{Name: "w", CPUMilli: 1}}, JobRate: 1, JobCPUMilli: []int64{1}, MeanService: time.Second, MinService: time.Second, MaxService: time.Second},
		"max below min service": {Workers: []Worker{{Name: "w", CPUMilli: 1}}, Jobs: 1, JobRate: 1, JobCPUMilli: []int64{1},
			MeanService: time.Second, MinService: 2 * time.Second, MaxService: time.Second},
		"background without size": {Workers: []Worker{{Name: "w", CPUMilli: 1, BackgroundRate: 1}}, Jobs: 1, JobRate: 1, JobCPUMilli: []int64{1},
			MeanService: time.Second, MinService: time.Second, MaxService: time.Second},
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := s.Draw(1); err == nil {
				t.Error("no error")
			}
		})
	}
}

func TestJobName(t *testing.T) {
	cases := map[string]string{
		"job-j003-6f1a2": "j003",
		"bg-small-003":   "",
		"job-a-b-c1234":  "",
	}
	for in, want := range cases {
		if got := jobName(in); got != want {
			t.Errorf("jobName(%q) = %q, want %q", in, got, want)
		}
	}
}
