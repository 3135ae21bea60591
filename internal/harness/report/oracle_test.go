package report

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"maps"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"sigs.k8s.io/kueue/pkg/scheduler/waittime/estimator"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/scenario"
)

func TestErlangMedian(t *testing.T) {
	cases := map[string]struct {
		n    int
		rate float64
		want float64
	}{
		// One stage: the exponential median ln 2 / rate.
		"one stage": {n: 1, rate: 2, want: math.Ln2 / 2},
		// Two stages at rate 1: 1 − e^{−x}(1 + x) = 1/2 at x = 1.678347.
		"two stages": {n: 2, rate: 1, want: 1.6783469900166608},
		// Scaling: the median of n stages at rate r is the rate-1 median
		// over r.
		"two stages at rate 4": {n: 2, rate: 4, want: 1.6783469900166608 / 4},
		// Three stages at rate 1: 2.674060313723561 (the Γ(3, 1) median).
		"three stages":  {n: 3, rate: 1, want: 2.674060313723561},
		"no stage":      {n: 0, rate: 1, want: 0},
		"zero rate":     {n: 3, rate: 0, want: 0},
		"infinite rate": {n: 3, rate: math.Inf(1), want: 0},
		"NaN rate":      {n: 3, rate: math.NaN(), want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := erlangMedian(tc.n, tc.rate)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(1e-8, 1e-12)); diff != "" {
				t.Errorf("erlangMedian(%d, %v) (-want +got):\n%s", tc.n, tc.rate, diff)
			}
		})
	}
}

// The median of many stages lies between the mode (n−1)/rate and the mean
// n/rate, and erlangCDF is 1/2 there, however large n·rate·x.
func TestErlangMedianLiesBetweenModeAndMeanForManyStages(t *testing.T) {
	for _, n := range []int{2, 10, 100, 1000, 5000} {
		for _, rate := range []float64{0.01, 1, 250} {
			m := erlangMedian(n, rate)
			if m < float64(n-1)/rate || m > float64(n)/rate {
				t.Errorf("erlangMedian(%d, %v) = %v, outside [%v, %v]", n, rate, m, float64(n-1)/rate, float64(n)/rate)
			}
			if cdf := erlangCDF(n, rate, m); math.Abs(cdf-0.5) > 1e-6 {
				t.Errorf("erlangCDF(%d, %v, median) = %v, want 1/2", n, rate, cdf)
			}
		}
	}
}

