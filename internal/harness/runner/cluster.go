package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	visibility "sigs.k8s.io/kueue/apis/visibility/v1beta2"
	kueueclientset "sigs.k8s.io/kueue/client-go/clientset/versioned"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/cluster"
	"github.com/kueue-waittime/kueue-waittime/internal/harness/report"
	"github.com/kueue-waittime/kueue-waittime/internal/harness/scenario"
)

// ClusterHarness runs scenarios on a local cluster (internal/harness/cluster) where the
// patched manager runs as its manifests deploy it. Every arrival is a
// batch/v1 Job submitted through its LocalQueue: Kueue's job integration
// suspends it and creates its Workload, Kueue's scheduler admits it, the
// Job controller creates its pod, kube-scheduler binds the pod to a KWOK
// node, and KWOK runs it for the arrival's service time
// (cluster.RunDurationAnnotation) before it Succeeds and Kueue finishes the
// Workload. The harness only submits and watches: nothing is finished,
// evicted or requeued by it. The scores are the manager's own prediction
// ledger, which the caller reads from its metrics endpoint after the run.
type ClusterHarness struct {
	Cluster *cluster.Cluster
	// PollInterval is how often the visibility API is read.
	PollInterval time.Duration
	// Progress receives one line per replica; nil discards.
	Progress io.Writer
	// Live, when set, receives the first ClusterQueue's pending workloads
	// as the visibility API serves them (see renderLive).
	Live io.Writer
	// Namespace, when set, names the namespace of a single replica.
	Namespace string
	// AdjustPlan, when set, changes each plan before it runs.
	AdjustPlan func(*scenario.Plan)
}

// ClusterReplicaResult is what one (level, seed) replica's Jobs did.
type ClusterReplicaResult struct {
	Level     float64 `json:"level"`
	Seed      int     `json:"seed"`
	Namespace string  `json:"namespace"`
	// Jobs were submitted, Unfeasible of them asking for more than their
	// ClusterQueue can ever hold.
	Jobs int `json:"jobs"`
	// JobsCompleted have the Complete condition; PodsSucceeded is their
	// pods that Succeeded on a KWOK node.
	JobsCompleted int `json:"jobsCompleted"`
	PodsSucceeded int `json:"podsSucceededOnKWOKNodes"`
	// Admissions are the quota reservations the watch saw (more than the
	// feasible Jobs when some were preempted and admitted again).
	Admissions int `json:"admissions"`
	// EstimatesSeen is the Jobs whose pending Workload the visibility API
	// served a wait estimate (a P50) for at least once.
	EstimatesSeen int `json:"estimatesSeen"`
	// ObservedMeanWait is the mean time from a feasible Job's creation to
	// its Workload's first quota reservation, in seconds.
	ObservedMeanWait float64 `json:"observedMeanWaitSeconds"`
	// Unfeasible are the Jobs planned to be Unfeasible, as the cluster
	// labelled them.
	Unfeasible []UnfeasibleJob `json:"unfeasible"`
}

// UnfeasibleJob is a Job that can never be admitted: what the visibility
// API said of it and why.
type UnfeasibleJob struct {
	Job string `json:"job"`
	// Admissibility is the label the visibility API served for it.
	Admissibility string `json:"admissibility"`
	// Reason is the estimate's reason (the Workload's QuotaReserved
	// condition message when the API gave none).
	Reason string `json:"reason"`
}

