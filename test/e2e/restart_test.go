package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	visibilityapi "sigs.k8s.io/kueue/apis/visibility/v1beta2"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/cluster"
)

// refreshPeriod is the manifests' waitTimeEstimation.refreshPeriod.
const refreshPeriod = time.Second

// cqViewerRole is the manifests' ClusterRole that may read the ClusterQueue
// pending workloads endpoint.
const cqViewerRole = "kueue-pending-workloads-cq-viewer-role"

// pendingReaderToken returns the token of a ServiceAccount that may read
// every ClusterQueue's pending workloads, for reading a manager's own
// visibility server.
func pendingReaderToken(ctx context.Context, t *testing.T) string {
	t.Helper()
	const ns, name = "e2e-readers", "pending-reader"
	var sa corev1.ServiceAccount
	if err := cl.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &sa); err != nil {
		create(ctx, t,
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}},
			&rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "e2e-pending-reader"},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: cqViewerRole},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
			})
	}
	token, err := cl.ServiceAccountToken(ctx, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// pendingFrom reads a ClusterQueue's pending workloads from one manager's
// own visibility server.
func pendingFrom(ctx context.Context, m *cluster.Manager, token, clusterQueue string) (*visibilityapi.PendingWorkloadsSummary, error) {
	status, body, err := m.GetVisibility(ctx, token, "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/"+clusterQueue+"/pendingworkloads")
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, errorStatus(status, body)
	}
	var s visibilityapi.PendingWorkloadsSummary
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// forecasts checks that a summary has want pending workloads, each with a
// forecast (method Forecast, P50 and P90).
func forecasts(s *visibilityapi.PendingWorkloadsSummary, want int) error {
	if len(s.Items) != want {
		return fmt.Errorf("%d pending, want %d", len(s.Items), want)
	}
	for _, item := range s.Items {
		est := item.WaitTimeEstimate
		if est == nil || est.Method != visibilityapi.WaitTimeEstimationMethodForecast || est.P50WaitMilliseconds == nil || est.P90WaitMilliseconds == nil {
			return fmt.Errorf("%s: estimate %+v, want a forecast", item.Name, est)
		}
	}
	return nil
}

// submitAndFinish submits n Jobs of one CPU that run for runFor and waits
// until they all Succeed.
func submitAndFinish(ctx context.Context, t *testing.T, user client.Client, ns, prefix string, n int, runFor time.Duration) {
	t.Helper()
	for i := range n {
		if err := user.Create(ctx, job(prefix+strconv.Itoa(i), ns, "1", 0, runFor)); err != nil {
			t.Fatal(err)
		}
	}
	eventually(ctx, t, 3*time.Minute, prefix+"* Jobs Succeed", func(ctx context.Context) error {
		return jobsComplete(ctx, user, ns, prefix, n)
	})
}

func jobsComplete(ctx context.Context, c client.Client, ns, prefix string, n int) error {
	for i := range n {
		var j batchv1.Job
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: prefix + strconv.Itoa(i)}, &j); err != nil {
			return err
		}
		if !jobComplete(&j) {
			return fmt.Errorf("Job %s: succeeded %d, active %d", j.Name, j.Status.Succeeded, j.Status.Active)
		}
	}
	return nil
}