func TestOracleMedianWait(t *testing.T) {
	exp := oracleLaw{Mean: 2}
	cases := map[string]struct {
		law         oracleLaw
		servers     int
		runningAges []float64
		ahead       int
		want        float64
		tolerance   float64
	}{
		"an idle slot for it": {
			law: exp, servers: 4, runningAges: []float64{1, 2, 3}, ahead: 0, want: 0,
		},
		"idle slots for it and those ahead": {
			law: exp, servers: 4, runningAges: []float64{1}, ahead: 2, want: 0,
		},
		// Every slot busy, none ahead: the first of 4 completions at rate
		// 1/2 each, Exp(2): median ln 2 / 2, whatever the ages.
		"exponential, all busy, first in line": {
			law: exp, servers: 4, runningAges: []float64{0.1, 5, 9, 30}, ahead: 0, want: math.Ln2 / 2,
		},
		// Three ahead: the fourth completion, Erlang(4, 2).
		"exponential, all busy, three ahead": {
			law: exp, servers: 4, runningAges: []float64{1, 1, 1, 1}, ahead: 3, want: erlangMedian(4, 2),
		},
		// One idle slot takes the first of the two ahead; the second and
		// then this one wait for two completions: Erlang(2, 2).
		"exponential, one idle, two ahead": {
			law: exp, servers: 4, runningAges: []float64{1, 1, 1}, ahead: 2, want: erlangMedian(2, 2),
		},
		// Deterministic 10 s: two slots that ran 3 and 6 s free at 4 and 7;
		// the one ahead takes the first (free again at 14), so this one
		// starts at 7, exactly.
		"deterministic": {
			law: oracleLaw{Mean: 10, Deterministic: true}, servers: 2, runningAges: []float64{3, 6}, ahead: 1, want: 4 + 3,
		},
		// A workload past its fixed time frees its slot now.
		"deterministic, overdue": {
			law: oracleLaw{Mean: 10, Deterministic: true}, servers: 1, runningAges: []float64{12}, ahead: 0, want: 0,
		},
		// A cap far beyond what matters leaves the exponential's median
		// (simulated: within the 4,001-draw noise).
		"exponential capped far out": {
			law: oracleLaw{Mean: 2, Cap: 1000}, servers: 4, runningAges: []float64{1, 1, 1, 1}, ahead: 3, want: erlangMedian(4, 2), tolerance: 0.05,
		},
		// One slot whose workload ran 5.5 s of a 6 s cap: it frees within
		// 0.5 s, so the median is below the uncapped ln 2 · 2.
		"exponential, capped, near the cap": {
			law: oracleLaw{Mean: 2, Cap: 6}, servers: 1, runningAges: []float64{5.5}, ahead: 0,
			// P(W ≤ x) = 1 − e^{−x/2} for x < 0.5, and 1 at 0.5: the median
			// is 2 ln 2 > 0.5, so it is 0.5.
			want: 0.5, tolerance: 1e-12,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			got := oracleMedianWait(tc.law, tc.servers, tc.runningAges, tc.ahead, r)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(tc.tolerance, 1e-9)); diff != "" {
				t.Errorf("oracleMedianWait (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOracleLawOf(t *testing.T) {
	cases := map[string]struct {
		class  scenario.ClassSpec
		want   oracleLaw
		wantOK bool
	}{
		"exponential by default": {
			class: scenario.ClassSpec{MeanService: scenario.Duration{Duration: 2 * time.Second}}, want: oracleLaw{Mean: 2}, wantOK: true,
		},
		"truncated exponential": {
			class:  scenario.ClassSpec{MeanService: scenario.Duration{Duration: 2 * time.Second}, Service: scenario.ServiceSpec{Distribution: "exponential", TruncateAt: 3}},
			want:   oracleLaw{Mean: 2, Cap: 6},
			wantOK: true,
		},
		"deterministic": {
			class:  scenario.ClassSpec{MeanService: scenario.Duration{Duration: time.Second}, Service: scenario.ServiceSpec{Distribution: "deterministic"}},
			want:   oracleLaw{Mean: 1, Deterministic: true},
			wantOK: true,
		},
		"lognormal has no exact residual": {
			class: scenario.ClassSpec{MeanService: scenario.Duration{Duration: time.Second}, Service: scenario.ServiceSpec{Distribution: "lognormal", CV: 2}},
		},
		"erlang has no exact residual": {
			class: scenario.ClassSpec{MeanService: scenario.Duration{Duration: time.Second}, Service: scenario.ServiceSpec{Distribution: "erlang", Shape: 2}},
		},
		"zero mean": {class: scenario.ClassSpec{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := oracleLawOf(tc.class)
			if ok != tc.wantOK {
				t.Fatalf("oracleLawOf ok = %v, want %v", ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("oracleLawOf (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOracleEligible(t *testing.T) {
	class := scenario.ClassSpec{Name: "a", Share: 1, MeanService: scenario.Duration{Duration: time.Second}}
	cases := map[string]struct {
		queue   scenario.QueueSpec
		servers int
		want    bool
	}{
		"one class, no cohort": {queue: scenario.QueueSpec{Classes: []scenario.ClassSpec{class}}, servers: 4, want: true},
		"in a cohort":          {queue: scenario.QueueSpec{Cohort: "pool", Classes: []scenario.ClassSpec{class}}, servers: 4},
		"two classes":          {queue: scenario.QueueSpec{Classes: []scenario.ClassSpec{class, class}}, servers: 4},
		"no slot":              {queue: scenario.QueueSpec{Classes: []scenario.ClassSpec{class}}, servers: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, got := oracleEligible(tc.queue, tc.servers); got != tc.want {
				t.Errorf("oracleEligible = %v, want %v", got, tc.want)
			}
		})
	}
}

// The state at t: who runs (with their ages) and who is ahead (pending at
// t, present, admitted before the scored workload).
func TestOracleQueueState(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	q := &oracleQueue{workloads: []oracleWorkload{
		{key: "done", created: at(0), admitted: at(0), finished: at(5)},
		{key: "running", created: at(1), admitted: at(6)},
		{key: "running-finishes-later", created: at(2), admitted: at(7), finished: at(20)},
		{key: "ahead", created: at(3), admitted: at(12)},
		{key: "scored", created: at(4), admitted: at(14)},
		// Created before t in the same second, admitted before the scored
		// one: the scheduler ordered it ahead.
		{key: "tie-ahead", created: at(9), admitted: at(13)},
		{key: "behind", created: at(5), admitted: at(15)},
		{key: "later-arrival", created: at(11), admitted: at(12.5)},
	}}
	ages, ahead := q.state("scored", at(10), at(14))
	if diff := cmp.Diff([]float64{4, 3}, ages, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("running ages (-want +got):\n%s", diff)
	}
	if ahead != 2 {
		t.Errorf("ahead = %d, want 2 (ahead and tie-ahead)", ahead)
	}
}

func TestAdmissionAfter(t *testing.T) {
	t0 := time.Unix(1000, 0)
	admissions := []time.Time{t0, t0.Add(time.Minute)}
	if got, ok := admissionAfter(admissions, t0.Add(time.Second)); !ok || !got.Equal(t0.Add(time.Minute)) {
		t.Errorf("admissionAfter = %v, %v; want the second admission", got, ok)
	}
	if got, ok := admissionAfter(admissions, t0); !ok || !got.Equal(t0) {
		t.Errorf("admissionAfter(at an admission) = %v, %v; want that admission", got, ok)
	}
	if _, ok := admissionAfter(admissions, t0.Add(time.Hour)); ok {
		t.Error("admissionAfter after every admission found one")
	}
}

// The oracle's points are finite and non-negative whatever the state.
func FuzzOracleMedianWait(f *testing.F) {
	f.Add(2.0, 0.0, false, 4, 3, 1.0, 2.0)
	f.Add(2.0, 6.0, false, 1, 0, 5.5, 0.0)
	f.Add(10.0, 0.0, true, 2, 5, 3.0, 12.0)
	f.Fuzz(func(t *testing.T, mean, capAt float64, deterministic bool, servers, ahead int, age1, age2 float64) {
		if !(mean > 0) || mean > 1e6 || math.IsNaN(capAt) || math.IsInf(capAt, 0) || capAt < 0 || capAt > 1e6 {
			t.Skip()
		}
		if servers < 0 || servers > 64 || ahead < 0 || ahead > 200 || math.IsNaN(age1) || math.IsNaN(age2) || math.Abs(age1) > 1e6 || math.Abs(age2) > 1e6 {
			t.Skip()
		}
		law := oracleLaw{Mean: mean, Cap: capAt, Deterministic: deterministic}
		got := oracleMedianWait(law, servers, []float64{age1, age2}, ahead, rand.New(rand.NewPCG(3, 4)))
		if math.IsNaN(got) || math.IsInf(got, 0) || got < 0 {
			t.Fatalf("oracleMedianWait(%+v, %d, [%v %v], %d) = %v", law, servers, age1, age2, ahead, got)
		}
	})
}

// The oracle's point goes to the CSV and back; a CSV written before the
// oracle's column reads back with no oracle and its replay columns.
func TestScoredCSVKeepsTheOracle(t *testing.T) {
	samples := stepSamples(20)
	for i := range samples {
		if i%2 == 0 {
			samples[i].Oracle = estimator.Prediction{Wait: time.Duration(i) * 250 * time.Millisecond, OK: true}
		}
	}
	dir := t.TempDir()
	writeRun(t, dir, &Report{Spec: &scenario.Spec{Name: "step"}, Samples: samples})
	back, err := readScoredCSV(filepath.Join(dir, "step"+csvSuffix))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(samples, back, cmp.Comparer(func(a, b time.Duration) bool { return (a - b).Abs() <= time.Millisecond })); diff != "" {
		t.Errorf("read back (-written,+read):\n%s", diff)
	}

	old := filepath.Join(t.TempDir(), "old"+csvSuffix)
	row := "1.00,0,cq,c,,ns/w,0,Forecast,0,1,1,1,2,,,,1,2,0.5,1000.000"
	if err := os.WriteFile(old, []byte(strings.Join(csvHeaderWithoutOracle, ",")+"\n"+row+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readScoredCSV(old)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Oracle.OK || !got[0].Replayable {
		t.Errorf("a CSV without the oracle's column read back as %+v, want one replayable sample without an oracle", got)
	}
}

// The report scores the oracle like the other predictors, on the workloads
// it answered, and sets the forecast against it.
func TestFiguresScoreTheOracle(t *testing.T) {
	samples := stepSamples(40)
	for i := range samples {
		if i < 30 {
			samples[i].Oracle = estimator.Prediction{Wait: samples[i].Score.Actual + time.Second, OK: true}
		}
	}
	f := figures(samples, nil, 0, 0)
	got, ok := f.Predictors[string(PredictorOracle)]
	if !ok {
		t.Fatalf("no oracle among the predictors: %v", f.Predictors)
	}
	if got.N != 30 || math.Abs(got.MAE-1) > 1e-9 {
		t.Errorf("oracle scored on %d with MAE %v, want 30 and 1", got.N, got.MAE)
	}
	ratio, ok := f.ForecastMAERatio[string(PredictorOracle)]
	if !ok || ratio.N != 30 {
		t.Fatalf("forecast ÷ oracle = %+v, %v; want one on the 30 the oracle answered", ratio, ok)
	}
	if !strings.Contains(f.row(), f.maeCell(PredictorOracle)) || !strings.Contains(f.row(), f.ratioCell(PredictorOracle)) {
		t.Errorf("the row %q lacks the oracle's MAE or ratio", f.row())
	}
}

// The scenarios of test/eval whose ClusterQueues the oracle models: those
// of one class without a cohort, with Poisson arrivals.
func TestOracleCoversTheExactClusterQueuesOfTheScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "test", "eval", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, f := range files {
		s, err := scenario.LoadSpec(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.Plan(s.Levels[0], 0)
		if err != nil {
			t.Fatal(err)
		}
		if oracles := replicaOracles(s, p, nil); len(oracles) > 0 {
			got[filepath.Base(f)] = slices.Sorted(maps.Keys(oracles))
		}
	}
	single := []string{"eval"}
	want := map[string][]string{
		"mm4.yaml": single, "table2.yaml": single, "table3.yaml": single, "table4.yaml": single,
		"partition.yaml": single, "smoke.yaml": single,
		"cluster.yaml": {"main"}, "cold-start.yaml": {"main"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ClusterQueues with an oracle (-want +got):\n%s", diff)
	}
}
