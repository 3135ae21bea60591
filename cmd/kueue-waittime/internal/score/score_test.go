package score

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var update = flag.Bool("update", false, "rewrite the golden files of the score tests")

var (
	cqA = q{cq: "cq-a"}
	cqB = q{cq: "cq-b"}
)

// twoQueues is the hand-computed fixture. Kueue's buckets are 1, 2.5, 5,
// 10, 20, 40, …; each median below is the bucket interpolation
// lower + (upper − lower)·(rank − below)/(in bucket), rank = N/2.
//
//	cq-a  forecast 1 2 3 6    MAE 3    ≈median 2.5  (rank 2: bucket (1, 2.5], 1 below, 1 in it)
//	      ema      2 4 6 12   MAE 6    ≈median 5    (rank 2: (2.5, 5], 1 below, 1 in it)
//	      paper    3 3 (+2 unanswered)  MAE 3  ≈median 3.75 (rank 1: (2.5, 5], 0 below, 2 in it)
//	      whitt    4 unanswered
//	      P50 2/4 → 0.5 [0.1500, 0.8500]; P90 9/10 → 0.9 [0.5958, 0.9821] (Wilson)
//	cq-b  forecast 10 30 MAE 20 ≈10; ema 20 20 MAE 20 ≈15; paper 40 40 MAE 40 ≈30; whitt 5 15 MAE 10 ≈5
//	      P90 1/2 → 0.5 [0.0945, 0.9055]
//	all   forecast sum 52 / 6 = 8.667 ≈5; ema 64 / 6 = 10.667 ≈10; paper 86 / 4 = 21.5 ≈5; whitt 20 / 2 = 10 ≈5
//	      ratios 0.8125, 0.4031, 0.8667; P90 10/12 → 0.8333 [0.5520, 0.9530]
func twoQueues(t *testing.T) *manager {
	m := newManager(t, false)
	m.observe(cqA, "forecast", 1, 2, 3, 6).observe(cqA, "ema", 2, 4, 6, 12).observe(cqA, "paper", 3, 3).
		noAnswer(cqA, "paper", 2).noAnswer(cqA, "whitt", 4).
		outcome(cqA, "0.5", 2, 2).outcome(cqA, "0.9", 9, 1).
		unscoredWorkloads(cqA, reasonAdmittedBeforeEstimate, 3).unscoredWorkloads(cqA, reasonDeletedBeforeAdmission, 1).
		calibration(cqA, "0.5", 0.5, 1).calibration(cqA, "0.9", 0.88, 1.25).
		model(cqA, 4, 0.72, 1)
	m.observe(cqB, "forecast", 10, 30).observe(cqB, "ema", 20, 20).observe(cqB, "paper", 40, 40).observe(cqB, "whitt", 5, 15).
		outcome(cqB, "0.9", 1, 1).
		model(cqB, 8, 0.5, 0)
	return m
}

func pred(n, unanswered int, mae, median float64) Predictor {
	return Predictor{N: n, Unanswered: unanswered, MAE: fp(mae), MedianAbsErrorApprox: fp(median)}
}

func none(unanswered int) Predictor { return Predictor{Unanswered: unanswered} }

func preds(forecast, ema, paper, whitt Predictor) map[string]Predictor {
	return map[string]Predictor{"forecast": forecast, "ema": ema, "paper": paper, "whitt": whitt}
}

func ratios(ema, paper, whitt *float64) map[string]*float64 {
	return map[string]*float64{"ema": ema, "paper": paper, "whitt": whitt}
}

func cov(predictions, hits int, lo, hi float64) Coverage {
	return Coverage{Predictions: predictions, Hits: hits, Coverage: fp(float64(hits) / float64(predictions)), CI95: &[2]float64{lo, hi}}
}

func withGauges(c Coverage, recent, factor float64) Coverage {
	c.RecentCoverage, c.CalibrationFactor = fp(recent), fp(factor)
	return c
}