// StartClusterKueue starts a local cluster in dir (emptied first) with the
// manager deployed from the manifests, and returns a token that may read
// the manager's metrics: a ServiceAccount bound to the manifests'
// metrics-reader ClusterRole, as a Prometheus would be.
func StartClusterKueue(ctx context.Context, dir string, progress io.Writer) (*cluster.Cluster, *cluster.Manager, string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, "", err
	}
	// A previous run's state (certificates, logs) is not reused.
	if err := os.RemoveAll(abs); err != nil {
		return nil, nil, "", err
	}
	start := time.Now()
	fmt.Fprintln(progress, "starting kube-apiserver, etcd, kube-controller-manager, kube-scheduler and KWOK nodes…")
	c, err := cluster.Start(ctx, cluster.Options{Dir: abs})
	if err != nil {
		return nil, nil, "", err
	}
	fmt.Fprintf(progress, "nodes Ready after %s; deploying Kueue from the manifests (the image's /manager, WaitTimeEstimation on)…\n", time.Since(start).Round(time.Second))
	managers, err := c.DeployKueue(ctx, cluster.KueueOptions{})
	if err != nil {
		return nil, nil, "", errors.Join(err, c.Stop())
	}
	const scorer, metricsReaderRole = "kueue-waittime-scorer", "kueue-metrics-reader"
	for _, o := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: scorer, Namespace: "kueue-system"}},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: scorer},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: metricsReaderRole},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: scorer, Namespace: "kueue-system"}},
		},
	} {
		if err := c.Client.Create(ctx, o); err != nil {
			return nil, nil, "", errors.Join(fmt.Errorf("creating %T %s: %w", o, o.GetName(), err), c.Stop())
		}
	}
	token, err := c.ServiceAccountToken(ctx, "kueue-system", scorer)
	if err != nil {
		return nil, nil, "", errors.Join(err, c.Stop())
	}
	fmt.Fprintf(progress, "Kueue ready after %s.\n", time.Since(start).Round(time.Second))
	return c, managers[0], token, nil
}

func (h *ClusterHarness) progressf(format string, args ...any) {
	if h.Progress != nil {
		fmt.Fprintf(h.Progress, format+"\n", args...)
	}
}

