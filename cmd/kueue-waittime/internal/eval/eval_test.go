package eval

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// These tests run the harness on the real control plane and the patched
// scheduler: make test sets PROJECT_DIR and KUBEBUILDER_ASSETS.
func requireControlPlane(t *testing.T) {
	t.Helper()
	if os.Getenv("PROJECT_DIR") == "" || os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("PROJECT_DIR and KUBEBUILDER_ASSETS must point at the patched Kueue tree and the control-plane binaries (run through make test)")
	}
}

func TestEvalSmokeScenarioOnTheRealScheduler(t *testing.T) {
	requireControlPlane(t)
	sc, err := LoadScenario(filepath.Join("..", "..", "..", "..", "test", "eval", "smoke.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cp, err := startKueue(ctx, 200*time.Millisecond, sc.MeanService.Duration)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := cp.Stop(); err != nil {
			t.Error(err)
		}
	}()
	h := &Harness{CP: cp, PollInterval: 100 * time.Millisecond}
	report, err := h.Run(ctx, sc)
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Levels) != 1 {
		t.Fatalf("levels = %d, want 1", len(report.Levels))
	}
	l := report.Levels[0]
	t.Logf("level: %+v", l)
	if report.KEff != 4 || report.Bottleneck != "cpu" {
		t.Errorf("k_eff = %d (%s), want 4 (cpu)", report.KEff, report.Bottleneck)
	}
	if l.Unfeasible == 0 || l.UnfeasibleLabelled != l.Unfeasible || l.QuotableMislabelled != 0 {
		t.Errorf("partition through the API: %d of %d unfeasible labelled, %d feasible mislabelled", l.UnfeasibleLabelled, l.Unfeasible, l.QuotableMislabelled)
	}
	if l.ObservedUtilization <= 0 || l.ObservedMeanWait < 0 {
		t.Errorf("observed utilization %v, mean wait %v", l.ObservedUtilization, l.ObservedMeanWait)
	}
	for _, row := range report.Workloads {
		if row.Unfeasible {
			continue
		}
		if row.Wait < 0 || row.Service <= 0 {
			t.Errorf("%s: wait %v, service %v", row.Name, row.Wait, row.Service)
		}
		if row.Forecast != nil && (*row.Forecast < 0 || row.P50 == nil || row.P90 == nil || *row.P50 > *row.P90) {
			t.Errorf("%s: forecast %v, P50 %v, P90 %v", row.Name, *row.Forecast, row.P50, row.P90)
		}
	}
	var md, csv bytes.Buffer
	if err := report.WriteMarkdown(&md); err != nil || !strings.Contains(md.String(), "| 0.85 |") {
		t.Errorf("markdown (err %v):\n%s", err, md.String())
	}
	if err := report.WriteCSV(&csv); err != nil || strings.Count(csv.String(), "\n") != sc.JobsPerLevel+1 {
		t.Errorf("CSV has %d lines (err %v), want %d", strings.Count(csv.String(), "\n"), err, sc.JobsPerLevel+1)
	}
}