func TestReport(t *testing.T) {
	cases := map[string]struct {
		// scrapes returns the expositions, the older first.
		scrapes func(t *testing.T) []string
		want    Report
	}{
		"one scrape: hand-computed MAEs, ratios, medians and Wilson intervals": {
			scrapes: func(t *testing.T) []string { return []string{twoQueues(t).text(t)} },
			want: Report{
				Window: Window{Scrapes: 1},
				ClusterQueues: []Row{
					{
						ClusterQueue: "cq-a", Scored: 4,
						Predictors:             preds(pred(4, 0, 3, 2.5), pred(4, 0, 6, 5), pred(2, 2, 3, 3.75), none(4)),
						ForecastMAERatio:       ratios(fp(0.5), fp(1), nil),
						P50:                    withGauges(cov(4, 2, 0.15004, 0.84996), 0.5, 1),
						P90:                    withGauges(cov(10, 9, 0.59585, 0.98212), 0.88, 1.25),
						AdmittedBeforeEstimate: 3, DeletedBeforeAdmission: 1,
						EffectiveServers: fp(4), UtilizationEstimate: fp(0.72), UnfeasiblePending: ip(1),
					},
					{
						ClusterQueue: "cq-b", Scored: 2,
						Predictors:       preds(pred(2, 0, 20, 10), pred(2, 0, 20, 15), pred(2, 0, 40, 30), pred(2, 0, 10, 5)),
						ForecastMAERatio: ratios(fp(1), fp(0.5), fp(2)),
						P90:              cov(2, 1, 0.09453, 0.90547),
						EffectiveServers: fp(8), UtilizationEstimate: fp(0.5), UnfeasiblePending: ip(0),
					},
				},
				Pooled: Row{
					Scored:                 6,
					Predictors:             preds(pred(6, 0, 52.0/6, 5), pred(6, 0, 64.0/6, 10), pred(4, 2, 21.5, 5), pred(2, 4, 10, 5)),
					ForecastMAERatio:       ratios(fp(0.8125), fp(52.0/6/21.5), fp(52.0/60)),
					P50:                    cov(4, 2, 0.15004, 0.84996),
					P90:                    cov(12, 10, 0.55197, 0.95303),
					AdmittedBeforeEstimate: 3, DeletedBeforeAdmission: 1,
					UnfeasiblePending: ip(1),
				},
			},
		},
		"window: the difference of two scrapes; new series count from 0, a deleted queue's are dropped": {
			scrapes: func(t *testing.T) []string {
				m := newManager(t, false)
				m.observe(cqA, "forecast", 100).observe(cqA, "ema", 100).outcome(cqA, "0.9", 0, 1).
					observe(q{cq: "cq-gone"}, "forecast", 7)
				before := m.text(t)
				// In the window: forecast 1 3 (MAE 2, ≈1), ema 2 6 (MAE 4,
				// ≈2.5), paper 4 4 (first seen now: MAE 4, ≈3.75), whitt 2
				// unanswered, P90 2/2 → 1 [0.3424, 1].
				m.observe(cqA, "forecast", 1, 3).observe(cqA, "ema", 2, 6).observe(cqA, "paper", 4, 4).
					noAnswer(cqA, "whitt", 2).outcome(cqA, "0.9", 2, 0).
					deleteQueue("cq-gone")
				return []string{before, m.text(t)}
			},
			want: Report{
				Window: Window{Scrapes: 2},
				ClusterQueues: []Row{{
					ClusterQueue: "cq-a", Scored: 2,
					Predictors:       preds(pred(2, 0, 2, 1), pred(2, 0, 4, 2.5), pred(2, 0, 4, 3.75), none(2)),
					ForecastMAERatio: ratios(fp(0.5), fp(0.5), nil),
					P90:              cov(2, 2, 0.34238, 1),
				}},
				Pooled: Row{
					Scored:           2,
					Predictors:       preds(pred(2, 0, 2, 1), pred(2, 0, 4, 2.5), pred(2, 0, 4, 3.75), none(2)),
					ForecastMAERatio: ratios(fp(0.5), fp(0.5), nil),
					P90:              cov(2, 2, 0.34238, 1),
				},
			},
		},
		"a priority label splits rows per ClusterQueue and in the pool": {
			scrapes: func(t *testing.T) []string {
				hi, lo := q{"cq-a", "high"}, q{"cq-a", "low"}
				m := newManager(t, true)
				m.observe(hi, "forecast", 2).observe(hi, "ema", 4).observe(lo, "forecast", 6).observe(lo, "ema", 6).
					noAnswer(hi, "paper", 1).noAnswer(lo, "paper", 1).noAnswer(hi, "whitt", 1).noAnswer(lo, "whitt", 1).
					outcome(hi, "0.9", 1, 0)
				return []string{m.text(t)}
			},
			want: func() Report {
				// high: forecast 2 (≈1.75: rank 0.5 in (1, 2.5]), ema 4 (≈3.75);
				// low: forecast 6, ema 6 (≈7.5); together MAE 4 and 5.
				high := Row{
					ClusterQueue: "cq-a", Priority: "high", Scored: 1,
					Predictors:       preds(pred(1, 0, 2, 1.75), pred(1, 0, 4, 3.75), none(1), none(1)),
					ForecastMAERatio: ratios(fp(0.5), nil, nil),
					P90:              cov(1, 1, 0.20655, 1),
				}
				low := Row{
					ClusterQueue: "cq-a", Priority: "low", Scored: 1,
					Predictors:       preds(pred(1, 0, 6, 7.5), pred(1, 0, 6, 7.5), none(1), none(1)),
					ForecastMAERatio: ratios(fp(1), nil, nil),
				}
				all := Row{
					Scored:           2,
					Predictors:       preds(pred(2, 0, 4, 2.5), pred(2, 0, 5, 5), none(2), none(2)),
					ForecastMAERatio: ratios(fp(0.8), nil, nil),
					P90:              cov(1, 1, 0.20655, 1),
				}
				cq := all
				cq.ClusterQueue = "cq-a"
				cq.Priorities = []Row{high, low}
				high.ClusterQueue, low.ClusterQueue = "", ""
				all.Priorities = []Row{high, low}
				return Report{Window: Window{Scrapes: 1}, ClusterQueues: []Row{cq}, Pooled: all}
			}(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			var args []string
			for i, text := range tc.scrapes(t) {
				args = append(args, "-f", writeFile(t, dir, fmt.Sprintf("scrape%d.txt", i), text))
			}
			r := run(t, "", append(args, "-o", "json")...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			var got Report
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-4),
				cmpopts.IgnoreFields(Row{}, "Verdict"), cmpopts.IgnoreFields(Window{}, "Sources")); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			if len(got.Window.Sources) != tc.want.Window.Scrapes {
				t.Errorf("window sources = %q, want %d", got.Window.Sources, tc.want.Window.Scrapes)
			}
		})
	}
}

