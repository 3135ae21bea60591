package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	visibilityapi "sigs.k8s.io/kueue/apis/visibility/v1beta2"
)

// kueuectl runs bin/kueuectl (KUEUECTL, which make e2e sets) and returns
// its standard output, or an error with its standard error.
func kueuectl(ctx context.Context, t *testing.T, args ...string) (string, error) {
	t.Helper()
	bin := os.Getenv("KUEUECTL")
	if bin == "" {
		t.Fatal("KUEUECTL is not set: make e2e sets it to bin/kueuectl")
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("kueuectl %s: %w\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

// mustKueuectl is kueuectl failing the test on an error.
func mustKueuectl(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	out, err := kueuectl(ctx, t, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestKueuectlCreateWaitTimeReviewAnswersBeforeSubmitting asks, as a batch
// user, with the patched kueuectl and a Job manifest that is never
// submitted, how long the Job would wait in a LocalQueue whose ClusterQueue
// (2 CPUs) runs two Jobs of 1 CPU and holds two more pending: it would be
// Quotable, third in the queue, two at once on the CPUs, and wait no less
// than the last pending Job of the same refresh; a manifest of 16 CPUs is
// Unfeasible with the scheduler's reason; and nothing is created.
func TestKueuectlCreateWaitTimeReviewAnswersBeforeSubmitting(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	const ns = "team-whatif"
	cpuTenant(ctx, t, ns, "2")
	user, userVisibility, userKubeconfig := researcher(ctx, t, "wendy", ns)
	const jobs = 4
	for i := range jobs {
		if err := user.Create(ctx, job("busy-"+strconv.Itoa(i), ns, "1", 0, 3*time.Minute)); err != nil {
			t.Fatalf("the user creating a Job: %v", err)
		}
	}

	manifest := func(name, cpu string) string {
		j := job(name, ns, cpu, 0, 3*time.Minute)
		j.TypeMeta = metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}
		data, err := yaml.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), name+".yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	fits, tooBig := manifest("would-fit", "1"), manifest("too-big", "16")

	// The queue settles: two Jobs admitted, the head of the other two tried
	// by the scheduler and refused for quota (with the head refused, the
	// scheduler need not try the one behind it). A refresh published before
	// then saw another queue (the summary lists the pending Workloads live,
	// with the estimates of the last refresh), so only later refreshes
	// count; one that has not yet seen the last Job gives it no estimate.
	var settled time.Time
	eventually(ctx, t, 2*time.Minute, "two Jobs admitted and the head of the others refused for quota", func(ctx context.Context) error {
		var wls kueue.WorkloadList
		if err := cl.Client.List(ctx, &wls, client.InNamespace(ns)); err != nil {
			return err
		}
		admitted, refused := 0, 0
		for _, wl := range wls.Items {
			switch cond := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved); {
			case cond == nil:
			case cond.Status == metav1.ConditionTrue:
				admitted++
			default:
				refused++
			}
		}
		if len(wls.Items) != jobs || admitted != 2 || refused == 0 {
			return fmt.Errorf("%d Workloads, %d admitted and %d refused for quota: want %d, 2 and at least 1", len(wls.Items), admitted, refused, jobs)
		}
		settled = time.Now()
		return nil
	})

	// The review and the last pending Job's published estimate, of the same
	// refresh after the queue settled: a refresh between the two requests
	// moves both, and the comparison is retried.
	eventually(ctx, t, 2*time.Minute, "a review comparable with the pending Jobs' estimates", func(ctx context.Context) error {
		out, err := kueuectl(ctx, t, "create", "waittimereview", "-f", fits, "-o", "json", "--kubeconfig", userKubeconfig)
		if err != nil {
			return err
		}
		var review visibilityapi.WaitTimeReview
		if err := json.Unmarshal([]byte(out), &review); err != nil {
			return fmt.Errorf("kueuectl -o json printed %q: %w", out, err)
		}
		s, err := userVisibility.VisibilityV1beta2().LocalQueues(ns).GetPendingWorkloadsSummary(ctx, "lq", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(s.Items) != 2 || s.Items[1].WaitTimeEstimate == nil || s.Items[1].WaitTimeEstimate.ExpectedWaitMilliseconds == nil {
			return fmt.Errorf("%d pending, want 2 with estimates: %+v", len(s.Items), s.Items)
		}
		last, est := s.Items[1].WaitTimeEstimate, review.Status.WaitTimeEstimate
		if last.EstimatedAt == nil || !last.EstimatedAt.After(settled) {
			return fmt.Errorf("the pending Jobs' estimates were published at %v, before the queue settled at %v", last.EstimatedAt, settled)
		}
		if est == nil || est.EstimatedAt == nil || !est.EstimatedAt.Equal(last.EstimatedAt) {
			return fmt.Errorf("the review's estimate %+v is not of the refresh of the pending Jobs' (%v)", est, last.EstimatedAt)
		}
		st := review.Status
		if st.ClusterQueue != kueue.ClusterQueueReference(ns) || st.PositionInClusterQueue != 2 ||
			st.EffectiveServers == nil || *st.EffectiveServers != 2 || st.BottleneckFlavor != cpuFlavor || st.BottleneckResource != "cpu" {
			t.Fatalf("status %+v: want ClusterQueue %s, position 2, k_eff 2 bound by %s/cpu", st, ns, cpuFlavor)
		}
		if est.Admissibility != visibilityapi.AdmissibilityQuotable || est.ExpectedWaitMilliseconds == nil ||
			*est.ExpectedWaitMilliseconds < *last.ExpectedWaitMilliseconds || *est.P50WaitMilliseconds > *est.P90WaitMilliseconds {
			t.Fatalf("estimate %+v: want Quotable, a wait no less than the last pending Job's %d ms and P50 ≤ P90", est, *last.ExpectedWaitMilliseconds)
		}
		return nil
	})

	// The default output: one row, the waits as kueuectl list workload
	// prints them.
	out := mustKueuectl(ctx, t, "create", "waittimereview", "-f", fits, "--kubeconfig", userKubeconfig)
	t.Logf("kueuectl create waittimereview -f would-fit.yaml:\n%s", out)
	fields := tableRow(t, out)
	if got, want := fields[:8], []string{ns, "would-fit", "lq", ns, "2", "2", cpuFlavor + "/cpu", "Quotable"}; !slices.Equal(got, want) {
		t.Errorf("row %q: want it to start with %q", fields, want)
	}
	for i, column := range map[int]string{8: "EXPECTED WAIT", 9: "P50", 10: "P90"} {
		if fields[i] == "-" {
			t.Errorf("%s is %q: want a wait (row %q)", column, fields[i], fields)
		}
	}

	out = mustKueuectl(ctx, t, "create", "waittimereview", "-f", tooBig, "--kubeconfig", userKubeconfig)
	t.Logf("kueuectl create waittimereview -f too-big.yaml:\n%s", out)
	fields = tableRow(t, out)
	if got, want := slices.Concat(fields[:4], fields[7:12]), []string{ns, "too-big", "lq", ns, "Unfeasible", "-", "-", "-", "None"}; !slices.Equal(got, want) {
		t.Errorf("row %q: want namespace, name, LocalQueue, ClusterQueue %q and admissibility, waits and method %q", fields, want[:4], want[4:])
	}
	if got, want := strings.Join(fields[12:], " "), "flavor "+cpuFlavor+": cpu 16 > potential 2 (nominal 2, borrowable 0)"; got != want {
		t.Errorf("reason %q, want %q", got, want)
	}

	// Asking submitted nothing.
	var wls kueue.WorkloadList
	if err := user.List(ctx, &wls, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(wls.Items) != jobs {
		t.Errorf("%d Workloads in %s after the reviews, want the %d Jobs' only", len(wls.Items), ns, jobs)
	}
}

// tableRow is the fields of the one row of a table with a header.
func tableRow(t *testing.T, out string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "NAMESPACE") {
		t.Fatalf("want a header and one row:\n%s", out)
	}
	fields := strings.Fields(lines[1])
	if len(fields) < 12 {
		t.Fatalf("%d fields in %q, want at least 12", len(fields), lines[1])
	}
	return fields
}
