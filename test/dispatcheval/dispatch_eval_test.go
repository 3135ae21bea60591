package dispatcheval

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	utilfeature "k8s.io/apiserver/pkg/util/feature"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/admissionchecks/multikueue"
	"sigs.k8s.io/kueue/pkg/features"
)

// evalScenario is the measured scenario: a small worker, lightly loaded,
// and a large one whose own users keep it about 80% busy; Jobs of one or
// two CPUs to the manager. Together about 0.8 of the workers' 12 CPUs.
var evalScenario = Scenario{
	Workers: []Worker{
		{Name: "small", CPUMilli: 4000, BackgroundRate: 0.1, BackgroundCPUMilli: 1000, BackgroundMeanService: 6 * time.Second},
		{Name: "large", CPUMilli: 8000, BackgroundRate: 0.8, BackgroundCPUMilli: 1000, BackgroundMeanService: 8 * time.Second},
	},
	Jobs:        30,
	JobRate:     0.4,
	Warmup:      15 * time.Second,
	JobCPUMilli: []int64{1000, 2000},
	MeanService: 5 * time.Second,
	MinService:  time.Second,
	MaxService:  30 * time.Second,
}

// The goal of issue 16: the wait-time dispatcher's mean wait at most 0.8×
// the best built-in dispatcher's, its P90 at most 0.85×.
const (
	meanGoal = 0.8
	p90Goal  = 0.85
)

var dispatcherNames = map[string]string{
	"all-at-once": configapi.MultiKueueDispatcherModeAllAtOnce,
	"incremental": configapi.MultiKueueDispatcherModeIncremental,
	"wait-time":   configapi.MultiKueueDispatcherModeWaitTime,
}

// evalReport is what results.json holds.
type evalReport struct {
	Command     string              `json:"command"`
	Scenario    Scenario            `json:"scenario"`
	Seeds       []uint64            `json:"seeds"`
	Runs        []RunResult         `json:"runs"`
	Summaries   []DispatcherSummary `json:"summaries"`
	Comparisons []Comparison        `json:"comparisons"`
	Losses      []lossRun           `json:"losses,omitempty"`
	WallTime    string              `json:"wallTime"`
}

type lossRun struct {
	Run  RunResult  `json:"run"`
	Loss LossReport `json:"loss"`
}

func envList(name, def string) []string {
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		v = def
	}
	if v == "none" {
		return nil
	}
	return strings.Split(v, ",")
}