// TestVerdictLines checks the lines an operator reads, from real
// exposition output and for the phrasings of the edge cases.
func TestVerdictLines(t *testing.T) {
	r := run(t, twoQueues(t).text(t), "-f", "-")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	want := []string{
		"cq-a: on 4 workloads the forecast's MAE is 3.00s, 0.50× the EMA's, 1.00× the paper formula's (it answered 2), Whitt's formula answered none; P90 coverage 0.90 [0.60, 0.98]",
		"cq-b: on 2 workloads the forecast's MAE is 20.00s, 1.00× the EMA's, 0.50× the paper formula's, 2.00× Whitt's; P90 coverage 0.50 [0.09, 0.91]",
		"all ClusterQueues: on 6 workloads the forecast's MAE is 8.67s, 0.81× the EMA's, 0.40× the paper formula's (it answered 4), 0.87× Whitt's (it answered 2); P90 coverage 0.83 [0.55, 0.95]",
	}
	if diff := cmp.Diff(want, lines[len(lines)-len(want):]); diff != "" {
		t.Errorf("verdict lines (-want +got):\n%s", diff)
	}

	big := Row{
		Scored:           1240,
		Predictors:       preds(pred(1200, 40, 3.1, 2), pred(1200, 40, 5, 4), pred(1000, 240, 0, 0), none(1240)),
		ForecastMAERatio: ratios(fp(0.62), nil, nil),
	}
	big.P90 = Coverage{Predictions: 1240, Hits: 1100, Coverage: fp(1100.0 / 1240), CI95: &[2]float64{0.869, 0.904}}
	tooShort := big
	tooShort.P90 = Coverage{Predictions: 100, Hits: 50, Coverage: fp(0.5), CI95: &[2]float64{0.40, 0.60}}
	tooLong := big
	tooLong.P90 = Coverage{Predictions: 1000, Hits: 990, Coverage: fp(0.99), CI95: &[2]float64{0.982, 0.995}}
	noAnswer := Row{Scored: 3, Predictors: preds(none(3), none(3), none(3), none(3))}
	cases := map[string]struct {
		label string
		row   Row
		want  string
	}{
		"forecast answered fewer, a zero baseline MAE, thousands": {
			label: "cq-big", row: big,
			want: "cq-big: on 1,240 workloads (the forecast answered 1,200) the forecast's MAE is 3.10s, 0.62× the EMA's, the paper formula's MAE is 0, Whitt's formula answered none; P90 coverage 0.89 [0.87, 0.90]",
		},
		"P90 too short": {
			label: "cq-a", row: tooShort,
			want: "cq-a: on 1,240 workloads (the forecast answered 1,200) the forecast's MAE is 3.10s, 0.62× the EMA's, the paper formula's MAE is 0, Whitt's formula answered none; P90 coverage 0.50 [0.40, 0.60], below 0.9: the P90 is too short",
		},
		"P90 too long": {
			label: "cq-a", row: tooLong,
			want: "cq-a: on 1,240 workloads (the forecast answered 1,200) the forecast's MAE is 3.10s, 0.62× the EMA's, the paper formula's MAE is 0, Whitt's formula answered none; P90 coverage 0.99 [0.98, 0.99], above 0.9: the P90 is longer than it needs to be",
		},
		"forecast without answer": {
			label: "cq-x, priority high", row: noAnswer,
			want: "cq-x, priority high: on 3 workloads the forecast had no answer; no P90 scored",
		},
		"one workload": {
			label: "cq-z", row: Row{Scored: 1, Predictors: preds(pred(1, 0, 0.25, 0.5), pred(1, 0, 1, 1), none(1), none(1)), ForecastMAERatio: ratios(fp(0.25), nil, nil)},
			want: "cq-z: on 1 workload the forecast's MAE is 250ms, 0.25× the EMA's, the paper formula answered none, Whitt's formula answered none; no P90 scored",
		},
		"a manager that records the forecast before calibration": {
			label: "cq-c", row: func() Row {
				r := Row{Scored: 1, Predictors: preds(pred(1, 0, 0.25, 0.5), pred(1, 0, 1, 1), none(1), none(1)), ForecastMAERatio: ratios(fp(0.25), nil, nil)}
				r.Predictors["forecast-uncalibrated"] = pred(1, 0, 0.5, 0.5)
				r.ForecastMAERatio["forecast-uncalibrated"] = fp(0.5)
				return r
			}(),
			want: "cq-c: on 1 workload the forecast's MAE is 250ms, 0.25× the EMA's, the paper formula answered none, Whitt's formula answered none, 0.50× the uncalibrated forecast's; no P90 scored",
		},
		"nothing scored": {
			label: "cq-y", row: Row{Predictors: preds(none(0), none(0), none(0), none(0))},
			want: "cq-y: no workload scored",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := verdict(tc.label, tc.row); got != tc.want {
				t.Errorf("verdict:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1240: "1,240", 1234567: "1,234,567", -1240: "-1,240"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestGolden pins the table and the JSON keys: a changed key breaks
// consumers. Run with -update to rewrite testdata/golden.*.
func TestGolden(t *testing.T) {
	text := twoQueues(t).text(t)
	for format, file := range map[string]string{"table": "golden.txt", "json": "golden.json"} {
		t.Run(format, func(t *testing.T) {
			r := run(t, text, "-f", "-", "-o", format)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			golden := filepath.Join("testdata", file)
			if *update {
				if err := os.WriteFile(golden, []byte(r.stdout), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if format == "table" {
				if diff := cmp.Diff(string(want), r.stdout); diff != "" {
					t.Errorf("output differs from %s (-want +got):\n%s", golden, diff)
				}
				return
			}
			// The keys exactly, the numbers to 1e-12 (the last digit of a
			// Wilson bound may differ where the compiler fuses multiply-adds).
			var wantJSON, gotJSON any
			if err := json.Unmarshal(want, &wantJSON); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(r.stdout), &gotJSON); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantJSON, gotJSON, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("JSON differs from %s (-want +got):\n%s", golden, diff)
			}
		})
	}
}

// TestBadInput checks that every invalid input exits 2 with one line on
// stderr saying why, and nothing on stdout.
func TestBadInput(t *testing.T) {
	one := func(t *testing.T) *manager { return twoQueues(t) }
	cases := map[string]struct {
		// args builds the arguments in dir.
		args  func(t *testing.T, dir string) []string
		stdin string
		// want is the message after "kueue-waittime score: ", with DIR for
		// the temporary directory.
		want string
		// wantPrefix, when set, replaces want by a prefix match (messages
		// of other libraries).
		wantPrefix string
	}{
		"not Prometheus text": {
			args: func(t *testing.T, dir string) []string {
				return []string{"-f", writeFile(t, dir, "page.html", "<html><body>Login</body></html>\n")}
			},
			wantPrefix: "DIR/page.html: not Prometheus text exposition format (text format parsing error in line 1: ",
		},
		"JSON is not Prometheus text": {
			args:       func(t *testing.T, dir string) []string { return []string{"-f", "-"} },
			stdin:      `{"kind": "Status"}`,
			wantPrefix: "standard input: not Prometheus text exposition format (",
		},
		"no estimator series: the gate is off": {
			args: func(t *testing.T, dir string) []string {
				return []string{"-f", writeFile(t, dir, "off.txt", "# TYPE kueue_admission_attempts_total counter\nkueue_admission_attempts_total{result=\"success\"} 12\n")}
			},
			want: "no wait time estimation metrics in DIR/off.txt: is the WaitTimeEstimation feature gate on?",
		},
		"an empty file": {
			args: func(t *testing.T, dir string) []string { return []string{"-f", writeFile(t, dir, "empty.txt", "")} },
			want: "no wait time estimation metrics in DIR/empty.txt: is the WaitTimeEstimation feature gate on?",
		},
		"two scrapes of different processes: a counter went down": {
			args: func(t *testing.T, dir string) []string {
				a := newManager(t, false).observe(cqA, "forecast", 1, 2, 3).noAnswer(cqA, "ema", 1).text(t)
				b := newManager(t, false).observe(cqA, "forecast", 1).noAnswer(cqA, "ema", 5).text(t)
				return []string{"-f", writeFile(t, dir, "a.txt", a), "-f", writeFile(t, dir, "b.txt", b)}
			},
			want: `the two scrapes come from different processes (counter reset on kueue_wait_time_prediction_absolute_error_seconds_count{cluster_queue="cq-a",predictor="forecast",replica_role="standalone"}): score each alone or pass scrapes of one process`,
		},
		"two scrapes of different processes: the start time changed": {
			args: func(t *testing.T, dir string) []string {
				a := newManager(t, false).startedAt(1000).observe(cqA, "forecast", 1).text(t)
				b := newManager(t, false).startedAt(2000).observe(cqA, "forecast", 1, 2).text(t)
				return []string{"-f", writeFile(t, dir, "a.txt", a), "-f", writeFile(t, dir, "b.txt", b)}
			},
			want: "the two scrapes come from different processes (process_start_time_seconds 1000, then 2000): score each alone or pass scrapes of one process",
		},
		"two scrapes in the wrong order": {
			args: func(t *testing.T, dir string) []string {
				m := newManager(t, false).observe(cqA, "forecast", 1)
				older := m.text(t)
				newer := m.observe(cqA, "forecast", 2).text(t)
				return []string{"-f", writeFile(t, dir, "newer.txt", newer), "-f", writeFile(t, dir, "older.txt", older)}
			},
			want: `DIR/older.txt is older than DIR/newer.txt (counter reset on kueue_wait_time_prediction_absolute_error_seconds_count{cluster_queue="cq-a",predictor="forecast",replica_role="standalone"}, and nothing went up): pass the older scrape first`,
		},
		"an empty window": {
			args: func(t *testing.T, dir string) []string {
				p := writeFile(t, dir, "same.txt", one(t).text(t))
				return []string{"-f", p, "-f", p}
			},
			want: "no workload was scored in the window",
		},
		"nothing scored yet": {
			args: func(t *testing.T, dir string) []string {
				return []string{"-f", writeFile(t, dir, "fresh.txt", newManager(t, false).model(cqA, 4, 0.5, 0).text(t))}
			},
			want: "no workload was scored since the manager started",
		},
		"an unreadable metrics dump": {
			args: func(t *testing.T, dir string) []string {
				return []string{"-f", writeFile(t, dir, "broken.tgz", "\x1f\x8bnot really gzip")}
			},
			wantPrefix: "DIR/broken.tgz: unreadable metrics dump (",
		},
		"a metrics dump that is gzip but not tar": {
			args: func(t *testing.T, dir string) []string {
				p := writeDump(t, dir, "ok.tgz")
				raw, _ := os.ReadFile(p)
				return []string{"-f", writeFile(t, dir, "cut.tgz", string(raw[:len(raw)/2]))}
			},
			wantPrefix: "DIR/cut.tgz: unreadable metrics dump (",
		},
		"an empty metrics dump": {
			args: func(t *testing.T, dir string) []string { return []string{"-f", writeDump(t, dir, "none.tgz")} },
			want: "DIR/none.tgz: the metrics dump holds no scrape",
		},
		"a metrics dump with something else": {
			args: func(t *testing.T, dir string) []string {
				return []string{"-f", writeFile(t, dir, "a.txt", one(t).text(t)), "-f", writeDump(t, dir, "d.tgz", tarEntry{name: "1.prometheus", content: one(t).text(t)})}
			},
			want: "--file: DIR/d.tgz is a metrics dump: score it alone (it holds its own window)",
		},
		"a metrics dump entry that is not Prometheus text": {
			args: func(t *testing.T, dir string) []string {
				return []string{"-f", writeDump(t, dir, "d.tgz", tarEntry{name: "1.prometheus", content: "oops oops\n"})}
			},
			wantPrefix: "DIR/d.tgz:1.prometheus: not Prometheus text exposition format (",
		},
		"three files": {
			args: func(t *testing.T, dir string) []string {
				p := writeFile(t, dir, "a.txt", one(t).text(t))
				return []string{"-f", p, "-f", p, "-f", p}
			},
			want: "--file: give one scrape, or two of one process (the older first) for a window; got 3 files",
		},
		"a missing file": {
			args: func(t *testing.T, dir string) []string { return []string{"-f", filepath.Join(dir, "nope.txt")} },
			want: "--file: open DIR/nope.txt: no such file or directory",
		},
		"no source": {
			args: func(t *testing.T, dir string) []string { return nil },
			want: "one of --file, --url or --service is required",
		},
		"two sources": {
			args: func(t *testing.T, dir string) []string {
				return []string{"-f", "x", "--url", "http://localhost/metrics"}
			},
			want: "--file, --url and --service exclude each other: give one source",
		},
		"interval with files": {
			args: func(t *testing.T, dir string) []string { return []string{"-f", "x", "--interval", "1m"} },
			want: "--interval needs --url or --service: give two files for a window",
		},
		"token without url": {
			args: func(t *testing.T, dir string) []string { return []string{"-f", "x", "--token-file", "t"} },
			want: "--insecure-skip-tls-verify and --token-file need --url",
		},
		"kubeconfig without service": {
			args: func(t *testing.T, dir string) []string {
				return []string{"--url", "http://x/metrics", "--kubeconfig", "k"}
			},
			want: "--kubeconfig and --path need --service",
		},
		"bad interval": {
			args: func(t *testing.T, dir string) []string {
				return []string{"--url", "http://x/metrics", "--interval", "10"}
			},
			want: `--interval: must be a Go duration such as 20s or 1m30s, got "10"`,
		},
		"bad url": {
			args: func(t *testing.T, dir string) []string { return []string{"--url", "localhost:8443/metrics"} },
			want: `--url: want an http or https URL such as https://localhost:8443/metrics, got "localhost:8443/metrics"`,
		},
		"empty token file": {
			args: func(t *testing.T, dir string) []string {
				return []string{"--url", "http://x/metrics", "--token-file", writeFile(t, dir, "token", "\n")}
			},
			want: "--token-file: DIR/token is empty",
		},
		"bad service": {
			args: func(t *testing.T, dir string) []string { return []string{"--service", "kueue-metrics:8443"} },
			want: `--service: want NAMESPACE/NAME:PORT (or NAMESPACE/http:NAME:PORT), such as kueue-system/kueue-controller-manager-metrics-service:8443, got "kueue-metrics:8443"`,
		},
		"bad path": {
			args: func(t *testing.T, dir string) []string {
				return []string{"--service", "ns/svc:8443", "--path", "metrics"}
			},
			want: `--path: must start with /, got "metrics"`,
		},
		"bad output": {
			args: func(t *testing.T, dir string) []string { return []string{"-f", "x", "-o", "yaml"} },
			want: `--output: must be table or json, got "yaml"`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			r := run(t, tc.stdin, tc.args(t, dir)...)
			got := strings.ReplaceAll(r.stderr, dir, "DIR")
			if r.code != 2 || r.stdout != "" || strings.Count(got, "\n") != 1 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2, one line on stderr", r.code, r.stdout, got)
			}
			got = strings.TrimSuffix(strings.TrimPrefix(got, "kueue-waittime score: "), "\n")
			if tc.wantPrefix != "" {
				if !strings.HasPrefix(got, tc.wantPrefix) {
					t.Errorf("stderr %q, want prefix %q", got, tc.wantPrefix)
				}
				return
			}
			if got != tc.want {
				t.Errorf("stderr:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestMetricsDump reads a performance runner's metricsDump.tgz: entries in
// archive order are not time order, and names are compared as numbers.
func TestMetricsDump(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	m := newManager(t, false).observe(cqA, "forecast", 50).observe(cqA, "ema", 50)
	s0 := m.text(t)
	s1 := m.observe(cqA, "forecast", 1).observe(cqA, "ema", 2).text(t)
	s2 := m.observe(cqA, "forecast", 3).observe(cqA, "ema", 6).outcome(cqA, "0.9", 1, 1).text(t)

	cases := map[string]struct {
		entries []tarEntry
		want    Report
		wantErr string
	}{
		"first and last scrape, ordered by number": {
			entries: []tarEntry{
				{name: "1795845602000.prometheus", content: s2, modTime: t0.Add(2 * time.Second)},
				{name: "999999999999.prometheus", content: s0, modTime: t0}, // fewer digits: earlier
				{name: "1795845601000.prometheus", content: s1, modTime: t0.Add(time.Second)},
			},
			want: Report{
				Window: Window{Scrapes: 2, Seconds: fp(2)},
				ClusterQueues: []Row{{
					ClusterQueue: "cq-a", Scored: 2,
					Predictors:       preds(pred(2, 0, 2, 1), pred(2, 0, 4, 2.5), none(0), none(0)),
					ForecastMAERatio: ratios(fp(0.5), nil, nil),
					P90:              cov(2, 1, 0.09453, 0.90547),
				}},
				Pooled: Row{
					Scored:           2,
					Predictors:       preds(pred(2, 0, 2, 1), pred(2, 0, 4, 2.5), none(0), none(0)),
					ForecastMAERatio: ratios(fp(0.5), nil, nil),
					P90:              cov(2, 1, 0.09453, 0.90547),
				},
			},
		},
		"one scrape": {
			entries: []tarEntry{{name: "1.prometheus", content: s1, modTime: t0}},
			want: Report{
				Window: Window{Scrapes: 1},
				ClusterQueues: []Row{{
					ClusterQueue: "cq-a", Scored: 2,
					Predictors:       preds(pred(2, 0, 25.5, 1), pred(2, 0, 26, 2.5), none(0), none(0)),
					ForecastMAERatio: ratios(fp(25.5/26), nil, nil),
				}},
				Pooled: Row{
					Scored:           2,
					Predictors:       preds(pred(2, 0, 25.5, 1), pred(2, 0, 26, 2.5), none(0), none(0)),
					ForecastMAERatio: ratios(fp(25.5/26), nil, nil),
				},
			},
		},
		"a restart between two scrapes, although last exceeds first": {
			entries: []tarEntry{
				{name: "1.prometheus", content: s1},
				{name: "2.prometheus", content: newManager(t, false).observe(cqA, "forecast", 9).text(t)},
				{name: "3.prometheus", content: s2},
			},
			wantErr: `DIR/d.tgz: scrapes 1.prometheus and 2.prometheus come from different processes (counter reset on kueue_wait_time_prediction_absolute_error_seconds_count{cluster_queue="cq-a",predictor="forecast",replica_role="standalone"}): extract two scrapes of one process and pass them with --file`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			r := run(t, "", "-f", writeDump(t, dir, "d.tgz", tc.entries...), "-o", "json")
			if tc.wantErr != "" {
				got := strings.TrimSpace(strings.TrimPrefix(strings.ReplaceAll(r.stderr, dir, "DIR"), "kueue-waittime score: "))
				if r.code != 2 || got != tc.wantErr {
					t.Errorf("exit %d, stderr:\n got %s\nwant %s", r.code, got, tc.wantErr)
				}
				return
			}
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			var got Report
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-4),
				cmpopts.IgnoreFields(Row{}, "Verdict"), cmpopts.IgnoreFields(Window{}, "Sources")); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			if tc.want.Window.Scrapes == 2 {
				want := []string{filepath.Join(dir, "d.tgz") + ":999999999999.prometheus", filepath.Join(dir, "d.tgz") + ":1795845602000.prometheus"}
				if diff := cmp.Diff(want, got.Window.Sources); diff != "" {
					t.Errorf("sources (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestURL scrapes an httptest server as --url does a manager.
func TestURL(t *testing.T) {
	text := twoQueues(t).text(t)
	growing := newManager(t, false)
	var calls atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Accept"), "text/plain") {
			http.Error(w, "want text", http.StatusNotAcceptable)
			return
		}
		fmt.Fprint(w, text)
	})
	mux.HandleFunc("/secure/metrics", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "Forbidden", http.StatusForbidden)
			return
		}
		fmt.Fprint(w, text)
	})
	mux.HandleFunc("/forbidden", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "Forbidden", http.StatusForbidden) })
	mux.HandleFunc("/boom", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) })
	mux.HandleFunc("/login", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<!DOCTYPE html><html></html>") })
	mux.HandleFunc("/growing", func(w http.ResponseWriter, r *http.Request) {
		// Each scrape sees two more forecasts (errors 1 and 3) and EMAs
		// (2 and 6): any window of two scrapes has MAEs 2 and 4.
		calls.Add(1)
		growing.observe(cqA, "forecast", 1, 3).observe(cqA, "ema", 2, 6)
		text, err := encodeText(growing.reg)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, text)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	tlsSrv := httptest.NewUnstartedServer(mux)
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	dir := t.TempDir()
	token := writeFile(t, dir, "token", "s3cret\n")

	cases := map[string]struct {
		args []string
		code int
		// stdout must contain it; stderr must equal wantErr after the
		// command prefix, with URL for the server's address.
		stdout, wantErr string
	}{
		"200":                    {args: []string{"--url", srv.URL + "/metrics"}, stdout: "cq-a: on 4 workloads"},
		"bearer token":           {args: []string{"--url", srv.URL + "/secure/metrics", "--token-file", token}, stdout: "cq-b: on 2 workloads"},
		"TLS, verification off":  {args: []string{"--url", tlsSrv.URL + "/metrics", "--insecure-skip-tls-verify"}, stdout: "all ClusterQueues: on 6 workloads"},
		"window with --interval": {args: []string{"--url", srv.URL + "/growing", "--interval", "20ms"}, stdout: "all ClusterQueues: on 2 workloads the forecast's MAE is 2.00s, 0.50× the EMA's"},
		"403": {
			args: []string{"--url", srv.URL + "/forbidden"}, code: 2,
			wantErr: "GET URL/forbidden: 403 Forbidden: the manager's metrics endpoint needs a token allowed to get /metrics (--token-file, or the kubeconfig's user)",
		},
		"403 without the token": {
			args: []string{"--url", srv.URL + "/secure/metrics"}, code: 2,
			wantErr: "GET URL/secure/metrics: 403 Forbidden: the manager's metrics endpoint needs a token allowed to get /metrics (--token-file, or the kubeconfig's user)",
		},
		"404": {
			args: []string{"--url", srv.URL + "/nothing"}, code: 2,
			wantErr: "GET URL/nothing: 404 Not Found: wrong path or service? the manager serves /metrics",
		},
		"500 is not the user's fault": {
			args: []string{"--url", srv.URL + "/boom"}, code: 1,
			wantErr: "GET URL/boom: 500 Internal Server Error",
		},
		"a login page": {
			args: []string{"--url", srv.URL + "/login"}, code: 2,
			wantErr: "URL/login: not Prometheus text exposition format (text format parsing error in line 1: invalid metric name)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := run(t, "", tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %s", r.code, tc.code, r.stderr)
			}
			if tc.code == 0 {
				if !strings.Contains(r.stdout, tc.stdout) {
					t.Errorf("stdout lacks %q:\n%s", tc.stdout, r.stdout)
				}
				return
			}
			got := strings.TrimSpace(strings.TrimPrefix(strings.ReplaceAll(r.stderr, srv.URL, "URL"), "kueue-waittime score: "))
			if got != tc.wantErr {
				t.Errorf("stderr:\n got %s\nwant %s", got, tc.wantErr)
			}
		})
	}
	if calls.Load() != 2 {
		t.Errorf("--interval scraped %d times, want 2", calls.Load())
	}

	// Without --insecure-skip-tls-verify the test server's certificate is
	// refused: the endpoint cannot be reached (exit 1).
	if r := run(t, "", "--url", tlsSrv.URL+"/metrics"); r.code != 1 || !strings.Contains(r.stderr, "certificate") {
		t.Errorf("unverified TLS: exit %d, stderr %q; want 1 and a certificate error", r.code, r.stderr)
	}
}

// TestService goes through the service proxy path with a kubeconfig that
// points at an httptest server standing in for the API server.
func TestService(t *testing.T) {
	text := twoQueues(t).text(t)
	var (
		mu    sync.Mutex
		paths []string
	)
	// client-go sends credentials only over TLS.
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		switch {
		case r.Header.Get("Authorization") != "Bearer admin-token":
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
		case r.URL.Path == "/api/v1/namespaces/kueue-system/services/https:kueue-metrics:8443/proxy/metrics":
			fmt.Fprint(w, text)
		case strings.Contains(r.URL.Path, "denied"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"services \"denied\" is forbidden: User \"dev\" cannot get resource \"services/proxy\"","reason":"Forbidden","code":403}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer api.Close()
	kubeconfig := writeFile(t, t.TempDir(), "kubeconfig", fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: %q, certificate-authority-data: %s}}]
users: [{name: admin, user: {token: admin-token}}]
contexts: [{name: test, context: {cluster: test, user: admin}}]
current-context: test
`, api.URL, base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: api.Certificate().Raw}))))

	r := run(t, "", "--kubeconfig", kubeconfig, "--service", "kueue-system/kueue-metrics:8443")
	if r.code != 0 || !strings.Contains(r.stdout, "all ClusterQueues: on 6 workloads") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	mu.Lock()
	if diff := cmp.Diff([]string{"/api/v1/namespaces/kueue-system/services/https:kueue-metrics:8443/proxy/metrics"}, paths); diff != "" {
		t.Errorf("requested paths (-want +got):\n%s", diff)
	}
	mu.Unlock()

	r = run(t, "", "--kubeconfig", kubeconfig, "--service", "kueue-system/denied:8443")
	want := `kueue-waittime score: GET /api/v1/namespaces/kueue-system/services/https:denied:8443/proxy/metrics: 403 Forbidden (services "denied" is forbidden: User "dev" cannot get resource "services/proxy"): the manager's metrics endpoint needs a token allowed to get /metrics (--token-file, or the kubeconfig's user)` + "\n"
	if r.code != 2 || r.stderr != want {
		t.Errorf("exit %d, stderr:\n got %s\nwant %s", r.code, r.stderr, want)
	}
	r = run(t, "", "--kubeconfig", kubeconfig, "--service", "kueue-system/http:kueue-metrics:8080", "--path", "/stats")
	if r.code != 2 || !strings.Contains(r.stderr, "GET /api/v1/namespaces/kueue-system/services/http:kueue-metrics:8080/proxy/stats: 404 Not Found") {
		t.Errorf("exit %d, stderr %q; want 2 and a 404", r.code, r.stderr)
	}
}

func TestCompareNames(t *testing.T) {
	got := []string{"b.prometheus", "1000.prometheus", "999.prometheus", "a.prometheus", "0999.prometheus"}
	want := []string{"0999.prometheus", "999.prometheus", "1000.prometheus", "a.prometheus", "b.prometheus"}
	slices.SortStableFunc(got, compareNames)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}
