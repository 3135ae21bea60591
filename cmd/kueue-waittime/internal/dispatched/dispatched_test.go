package dispatched

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	visibility "sigs.k8s.io/kueue/apis/visibility/v1beta2"
	"sigs.k8s.io/kueue/pkg/features"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/controlplane"
)

func TestRender(t *testing.T) {
	at := metav1.NewMicroTime(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	cases := map[string]struct {
		summary *visibility.DispatchedWorkloadsSummary
		want    string
	}{
		"nothing placed": {
			summary: &visibility.DispatchedWorkloadsSummary{},
			want:    "No workload is being placed on a worker cluster.\n",
		},
		"a row per worker: answers, reasons and errors": {
			summary: &visibility.DispatchedWorkloadsSummary{Items: []visibility.DispatchedWorkload{{
				ObjectMeta: metav1.ObjectMeta{Name: "job-a"},
				Basis:      "ExpectedWait",
				Workers: []visibility.DispatchWorkerAnswer{
					{Name: "fast", Nominated: true, AnsweredAt: &at, WaitTimeEstimate: &visibility.WaitTimeEstimate{
						Admissibility: visibility.AdmissibilityQuotable, P50WaitMilliseconds: new(int64(1500)), P90WaitMilliseconds: new(int64(90000))}},
					{Name: "small", AnsweredAt: &at, WaitTimeEstimate: &visibility.WaitTimeEstimate{
						Admissibility: visibility.AdmissibilityUnfeasible, Reason: "flavor default: cpu 6 > potential 4"}},
					{Name: "gone", Error: "not connected"},
				},
			}}},
			want: "WORKLOAD  BASIS         WORKER  NOMINATED  ADMISSIBILITY  P50    P90            ANSWERED                  NOTE\n" +
				"job-a     ExpectedWait  fast    true       Quotable       1.50s  90.0s (1m30s)  2026-01-01T12:00:00.000Z  -\n" +
				"job-a     ExpectedWait  small   false      Unfeasible     -      -              2026-01-01T12:00:00.000Z  flavor default: cpu 6 > potential 4\n" +
				"job-a     ExpectedWait  gone    false      -              -      -              -                         not connected\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if err := render(&out, tc.summary); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("table (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestDispatchedAgainstAManager runs the command against the patched Kueue
// as a MultiKueue manager with the wait-time dispatcher, on a real
// kube-apiserver: a LocalQueue with nothing to place lists nothing, and an
// unknown one is an error naming it. (test/integration/multikueue reads
// the records of placed workloads through the same API.)
func TestDispatchedAgainstAManager(t *testing.T) {
	features.SetFeatureGateDuringTest(t, features.WaitTimeEstimation, true)
	features.SetFeatureGateDuringTest(t, features.MultiKueue, true)
	ctx := t.Context()
	cp := controlplane.StartForTest(t)
	if _, err := cp.StartKueue(ctx, controlplane.WithMultiKueue(configapi.MultiKueueDispatcherModeWaitTime)); err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}},
		utiltestingapi.MakeClusterQueue("cq").Obj(),
		utiltestingapi.MakeLocalQueue("lq", "team-a").ClusterQueue("cq").Obj(),
	} {
		if err := cp.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	cmd := func(args ...string) (string, error) {
		var out bytes.Buffer
		c := NewCommand()
		c.SetArgs(append([]string{"--kubeconfig", cp.Kubeconfig, "-n", "team-a"}, args...))
		c.SetOut(&out)
		c.SetErr(&out)
		err := c.ExecuteContext(ctx)
		return out.String(), err
	}
	// The LocalQueue reaches the manager's queues through its informer:
	// asked until it has, for as long as a loaded machine may take.
	deadline := time.Now().Add(2 * time.Minute)
	out, err := cmd("--local-queue", "lq")
	for err != nil && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		out, err = cmd("--local-queue", "lq")
	}
	if err != nil || out != "No workload is being placed on a worker cluster.\n" {
		t.Errorf("dispatched --local-queue lq = %q, %v", out, err)
	}
	if out, err := cmd("--local-queue", "lq", "-o", "json"); err != nil || !strings.Contains(out, `"items": []`) {
		t.Errorf("dispatched -o json = %q, %v; want an empty items list", out, err)
	}
	if _, err := cmd("--local-queue", "missing"); err == nil || !strings.Contains(err.Error(), "team-a/missing") || !strings.Contains(err.Error(), "not found") {
		t.Errorf("dispatched --local-queue missing: error %v, want one naming team-a/missing, not found", err)
	}
	if _, err := cmd(); err == nil || !strings.Contains(err.Error(), "local-queue") {
		t.Errorf("dispatched without --local-queue: error %v, want one naming the flag", err)
	}
}
