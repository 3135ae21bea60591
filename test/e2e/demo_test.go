package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// clusterSummary is the part of `kueue-waittime demo --summary-json` and
// `eval --cluster --out` JSON (eval's ClusterReport) these tests read.
type clusterSummary struct {
	Replicas []struct {
		Jobs          int `json:"jobs"`
		JobsCompleted int `json:"jobsCompleted"`
		PodsSucceeded int `json:"podsSucceededOnKWOKNodes"`
		EstimatesSeen int `json:"estimatesSeen"`
		Unfeasible    []struct {
			Job           string `json:"job"`
			Admissibility string `json:"admissibility"`
			Reason        string `json:"reason"`
		} `json:"unfeasible"`
	} `json:"replicas"`
	Score struct {
		Pooled struct {
			Scored     int `json:"scored"`
			Predictors map[string]struct {
				N   int      `json:"n"`
				MAE *float64 `json:"mae"`
			} `json:"predictors"`
		} `json:"pooled"`
	} `json:"score"`
}

// kueueWaittime runs bin/kueue-waittime (KUEUE_WAITTIME, which make e2e
// sets) with the environment make gives the suite (the cluster's binaries,
// manifests and image), and returns its standard output; its standard
// error goes to the test log on failure.
func kueueWaittime(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	bin := os.Getenv("KUEUE_WAITTIME")
	if bin == "" {
		t.Fatal("KUEUE_WAITTIME is not set: make e2e sets it to bin/kueue-waittime")
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("kueue-waittime %s: %s", strings.Join(args, " "), time.Since(start).Round(time.Second))
	if err != nil {
		t.Fatalf("kueue-waittime %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func readSummary(t *testing.T, path string) clusterSummary {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s clusterSummary
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s
}

// TestDemoRunsJobsOnItsOwnClusterAndScoresFromTheManagersMetrics runs
// `kueue-waittime demo` as make demo does, short (fourteen Jobs of about
// 5 s, offered 1.5 times the ClusterQueue's capacity so that some wait),
// on a cluster of its own beside the suite's: its feasible Jobs complete
// with their pods Succeeded on KWOK nodes, the visibility API served
// estimates of the waiting ones, the third Job is Unfeasible with the
// reason, and the summary is scored from the manager's metrics. Into a
// pipe, the live table is plain lines.
func TestDemoRunsJobsOnItsOwnClusterAndScoresFromTheManagersMetrics(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	dir := t.TempDir()
	summaryPath := filepath.Join(dir, "summary.json")
	const jobs = 14
	out := kueueWaittime(ctx, t, "demo", "--workloads", strconv.Itoa(jobs), "--mean-service", "5s", "--utilization", "1.5",
		"--dir", filepath.Join(dir, "demo"), "--summary-json", summaryPath)
	if strings.Contains(out, "\033[") {
		t.Error("screen-clearing escape codes in the demo's output to a pipe")
	}
	if !strings.Contains(out, " demo-eval: submitted ") {
		t.Errorf("no plain live line about demo-eval in the output:\n%s", out)
	}
	s := readSummary(t, summaryPath)
	if len(s.Replicas) != 1 {
		t.Fatalf("%d replicas in the summary, want 1", len(s.Replicas))
	}
	r := s.Replicas[0]
	if r.Jobs != jobs || r.JobsCompleted != jobs-1 || r.PodsSucceeded != jobs-1 {
		t.Errorf("%d Jobs, %d completed, %d pods Succeeded on KWOK nodes; want %d, %d, %d", r.Jobs, r.JobsCompleted, r.PodsSucceeded, jobs, jobs-1, jobs-1)
	}
	if r.EstimatesSeen < 2 {
		t.Errorf("the visibility API served estimates for %d Jobs, want at least 2", r.EstimatesSeen)
	}
	if len(r.Unfeasible) != 1 {
		t.Fatalf("unfeasible Jobs %+v, want one", r.Unfeasible)
	}
	if u := r.Unfeasible[0]; u.Job != "w0002" || u.Admissibility != "Unfeasible" || !strings.Contains(u.Reason, "cpu 20 > potential 2") {
		t.Errorf("the Unfeasible Job: %+v, want w0002, Unfeasible, a reason naming cpu 20 > potential 2", u)
	}
	p := s.Score.Pooled
	if p.Scored < 2 {
		t.Errorf("%d workloads scored in the manager's metrics, want at least 2", p.Scored)
	}
	if f := p.Predictors["forecast"]; f.N < 1 || f.MAE == nil {
		t.Errorf("the forecast's score %+v, want an MAE over at least one workload", f)
	}
	if !strings.Contains(out, "Scored by the manager's prediction ledger") {
		t.Errorf("the printed summary lacks the score:\n%s", out)
	}
}

// TestEvalOnTheClusterRunsAScenarioAsJobs runs `kueue-waittime eval
// --cluster` on a tiny single-queue scenario (six Jobs, one Unfeasible):
// every feasible Job completes on a KWOK node and the report is scored
// from the manager's metrics.
func TestEvalOnTheClusterRunsAScenarioAsJobs(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	dir := t.TempDir()
	scenario := filepath.Join(dir, "tiny.yaml")
	if err := os.WriteFile(scenario, []byte(`name: tiny
quota: {cpu: "1", memory: 1Gi}
demand: {cpu: 500m, memory: 64Mi}
unfeasibleFraction: 0.2
unfeasibleDemand: {cpu: "4", memory: 64Mi}
levels: [0.9]
jobsPerLevel: 6
meanService: 3s
service: {distribution: exponential, truncateAt: 3}
arrivals: {process: poisson}
seed: 3
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := kueueWaittime(ctx, t, "eval", "--cluster", "-f", scenario, "--cluster-dir", filepath.Join(dir, "clusters"), "--out", filepath.Join(dir, "out"))
	s := readSummary(t, filepath.Join(dir, "out", "tiny-cluster.json"))
	if len(s.Replicas) == 0 {
		t.Fatal("no replica in the report")
	}
	for _, r := range s.Replicas {
		feasible := r.Jobs - len(r.Unfeasible)
		if r.Jobs != 6 || r.JobsCompleted != feasible || r.PodsSucceeded != feasible {
			t.Errorf("%d Jobs (%d Unfeasible), %d completed, %d pods Succeeded on KWOK nodes; want 6 Jobs and every feasible one completed", r.Jobs, len(r.Unfeasible), r.JobsCompleted, r.PodsSucceeded)
		}
		for _, u := range r.Unfeasible {
			if u.Admissibility != "Unfeasible" || u.Reason == "" {
				t.Errorf("Unfeasible Job %+v, want labelled Unfeasible with a reason", u)
			}
		}
	}
	if s.Score.Pooled.Scored < 1 {
		t.Errorf("%d workloads scored in the manager's metrics, want at least 1", s.Score.Pooled.Scored)
	}
	if !strings.Contains(out, "CLUSTERQUEUE") {
		t.Errorf("the printed report lacks the score table:\n%s", out)
	}
}