// TestDispatchEval runs evalScenario's plans under each dispatcher and
// writes results.json and results.md into $DISPATCH_EVAL_OUT. Settings:
// DISPATCH_EVAL_SEEDS (how many seeds, 3), DISPATCH_EVAL_JOBS (Jobs per
// run, 30), DISPATCH_EVAL_DISPATCHERS
// (all-at-once,incremental,wait-time), DISPATCH_EVAL_LOSS (the dispatchers
// of the worker-loss run on seed 0, wait-time,all-at-once; none for
// none). It fails when MultiKueue created a Job on two workers (ran it
// twice); Workload copies reserved on two workers at once are counted and
// reported (MultiKueue keeps the first admission and removes the others).
func TestDispatchEval(t *testing.T) {
	out := os.Getenv("DISPATCH_EVAL_OUT")
	if out == "" {
		t.Skip("DISPATCH_EVAL_OUT is not set: the dispatch evaluation runs with make eval-dispatch")
	}
	seedCount, err := strconv.Atoi(cmpOr(os.Getenv("DISPATCH_EVAL_SEEDS"), "3"))
	if err != nil || seedCount < 1 {
		t.Fatalf("DISPATCH_EVAL_SEEDS=%q: want a positive number", os.Getenv("DISPATCH_EVAL_SEEDS"))
	}
	scenario := evalScenario
	if v := os.Getenv("DISPATCH_EVAL_JOBS"); v != "" {
		if scenario.Jobs, err = strconv.Atoi(v); err != nil || scenario.Jobs < 1 {
			t.Fatalf("DISPATCH_EVAL_JOBS=%q: want a positive number", v)
		}
	}
	dispatchers := envList("DISPATCH_EVAL_DISPATCHERS", "all-at-once,incremental,wait-time")
	losses := envList("DISPATCH_EVAL_LOSS", "wait-time,all-at-once")
	for _, d := range append(append([]string{}, dispatchers...), losses...) {
		if dispatcherNames[d] == "" {
			t.Fatalf("unknown dispatcher %q (all-at-once, incremental, wait-time)", d)
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := utilfeature.DefaultMutableFeatureGate.Set(fmt.Sprintf("%s=true", features.WaitTimeEstimation)); err != nil {
		t.Fatal(err)
	}
	// Interrupted, the runs end and the control planes stop (t.Cleanup),
	// rather than leaving kube-apiservers and etcds behind.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	begin := time.Now()
	report := evalReport{
		Command:  "make eval-dispatch " + fmt.Sprintf("DISPATCH_EVAL_SEEDS=%d DISPATCH_EVAL_JOBS=%d DISPATCH_EVAL_DISPATCHERS=%s DISPATCH_EVAL_LOSS=%s", seedCount, scenario.Jobs, strings.Join(dispatchers, ","), cmpOr(strings.Join(losses, ","), "none")),
		Scenario: scenario,
	}
	workers := make([]string, 0, len(scenario.Workers))
	for _, w := range scenario.Workers {
		workers = append(workers, w.Name)
	}
	var plans []Plan
	for s := range seedCount {
		p, err := scenario.Draw(uint64(s + 1))
		if err != nil {
			t.Fatal(err)
		}
		plans = append(plans, p)
		report.Seeds = append(report.Seeds, p.Seed)
	}
	progress := func(format string, args ...any) {
		t.Logf("%s "+format, append([]any{time.Now().Format(time.TimeOnly)}, args...)...)
	}
	write := func() {
		report.Summaries, report.Comparisons = summarize(report.Runs, dispatchers, "wait-time", meanGoal, p90Goal)
		report.WallTime = time.Since(begin).Round(time.Second).String()
		b, err := json.MarshalIndent(report, "", "  ")
		if err != nil {
			t.Errorf("writing the results: %v", err)
			return
		}
		if err := os.WriteFile(filepath.Join(out, "results.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, "results.md"), []byte(report.markdown()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range dispatchers {
		progress("starting a manager (%s) and workers %v", d, workers)
		c, err := StartClusters(ctx, dispatcherNames[d], workers)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Stop() })
		for _, p := range plans {
			res, _, err := c.Run(ctx, scenario, p, fmt.Sprintf("s%d", p.Seed), 3*time.Minute, nil, progress)
			if err != nil {
				t.Error(err)
				break
			}
			res.Dispatcher = d
			progress("%s seed %d: %d admitted, mean %.2fs P90 %.2fs max %.2fs, copied to %v, admitted on %v, reserved on two %d, admitted on two %d",
				d, p.Seed, res.Stats.N, res.Stats.Mean, res.Stats.P90, res.Stats.Max, res.CopiedTo, res.AdmittedOn, res.ReservedOnTwo, res.AdmittedOnTwo)
			report.Runs = append(report.Runs, *res)
			write()
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stopping the clusters: %v", err)
		}
	}
	for _, d := range losses {
		// Kueue's default worker-lost timeout is 5 minutes: 30 s here, so
		// that the run sees what MultiKueue does after it.
		progress("the worker-loss run under %s", d)
		c, err := StartClusters(ctx, dispatcherNames[d], workers, multikueue.WithWorkerLostTimeout(30*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Stop() })
		p := plans[0]
		loss := &Loss{Worker: "small", At: scenario.Warmup + (p.End-scenario.Warmup)/3}
		res, lr, err := c.Run(ctx, scenario, p, fmt.Sprintf("loss%d", p.Seed), 2*time.Minute, loss, progress)
		if err != nil {
			t.Error(err)
		} else {
			res.Dispatcher = d
			report.Losses = append(report.Losses, lossRun{Run: *res, Loss: *lr})
			progress("%s with %s lost: %+v", d, lr.Worker, *lr)
			write()
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stopping the clusters: %v", err)
		}
	}
	write()
	for _, r := range report.Runs {
		if r.JobOnTwo > 0 {
			t.Errorf("%s seed %d: %d Jobs created (run) on two workers", r.Dispatcher, r.Seed, r.JobOnTwo)
		}
	}
}

// markdown renders the report for results.md.
func (r evalReport) markdown() string {
	return "# MultiKueue dispatchers: waits on the same arrivals\n\nCommand: `" + r.Command + "`\n\n" +
		fmt.Sprintf("Scored: every Job of every run, %d Jobs × %d seeds per dispatcher, on a manager and workers %s; "+
			"a Job's wait runs from its Workload's creation on the manager to its quota reservation on the worker that admitted it "+
			"(the worker named in the manager Workload's status.clusterName), both seen on watches. Intervals: Student-t 95%% over the seeds' values "+
			"(a seed's mean, P90 or max; the ratio is the per-seed ratio to the best built-in on the same plan).\n\n",
			r.Scenario.Jobs, len(r.Seeds), workerText(r.Scenario.Workers)) +
		markdown(r.Summaries, r.Comparisons, r.Runs) + lossMarkdown(r.Losses) +
		fmt.Sprintf("\nWall time: %s.\n", r.WallTime)
}

func workerText(workers []Worker) string {
	var parts []string
	for _, w := range workers {
		parts = append(parts, fmt.Sprintf("%s (%d CPUs; background %.1f/s of %d CPU, mean %v)", w.Name, w.CPUMilli/1000, w.BackgroundRate, w.BackgroundCPUMilli/1000, w.BackgroundMeanService))
	}
	return strings.Join(parts, ", ")
}

// TestRenderDispatchEval writes results.md again from the results.json in
// $DISPATCH_EVAL_RENDER (after a change of the rendering only).
func TestRenderDispatchEval(t *testing.T) {
	dir := os.Getenv("DISPATCH_EVAL_RENDER")
	if dir == "" {
		t.Skip("DISPATCH_EVAL_RENDER is not set")
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r evalReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.md"), []byte(r.markdown()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func lossMarkdown(losses []lossRun) string {
	if len(losses) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## A worker goes away mid-run (seed 1; its control plane stopped; worker-lost timeout 30 s)\n\n")
	b.WriteString("| dispatcher | worker stopped at (s) | its API gone at (s) | running there then | pending there then | of those, reserved elsewhere later | Jobs never finished | mean / P90 / max wait, Jobs created before (s) | after (s) |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, l := range losses {
		fmt.Fprintf(&b, "| %s | %.0f | %.0f | %d | %d | %d | %d | %.2f / %.2f / %.2f (n %d) | %.2f / %.2f / %.2f (n %d) |\n", l.Run.Dispatcher,
			l.Loss.AtSeconds, l.Loss.GoneSeconds, len(l.Loss.RunningThere), len(l.Loss.PendingThere), len(l.Loss.ReadmittedElsewhere), len(l.Loss.NeverFinished),
			l.Loss.WaitsBefore.Mean, l.Loss.WaitsBefore.P90, l.Loss.WaitsBefore.Max, l.Loss.WaitsBefore.N,
			l.Loss.WaitsAfter.Mean, l.Loss.WaitsAfter.P90, l.Loss.WaitsAfter.Max, l.Loss.WaitsAfter.N)
	}
	return b.String()
}
