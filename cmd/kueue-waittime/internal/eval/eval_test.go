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

// TestEvalOnTheRealScheduler runs the smoke scenario and a small one
// claiming GPUs through DRA on one control plane: the DeviceClass mapping
// the second needs does not touch the first.
func TestEvalOnTheRealScheduler(t *testing.T) {
	requireControlPlane(t)
	smoke, err := LoadScenario(filepath.Join("..", "..", "..", "..", "test", "eval", "smoke.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dra := &Scenario{
		Name:         "dra-smoke",
		Quota:        map[string]string{"cpu": "2", "memory": "1Gi", "example.com/gpu": "2"},
		Demand:       map[string]string{"cpu": "250m", "memory": "64Mi"},
		DRA:          &DRASpec{DeviceClass: "gpu.example.com", Resource: "example.com/gpu", Count: 1},
		Levels:       []float64{0.8},
		JobsPerLevel: 10,
		MeanService:  smoke.MeanService,
		Service:      ServiceSpec{Distribution: "exponential", TruncateAt: 3},
		Seed:         11,
	}
	if err := dra.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cp, err := startKueue(ctx, 200*time.Millisecond, smoke.MeanService.Duration, dra.deviceClassMappings())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := cp.Stop(); err != nil {
			t.Error(err)
		}
	}()
	h := &Harness{CP: cp, PollInterval: 100 * time.Millisecond}
	t.Run("smoke", func(t *testing.T) { checkSmoke(ctx, t, h, smoke) })
	t.Run("GPUs through DRA", func(t *testing.T) {
		// Every admission is checked by the harness to hold the claimed
		// device as example.com/gpu; Run fails otherwise.
		report, err := h.Run(ctx, dra)
		if err != nil {
			t.Fatal(err)
		}
		if report.KEff != 2 || report.Bottleneck != "example.com/gpu" {
			t.Errorf("k_eff = %d (%s), want 2 (example.com/gpu): CPU alone would give 8", report.KEff, report.Bottleneck)
		}
		l := report.Levels[0]
		t.Logf("level: %+v", l)
		if l.QuotableMislabelled != 0 || l.ObservedUtilization <= 0 {
			t.Errorf("%d workloads mislabelled Unfeasible, observed utilization %v", l.QuotableMislabelled, l.ObservedUtilization)
		}
		var md bytes.Buffer
		if err := report.WriteMarkdown(&md); err != nil || !strings.Contains(md.String(), "claims 1 device(s) of DeviceClass gpu.example.com") {
			t.Errorf("markdown (err %v):\n%s", err, md.String())
		}
	})
}

func checkSmoke(ctx context.Context, t *testing.T, h *Harness, sc *Scenario) {
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