// Run runs every level × seed replica of a scenario at once (or Parallel
// at a time), each in its own namespace with its own queues, and returns
// what each replica's Jobs did and when they started (the manager's
// metrics, read after the run, score them).
func (h *ClusterHarness) Run(ctx context.Context, spec *scenario.Spec) ([]ClusterReplicaResult, time.Time, error) {
	if h.PollInterval <= 0 {
		h.PollInterval = time.Second
	}
	plans, err := ReplicaPlans(spec, h.AdjustPlan, h.Namespace)
	if err != nil {
		return nil, time.Time{}, err
	}
	for _, p := range plans {
		for _, a := range p.Arrivals {
			if a.DRA != nil {
				return nil, time.Time{}, fmt.Errorf("eval: scenario %s claims devices through DRA, which the cluster mode does not submit as Jobs", spec.Name)
			}
		}
	}
	for _, rf := range spec.BuildResourceFlavors() {
		if err := client.IgnoreAlreadyExists(h.Cluster.Client.Create(ctx, rf)); err != nil {
			return nil, time.Time{}, fmt.Errorf("creating ResourceFlavor %s: %w", rf.Name, err)
		}
	}
	start := time.Now()
	parallel := cmp.Or(spec.Parallel, len(plans))
	results, err := runReplicas(ctx, spec.Name, plans, parallel, h.Namespace, "Jobs", h.progressf, func(ctx context.Context, p scenario.Plan, rep scenario.Replica) (ClusterReplicaResult, error) {
		return h.runReplica(ctx, spec, p, rep)
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	return results, start, nil
}

// jobOf is the name of the Job that owns a Workload, "" for none.
func jobOf(owners []metav1.OwnerReference) string {
	for _, o := range owners {
		if o.Kind == "Job" {
			return o.Name
		}
	}
	return ""
}

// runReplica runs one replica's Jobs in its own namespace and queues, and
// returns what they did. Its objects stay: deleting a ClusterQueue would
// clear the manager's metrics of it, which are read after every replica.
func (h *ClusterHarness) runReplica(ctx context.Context, spec *scenario.Spec, plan scenario.Plan, rep scenario.Replica) (ClusterReplicaResult, error) {
	res := ClusterReplicaResult{Level: plan.Level, Seed: plan.SeedIndex, Namespace: rep.Namespace, Jobs: len(plan.Arrivals)}
	if err := rep.Validate(spec); err != nil {
		return res, err
	}
	cl := h.Cluster.Client
	objects := spec.ReplicaObjects(rep)
	for _, o := range objects {
		if err := cl.Create(ctx, o); err != nil {
			return res, fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
		}
	}
	vis, err := kueueclientset.NewForConfig(h.Cluster.Config)
	if err != nil {
		return res, err
	}

	var mu sync.Mutex
	// locked runs f under mu, released however f returns.
	locked := func(f func()) {
		mu.Lock()
		defer mu.Unlock()
		f()
	}
	runs := make([]*report.WorkloadRun, 0, len(plan.Arrivals))
	byJob := make(map[string]*report.WorkloadRun, len(plan.Arrivals))
	remaining := 0
	for _, a := range plan.Arrivals {
		r := &report.WorkloadRun{Arrival: a}
		runs = append(runs, r)
		byJob[a.Name] = r
		if !a.Unfeasible {
			remaining++
		}
	}
	done := make(chan struct{})
	replicaCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var replicaErr error
	fail := func(err error) {
		if replicaErr == nil && replicaCtx.Err() == nil {
			replicaErr = err
		}
	}
	// observe applies a Workload's state to its Job's run; the caller
	// holds mu.
	observe := func(wl *kueue.Workload, now time.Time) {
		r := byJob[jobOf(wl.OwnerReferences)]
		if r == nil || r.Finished {
			return
		}
		if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished); c != nil && c.Status == metav1.ConditionTrue {
			if c.Reason != kueue.WorkloadFinishedReasonSucceeded {
				fail(fmt.Errorf("Job %s/%s finished %s: %s", rep.Namespace, r.Arrival.Name, c.Reason, c.Message))
			}
			r.Finished, r.Admitted = true, false
			if remaining--; remaining == 0 {
				close(done)
			}
			return
		}
		reserved := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
		switch {
		case reserved != nil && reserved.Status == metav1.ConditionTrue:
			if !r.Admitted {
				r.Admitted = true
				r.Admissions = append(r.Admissions, now)
			}
		default:
			r.Admitted = false
			if reserved != nil && strings.Contains(reserved.Message, "Unfeasible") && r.Reason == "" {
				r.Reason = reserved.Message
			}
		}
	}
	// Admissions and completions, from a watch of the namespace's
	// Workloads, set up again (after a fresh List) if the server ends it.
	watcher, err := client.NewWithWatch(h.Cluster.Config, client.Options{Scheme: h.Cluster.Scheme})
	if err != nil {
		return res, err
	}
	observeWorkload := func(wl *kueue.Workload, now time.Time) { locked(func() { observe(wl, now) }) }
	if err := watchWorkloads(replicaCtx, watcher, rep.Namespace, observeWorkload, func() {}); err != nil {
		return res, err
	}

	// The visibility API, read as a user would: which Jobs were given an
	// estimate, the Unfeasible ones' reasons, and the live table.
	go func() {
		t := time.NewTicker(h.PollInterval)
		defer t.Stop()
		var lastDrawn time.Time
		for {
			select {
			case <-replicaCtx.Done():
				return
			case <-t.C:
			}
			for qi, q := range plan.Queues {
				cq := rep.ClusterQueueName(q.Name)
				summary, err := vis.VisibilityV1beta2().ClusterQueues().GetPendingWorkloadsSummary(replicaCtx, cq, metav1.GetOptions{})
				if err != nil {
					continue
				}
				now := time.Now()
				locked(func() {
					for i := range summary.Items {
						item := &summary.Items[i]
						r, est := byJob[jobOf(item.OwnerReferences)], item.WaitTimeEstimate
						if r == nil || est == nil {
							continue
						}
						if r.Label == "" {
							r.Label = string(est.Admissibility)
						}
						if est.P50WaitMilliseconds != nil {
							r.Estimated = true
						}
						if est.Admissibility == visibility.AdmissibilityUnfeasible && est.Reason != "" {
							r.Reason = est.Reason
						}
					}
					if qi == 0 && h.Live != nil && (isTerminal(h.Live) || now.Sub(lastDrawn) >= 5*time.Second) {
						renderLive(h.Live, cq, summary, runs, now)
						lastDrawn = now
					}
				})
			}
		}
	}()

	begin := time.Now()
	for _, a := range plan.Arrivals {
		due := begin.Add(time.Duration(a.Offset * float64(time.Second)))
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(time.Until(due)):
		}
		job, err := spec.BuildJob(rep, a)
		if err != nil {
			return res, err
		}
		locked(func() { byJob[a.Name].Created = time.Now() })
		if err := cl.Create(ctx, job); err != nil {
			return res, fmt.Errorf("creating Job %s/%s: %w", rep.Namespace, a.Name, err)
		}
	}
	// The last arrival plus five minutes to drain: Jobs still unfinished
	// then are stuck, not slow.
	timeout := time.Until(begin.Add(time.Duration(plan.Span*float64(time.Second)))) + 5*time.Minute
	var waiting bool
	locked(func() { waiting = remaining > 0 })
	if waiting {
		select {
		case <-done:
		case <-time.After(timeout):
			mu.Lock()
			defer mu.Unlock()
			return res, fmt.Errorf("replica %s: %d Jobs still unfinished five minutes after the last arrival, e.g. %s (the cluster's logs are in %s)",
				rep.Prefix, remaining, stuckRuns(runs), filepath.Join(h.Cluster.Dir, "logs"))
		case <-ctx.Done():
			return res, ctx.Err()
		}
	}
	// The Unfeasible Jobs stay pending: give the estimator a few refreshes
	// to have labelled them, if it has not yet.
	unlabelled := func() bool {
		n := false
		locked(func() {
			for _, r := range runs {
				n = n || r.Arrival.Unfeasible && r.Reason == ""
			}
		})
		return n
	}
	for wait := time.Now().Add(30 * time.Second); unlabelled() && time.Now().Before(wait); {
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(h.PollInterval):
		}
	}
	cancel()
	if err := h.countCompletions(ctx, rep.Namespace, &res); err != nil {
		return res, err
	}
	mu.Lock()
	defer mu.Unlock()
	if replicaErr != nil {
		return res, replicaErr
	}
	var waits []float64
	for _, r := range runs {
		res.Admissions += len(r.Admissions)
		if r.Estimated {
			res.EstimatesSeen++
		}
		if r.Arrival.Unfeasible {
			res.Unfeasible = append(res.Unfeasible, UnfeasibleJob{Job: r.Arrival.Name, Admissibility: r.Label, Reason: r.Reason})
			continue
		}
		if len(r.Admissions) > 0 {
			waits = append(waits, r.Admissions[0].Sub(r.Created).Seconds())
		}
	}
	if len(waits) > 0 {
		var sum float64
		for _, w := range waits {
			sum += w
		}
		res.ObservedMeanWait = sum / float64(len(waits))
	}
	return res, nil
}

// countCompletions counts the namespace's complete Jobs and their pods
// that Succeeded on a KWOK node.
func (h *ClusterHarness) countCompletions(ctx context.Context, namespace string, res *ClusterReplicaResult) error {
	var jobs batchv1.JobList
	if err := h.Cluster.Client.List(ctx, &jobs, client.InNamespace(namespace)); err != nil {
		return err
	}
	for _, j := range jobs.Items {
		if slices.ContainsFunc(j.Status.Conditions, func(c batchv1.JobCondition) bool {
			return c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue
		}) {
			res.JobsCompleted++
		}
	}
	var pods corev1.PodList
	if err := h.Cluster.Client.List(ctx, &pods, client.InNamespace(namespace)); err != nil {
		return err
	}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodSucceeded && strings.HasPrefix(p.Spec.NodeName, "kwok-") {
			res.PodsSucceeded++
		}
	}
	return nil
}