// TestManagerKilledMidRunRecoversWithNothingLost kills the manager with
// SIGKILL while Jobs run and wait, and starts it again: its estimates are
// back, as forecasts from the completions it warm-starts from the API (not
// from memory): their ClusterQueue's model has a measured mean service
// time, which needs minServiceSamples (10) completions, when at most the
// six Jobs of the run can have finished since the kill; every Job then
// Succeeds exactly once (one pod, no failure, no eviction). How long after
// its readiness the forecasts came back is logged, in refresh periods: an
// upper bound on it would hold only on an idle machine.
func TestManagerKilledMidRunRecoversWithNothingLost(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	const ns = "team-restart"
	cpuTenant(ctx, t, ns, "4")
	user, _, _ := researcher(ctx, t, "carol", ns)
	token := pendingReaderToken(ctx, t)

	// A history of completions: more than minServiceSamples (10), so the
	// forecast runs on observed service times.
	submitAndFinish(ctx, t, user, ns, "history-", 12, 2*time.Second)
	const running, pending = 4, 2
	for i := range running + pending {
		if err := user.Create(ctx, job("run-"+strconv.Itoa(i), ns, "1", 0, 30*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	eventually(ctx, t, time.Minute, "forecasts before the kill", func(ctx context.Context) error {
		s, err := pendingFrom(ctx, manager, token, ns)
		if err != nil {
			return err
		}
		return forecasts(s, pending)
	})

	if err := manager.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if err := manager.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := manager.WaitReady(ctx, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	ready := time.Now()
	var first time.Time
	var back *visibilityapi.PendingWorkloadsSummary
	var last error
	for first.IsZero() && time.Since(ready) < time.Minute {
		s, err := pendingFrom(ctx, manager, token, ns)
		if err == nil {
			err = forecasts(s, pending)
		}
		if err == nil {
			first, back = time.Now(), s
			break
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	if first.IsZero() {
		t.Fatalf("no forecasts within a minute of the restarted manager's readiness: %v", last)
	}
	d := first.Sub(ready)
	t.Logf("killed %s before readiness; forecasts %s (%.1f refresh periods) after it", ready.Sub(killed).Round(time.Millisecond),
		d.Round(time.Millisecond), d.Seconds()/refreshPeriod.Seconds())
	// The estimator warm-starts before its first refresh, so every forecast
	// it publishes is of the warm-started statistics: the 12 completions of
	// the history, as no more than the running+pending Jobs of the run
	// (fewer than minServiceSamples) can have finished since the kill.
	if m := back.QueueModel; m == nil || m.MeanServiceMilliseconds == nil {
		t.Errorf("the first forecasts after the restart come with the queue model %+v, want a measured mean service time: "+
			"the %d completions of the history were not warm-started (at most %d Jobs can have finished since the kill)", m, 12, running+pending)
	}

	eventually(ctx, t, 3*time.Minute, "every Job Succeeds after the restart", func(ctx context.Context) error {
		return jobsComplete(ctx, user, ns, "run-", running+pending)
	})
	checkAdmittedOnce(ctx, t, ns, 12+running+pending)
}

// TestAPIServerRestartUnderLoad kills kube-apiserver while Jobs run and
// wait and starts it again: every component reconnects (a manager that
// exits because it could not renew its leader lease would be restarted as
// its pod is; the test logs how often), forecasts are served again through
// the aggregation layer, and every Job Succeeds exactly once.
func TestAPIServerRestartUnderLoad(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	const ns = "team-apiserver"
	cpuTenant(ctx, t, ns, "2")
	user, userVisibility, _ := researcher(ctx, t, "erin", ns)
	submitAndFinish(ctx, t, user, ns, "history-", 10, 2*time.Second)
	const jobs = 8
	for i := range jobs {
		if err := user.Create(ctx, job("run-"+strconv.Itoa(i), ns, "1", 0, 8*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	eventually(ctx, t, time.Minute, "Jobs running and waiting", func(ctx context.Context) error {
		s, err := userVisibility.VisibilityV1beta2().LocalQueues(ns).GetPendingWorkloadsSummary(ctx, "lq", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(s.Items) < 2 {
			return fmt.Errorf("%d pending", len(s.Items))
		}
		return nil
	})
	start := time.Now()
	if err := cl.RestartAPIServer(); err != nil {
		t.Fatal(err)
	}
	t.Logf("kube-apiserver restarted in %s", time.Since(start).Round(time.Millisecond))
	eventually(ctx, t, 2*time.Minute, "forecasts through the aggregation layer after the restart", func(ctx context.Context) error {
		s, err := userVisibility.VisibilityV1beta2().LocalQueues(ns).GetPendingWorkloadsSummary(ctx, "lq", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(s.Items) == 0 {
			return nil // the queue drained meanwhile: nothing left to forecast
		}
		return forecasts(s, len(s.Items))
	})
	eventually(ctx, t, 4*time.Minute, "every Job Succeeds after the restart", func(ctx context.Context) error {
		return jobsComplete(ctx, user, ns, "run-", jobs)
	})
	checkAdmittedOnce(ctx, t, ns, 10+jobs)
	t.Logf("the manager was restarted %d times (it exits when it cannot renew its leader lease)", manager.Restarts())
}

// checkAdmittedOnce checks that every Job of a namespace Succeeded with one
// pod, no failed one, and that no Workload was ever evicted.
func checkAdmittedOnce(ctx context.Context, t *testing.T, ns string, jobs int) {
	t.Helper()
	var jl batchv1.JobList
	var pods corev1.PodList
	var wls kueue.WorkloadList
	for _, list := range []client.ObjectList{&jl, &pods, &wls} {
		if err := cl.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
	}
	if len(jl.Items) != jobs || len(wls.Items) != jobs {
		t.Errorf("%d Jobs and %d Workloads, want %d of each", len(jl.Items), len(wls.Items), jobs)
	}
	podsOf := map[string]int{}
	for _, p := range pods.Items {
		podsOf[p.Labels[batchv1.JobNameLabel]]++
	}
	for _, j := range jl.Items {
		if j.Status.Succeeded != 1 || j.Status.Failed != 0 || podsOf[j.Name] != 1 {
			t.Errorf("Job %s: succeeded %d, failed %d, %d pods; want 1, 0, 1", j.Name, j.Status.Succeeded, j.Status.Failed, podsOf[j.Name])
		}
	}
	for _, w := range wls.Items {
		if w.Status.SchedulingStats != nil && len(w.Status.SchedulingStats.Evictions) > 0 {
			t.Errorf("Workload %s was evicted: %+v", w.Name, w.Status.SchedulingStats.Evictions)
		}
	}
}

// TestMalformedWaitTimeEstimationStopsTheManager starts a manager whose
// Configuration has a negative refresh period: it exits at start and says
// which field is wrong.
func TestMalformedWaitTimeEstimationStopsTheManager(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	m, err := cl.AddManager(ctx, cluster.RestartNever, func(cfg map[string]any) {
		cfg["waitTimeEstimation"].(map[string]any)["refreshPeriod"] = "-1s"
	})
	if err != nil {
		t.Fatal(err)
	}
	log, exited := m.Exited(time.Minute)
	if !exited {
		t.Fatal("the manager with refreshPeriod -1s is still running after a minute")
	}
	if want := "waitTimeEstimation.refreshPeriod"; !strings.Contains(log, want) {
		t.Errorf("the manager's log does not name %s:\n%s", want, log)
	}
}
