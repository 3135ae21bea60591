package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	kueueclientset "sigs.k8s.io/kueue/client-go/clientset/versioned"
	"sigs.k8s.io/kueue/pkg/metrics"
	"sigs.k8s.io/kueue/pkg/scheduler/waittime/estimator"
	"sigs.k8s.io/kueue/pkg/workload"
	"sigs.k8s.io/kueue/pkg/workload/finish"
	workloadpatching "sigs.k8s.io/kueue/pkg/workload/patching"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/controlplane"
	"github.com/kueue-waittime/kueue-waittime/internal/harness/report"
	"github.com/kueue-waittime/kueue-waittime/internal/harness/scenario"
)

// Harness runs scenarios against a control plane with the patched Kueue
// running in process.
type Harness struct {
	CP *controlplane.ControlPlane
	// Estimator is the running Kueue's wait time estimator, whose
	// published results are sampled.
	Estimator *estimator.Estimator
	// Scores is the estimator's metrics reporter (eval's startKueue installs it):
	// the prediction ledger's scores are read from it.
	Scores *report.ScoreRecorder
	// PollInterval is how often the estimator's published results are
	// sampled for the admissibility labels and the pending counts.
	PollInterval time.Duration
	// Progress receives one line per replica; nil discards.
	Progress io.Writer
	// Live, when set, receives a redrawn table of the first ClusterQueue's
	// pending workloads as the visibility API serves them.
	Live io.Writer
	// Namespace, when set, names the namespace (and the prefix of the
	// cluster-scoped objects) of a scenario with a single replica.
	Namespace string
	// Parallel is how many replicas run at once (0: as the scenario says,
	// else all of them).
	Parallel int
	// Replica, when set, is a second estimator run as a replica that does
	// not schedule (eval's startKueue with a replica): at every poll the P50s it
	// published are compared with Estimator's.
	Replica *estimator.Estimator
	// RefreshBudget is the longest refresh that keeps the estimator's
	// refresh period: a longer one stretches the wait before the next
	// (the estimator's CPU budget). Zero leaves the report without the
	// count of such refreshes.
	RefreshBudget time.Duration
	// KeepObjects leaves each replica's namespace, queues and workloads in
	// place after it ran. Deleting a ClusterQueue clears the estimator's
	// metrics of it, scores included: the demo keeps them while it holds
	// the control plane, for `kueue-waittime score` to read.
	KeepObjects bool
	// AdjustPlan, when set, changes each plan before it runs.
	AdjustPlan func(*scenario.Plan)
}

// replicaP50Difference is |t₁ − t₂| / P50₁ for a workload both estimators
// published a wait for: tᵢ is the admission time their P50 names
// (estimatedAt + P50), P50₁ the scheduling replica's remaining wait at its
// estimate. false when either has no wait, or P50₁ is zero. cq is the
// workload's ClusterQueue.
func replicaP50Difference(scheduling, replica *estimator.Results, cq kueue.ClusterQueueReference, key workload.Reference) (float64, bool) {
	a, ok := scheduling.WorkloadIn(cq, key)
	if !ok || !a.HasWait || a.P50 <= 0 {
		return 0, false
	}
	b, ok := replica.WorkloadIn(cq, key)
	if !ok || !b.HasWait {
		return 0, false
	}
	ta, tb := a.EstimatedAt.Add(a.P50), b.EstimatedAt.Add(b.P50)
	return ta.Sub(tb).Abs().Seconds() / a.P50.Seconds(), true
}

func (h *Harness) progressf(format string, args ...any) {
	if h.Progress != nil {
		fmt.Fprintf(h.Progress, format+"\n", args...)
	}
}

// Run runs every level × seed replica of a scenario, Parallel at a time,
// and scores them.
func (h *Harness) Run(ctx context.Context, spec *scenario.Spec) (*report.Report, error) {
	if h.PollInterval <= 0 {
		h.PollInterval = 200 * time.Millisecond
	}
	if h.Scores == nil || h.Estimator == nil {
		return nil, errors.New("eval: the harness has no estimator or score recorder (start Kueue with startKueue)")
	}
	plans, err := ReplicaPlans(spec, h.AdjustPlan, h.Namespace)
	if err != nil {
		return nil, err
	}
	if err := h.createShared(ctx, spec); err != nil {
		return nil, err
	}
	start, attempts := time.Now(), admissionAttempts()
	refreshesBefore := h.Scores.RefreshCount()
	parallel := cmp.Or(h.Parallel, spec.Parallel, len(plans))
	results, err := runReplicas(ctx, spec.Name, plans, parallel, h.Namespace, "arrivals", h.progressf, func(ctx context.Context, p scenario.Plan, rep scenario.Replica) (*report.ReplicaRun, error) {
		return h.runReplica(ctx, spec, p, rep)
	})
	if err != nil {
		return nil, err
	}
	r := report.Build(spec, results, h.Scores)
	wall := time.Since(start)
	r.WallTime = wall.Round(time.Second).String()
	r.SchedulingCyclesPerSecond = (admissionAttempts() - attempts) / wall.Seconds()
	r.Refreshes = report.SummarizeRefreshes(h.Scores.RefreshesSince(refreshesBefore), h.RefreshBudget)
	return r, nil
}

// runReplicas runs every plan's replica with run, at most parallel at once,
// each in the namespace named for its level and seed (or namespace, when
// set, which the plans then share), and reports each one's start (its
// arrivals counted as what) and end to progressf. It returns the results in
// the order of plans, or the errors of all that failed.
func runReplicas[R any](ctx context.Context, scenarioName string, plans []scenario.Plan, parallel int, namespace, what string,
	progressf func(string, ...any), run func(context.Context, scenario.Plan, scenario.Replica) (R, error)) ([]R, error) {
	results := make([]R, len(plans))
	errs := make([]error, len(plans))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, p := range plans {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			rep := scenario.Replica{Prefix: cmp.Or(namespace, fmt.Sprintf("%s-l%d-s%d", Sanitize(scenarioName), p.LevelIndex, p.SeedIndex))}
			rep.Namespace = rep.Prefix
			progressf("%s: level %.2f seed %d: %d %s over %.0fs", scenarioName, p.Level, p.SeedIndex, len(p.Arrivals), what, p.Span)
			results[i], errs[i] = run(ctx, p, rep)
			if errs[i] == nil {
				progressf("%s: level %.2f seed %d done", scenarioName, p.Level, p.SeedIndex)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return results, nil
}

// ReplicaPlans draws the plan of every level × seed replica of a scenario,
// each changed by adjust when it is set. A fixed namespace takes a single
// replica.
func ReplicaPlans(spec *scenario.Spec, adjust func(*scenario.Plan), namespace string) ([]scenario.Plan, error) {
	var plans []scenario.Plan
	for _, level := range spec.Levels {
		for seed := range spec.NumSeeds() {
			p, err := spec.Plan(level, seed)
			if err != nil {
				return nil, fmt.Errorf("level %v seed %d: %w", level, seed, err)
			}
			if adjust != nil {
				adjust(&p)
			}
			plans = append(plans, p)
		}
	}
	if namespace != "" && len(plans) != 1 {
		return nil, fmt.Errorf("eval: a fixed namespace takes a scenario of one level and one seed, not %d replicas", len(plans))
	}
	return plans, nil
}

// admissionAttempts is Kueue's count of scheduling cycles that tried to
// admit a workload (kueue_admission_attempts_total, every result), read
// from the in-process metric.
func admissionAttempts() float64 {
	ch := make(chan prometheus.Metric)
	go func() {
		metrics.AdmissionAttemptsTotal.Collect(ch)
		close(ch)
	}()
	var total float64
	for m := range ch {
		var pb dto.Metric
		if m.Write(&pb) == nil {
			total += pb.GetCounter().GetValue()
		}
	}
	return total
}

// createShared creates the cluster-scoped objects every replica shares:
// ResourceFlavors and DeviceClasses.
func (h *Harness) createShared(ctx context.Context, spec *scenario.Spec) error {
	for _, rf := range spec.BuildResourceFlavors() {
		if err := client.IgnoreAlreadyExists(h.CP.Client.Create(ctx, rf)); err != nil {
			return fmt.Errorf("creating ResourceFlavor %s: %w", rf.Name, err)
		}
	}
	for _, dc := range spec.BuildDeviceClasses() {
		if err := client.IgnoreAlreadyExists(h.CP.Client.Create(ctx, dc)); err != nil {
			return fmt.Errorf("creating DeviceClass %s: %w", dc.Name, err)
		}
	}
	return nil
}

// runReplica runs one replica in its own namespace with its own
// ClusterQueues, cohorts and priority classes, and returns what it saw.
func (h *Harness) runReplica(ctx context.Context, spec *scenario.Spec, plan scenario.Plan, rep scenario.Replica) (*report.ReplicaRun, error) {
	if err := rep.Validate(spec); err != nil {
		return nil, err
	}
	cl := h.CP.Client
	objects := spec.ReplicaObjects(rep)
	for _, o := range spec.BuildClaimTemplates(rep.Namespace) {
		objects = append(objects, o)
	}
	defer func() {
		if h.KeepObjects {
			return
		}
		bg := context.Background()
		_ = cl.DeleteAllOf(bg, &kueue.Workload{}, client.InNamespace(rep.Namespace))
		for _, o := range slices.Backward(objects) {
			_ = cl.Delete(bg, o)
		}
	}()
	for _, o := range objects {
		if err := cl.Create(ctx, o); err != nil {
			return nil, fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
		}
	}

	rr := &report.ReplicaRun{Plan: plan, Replica: rep, PendingSamples: map[string][]int{}}
	byName := make(map[string]*report.WorkloadRun, len(plan.Arrivals))
	remaining := 0
	for _, a := range plan.Arrivals {
		r := &report.WorkloadRun{Arrival: a, Key: workload.NewReference(rep.Namespace, a.Name)}
		rr.Runs = append(rr.Runs, r)
		byName[a.Name] = r
		if !a.Unfeasible {
			remaining++
		}
	}

	watcher, err := client.NewWithWatch(h.CP.Config, client.Options{Scheme: h.CP.Scheme})
	if err != nil {
		return nil, err
	}

	var mu sync.Mutex
	replicaCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	var replicaErr error
	fail := func(err error) {
		if replicaErr == nil && replicaCtx.Err() == nil {
			replicaErr = err
		}
	}
	// locked runs f under mu, released however f returns.
	locked := func(f func()) {
		mu.Lock()
		defer mu.Unlock()
		f()
	}
	finishAfter := func(r *report.WorkloadRun, generation int, key client.ObjectKey) {
		time.AfterFunc(time.Duration(r.Arrival.Service*float64(time.Second)), func() {
			var current bool
			locked(func() { current = r.Admitted && r.Generation == generation })
			if !current {
				return // evicted meanwhile: it restarts when admitted again
			}
			finished, err := FinishIfRunning(replicaCtx, cl, key)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				fail(fmt.Errorf("finishing %s: %w", key, err))
				return
			}
			if !finished {
				return // evicted meanwhile, as the watch will tell
			}
			if r.Finished {
				return
			}
			r.Finished, r.FinishedAt = true, time.Now()
			remaining--
			if remaining == 0 {
				close(done)
			}
		})
	}
	// observe applies a watched workload's state to its run; the caller
	// holds mu.
	observe := func(wl *kueue.Workload, reserved, evicted bool, now time.Time) {
		r := byName[wl.Name]
		switch {
		case r == nil:
		case r.Finished:
			// Finished, yet seen unfinished: an eviction applied from a
			// copy older than the finish (Kueue's scheduler and a job
			// integration patch the status as the same field owner)
			// removed the Finished condition, and the workload holds its
			// quota again. A job integration finishes it again, since
			// its job is done; so does the harness.
			go func(key client.ObjectKey) {
				if err := FinishAgain(replicaCtx, cl, key); err != nil {
					locked(func() { fail(fmt.Errorf("finishing %s again: %w", key, err)) })
				}
			}(client.ObjectKeyFromObject(wl))
		case reserved && evicted:
			// Evicted (preempted): stop it and give its quota back, as
			// a job integration does once the job's pods are gone.
			if r.Admitted {
				r.Admitted = false
				r.Generation++
			}
			go func(key client.ObjectKey) {
				if err := releaseEvicted(replicaCtx, cl, key); err != nil {
					locked(func() { fail(fmt.Errorf("releasing evicted %s: %w", key, err)) })
				}
			}(client.ObjectKeyFromObject(wl))
		case reserved == r.Admitted:
		case reserved:
			r.Admitted = true
			r.Generation++
			r.Admissions = append(r.Admissions, now)
			if err := scenario.CheckDRAUsage(wl, r.Arrival.DRA); err != nil {
				fail(err)
			}
			finishAfter(r, r.Generation, client.ObjectKeyFromObject(wl))
		default:
			r.Admitted = false
			r.Generation++
		}
	}
	// Admissions and evictions, seen on a watch of the namespace's
	// Workloads, set up again after a fresh List whenever the server ends it
	// (a loaded kube-apiserver closes a watcher that falls behind). An
	// admitted workload is finished after its service time, as a job
	// integration would; an evicted one (preempted) restarts from scratch
	// when admitted again.
	observeWorkload := func(wl *kueue.Workload, now time.Time) {
		if apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			return
		}
		reserved := apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
		evicted := apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted)
		locked(func() { observe(wl, reserved, evicted, now) })
	}
	if err := watchWorkloads(replicaCtx, watcher, rep.Namespace, observeWorkload, func() {
		h.progressf("%s: the server ended the watch of its Workloads: listing and watching again", rep.Prefix)
	}); err != nil {
		return nil, err
	}

	// sample records, from published results, the admissibility of the
	// workloads not labelled yet and the pending counts and, with a
	// replica's results (nil: none), how its P50s of the pending workloads
	// differ; the caller holds mu.
	sample := func(results, replica *estimator.Results) {
		for _, r := range rr.Runs {
			if r.Created.IsZero() {
				continue
			}
			cq := kueue.ClusterQueueReference(rr.Replica.ClusterQueueName(r.Arrival.Queue))
			if r.Label == "" {
				if est, ok := results.WorkloadIn(cq, r.Key); ok {
					r.Label = est.Admissibility.String()
				}
			}
			if replica != nil && !r.Admitted && !r.Finished {
				if d, ok := replicaP50Difference(results, replica, cq, r.Key); ok {
					rr.ReplicaP50Diffs = append(rr.ReplicaP50Diffs, d)
				}
			}
		}
		for _, q := range plan.Queues {
			if m, ok := results.Queue(kueue.ClusterQueueReference(rep.ClusterQueueName(q.Name))); ok {
				rr.PendingSamples[q.Name] = append(rr.PendingSamples[q.Name], m.PendingWorkloads-m.UnfeasibleWorkloads)
			}
		}
	}
	// The estimator's published results, sampled: the admissibility each
	// workload was given and the pending counts (for Little's law).
	go func() {
		t := time.NewTicker(h.PollInterval)
		defer t.Stop()
		for {
			select {
			case <-replicaCtx.Done():
				return
			case <-t.C:
			}
			results := h.Estimator.Results()
			var replica *estimator.Results
			if h.Replica != nil {
				replica = h.Replica.Results()
			}
			locked(func() { sample(results, replica) })
		}
	}()
	if h.Live != nil && len(plan.Queues) > 0 {
		go h.liveTable(replicaCtx, rep.ClusterQueueName(plan.Queues[0].Name), rr, &mu)
	}

	rr.Start = time.Now()
	for arrivals := plan.Arrivals; len(arrivals) > 0; {
		burst := simultaneousArrivals(arrivals)
		arrivals = arrivals[len(burst):]
		due := rr.Start.Add(time.Duration(burst[0].Offset * float64(time.Second)))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Until(due)):
		}
		create := func(a scenario.Arrival) error {
			wl := spec.BuildWorkload(rep, a)
			locked(func() { byName[a.Name].Created = time.Now() })
			if err := cl.Create(ctx, wl); err != nil {
				return fmt.Errorf("creating workload %s: %w", a.Name, err)
			}
			return nil
		}
		if err := createConcurrently(burst, burstCreators, create); err != nil {
			return nil, err
		}
	}
	// The last arrival plus five minutes to drain: a replica whose
	// workloads are still unfinished then is stuck, not slow.
	timeout := time.Until(rr.Start.Add(time.Duration(plan.Span*float64(time.Second)))) + 5*time.Minute
	var waiting bool
	locked(func() { waiting = remaining > 0 })
	if waiting {
		select {
		case <-done:
		case <-time.After(timeout):
			mu.Lock()
			defer mu.Unlock()
			return nil, fmt.Errorf("replica %s: %d workloads still unfinished five minutes after the last arrival, e.g. %s", rep.Prefix, remaining, stuckRuns(rr.Runs))
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	cancel()
	mu.Lock()
	defer mu.Unlock()
	if replicaErr != nil {
		return nil, replicaErr
	}
	return rr, nil
}

// FinishIfRunning marks a workload Finished, as a job integration does
// when its job succeeds, unless it no longer holds its quota or was
// evicted (then it is not running: false). Kueue writes the same object,
// so a conflict is retried on a fresh copy.
func FinishIfRunning(ctx context.Context, cl client.Client, key client.ObjectKey) (bool, error) {
	return finishIf(ctx, cl, key, func(wl *kueue.Workload) bool {
		return apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) &&
			!apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted)
	})
}

// FinishAgain marks a workload the harness had finished Finished again
// (see the caller), on a fresh copy, unless it is finished already.
func FinishAgain(ctx context.Context, cl client.Client, key client.ObjectKey) error {
	_, err := finishIf(ctx, cl, key, func(*kueue.Workload) bool { return true })
	return err
}

// finishIf marks a workload Finished, as a job integration does when its
// job succeeds, if ok says so of a fresh copy (false, nil otherwise, or
// once ctx is done). Kueue writes the same object, so a conflict is
// retried on a fresh copy.
func finishIf(ctx context.Context, cl client.Client, key client.ObjectKey, ok func(*kueue.Workload) bool) (bool, error) {
	finished := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var wl kueue.Workload
		if err := cl.Get(ctx, key, &wl); err != nil {
			return err
		}
		if !ok(&wl) {
			return nil
		}
		if err := finish.Finish(ctx, cl, &wl, "Succeeded", "finished by the evaluation harness", clock.RealClock{}); err != nil {
			return err
		}
		finished = true
		return nil
	})
	if ctx.Err() != nil {
		return false, nil
	}
	return finished, err
}

// releaseEvicted clears the quota reservation of an evicted workload and
// marks it requeued when it was preempted, as Kueue's job reconciler does
// once the job is stopped; Kueue then queues it again. Kueue writes the
// same object, so a conflict is retried on a fresh copy.
func releaseEvicted(ctx context.Context, cl client.Client, key client.ObjectKey) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var wl kueue.Workload
		if err := cl.Get(ctx, key, &wl); err != nil {
			return err
		}
		evicted := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
		if evicted == nil || evicted.Status != metav1.ConditionTrue {
			return nil
		}
		return workloadpatching.PatchAdmissionStatus(ctx, cl, &wl, clock.RealClock{}, func(wl *kueue.Workload) (bool, error) {
			if !workload.HasQuotaReservation(wl) {
				return false, nil
			}
			requeue := evicted.Reason == kueue.WorkloadEvictedByPreemption
			updated := workload.SetRequeuedCondition(wl, evicted.Reason, evicted.Message, requeue)
			reason := workload.UnadmittedWorkloadReasonWithFallback(kueue.WorkloadQuotaReservedReasonPendingEvaluation, kueue.WorkloadPending) //nolint:staticcheck // as Kueue's job reconciler
			if workload.UnsetQuotaReservationWithCondition(wl, reason, evicted.Message, time.Now()) {
				updated = true
			}
			return updated, nil
		})
	})
	if ctx.Err() != nil || apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// liveTable shows the pending workloads of a ClusterQueue as the
// visibility API serves them until ctx is done (see renderLive).
func (h *Harness) liveTable(ctx context.Context, cq string, rr *report.ReplicaRun, mu *sync.Mutex) {
	vis, err := kueueclientset.NewForConfig(h.CP.Config)
	if err != nil {
		return
	}
	// Redrawn in place on a terminal; into a log, a line every 5 s.
	period := 500 * time.Millisecond
	if !isTerminal(h.Live) {
		period = 5 * time.Second
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		summary, err := vis.VisibilityV1beta2().ClusterQueues().GetPendingWorkloadsSummary(ctx, cq, metav1.GetOptions{})
		if err != nil {
			continue
		}
		func() {
			mu.Lock()
			defer mu.Unlock()
			renderLive(h.Live, cq, summary, rr.Runs, time.Now())
		}()
	}
}

// Sanitize turns s into a name Kubernetes accepts as a namespace or object
// name prefix: lower-case letters and digits, every other rune a hyphen,
// no hyphen at either end, at most 30 characters.
func Sanitize(s string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 30 {
		out = out[:30]
	}
	return out
}

// stuckRuns names up to five feasible workloads of runs that have not
// finished, each with how often it was admitted and whether it holds quota
// now: what a replica's error shows when its workloads do not drain.
func stuckRuns(runs []*report.WorkloadRun) string {
	var stuck []string
	for _, r := range runs {
		if !r.Arrival.Unfeasible && !r.Finished && len(stuck) < 5 {
			stuck = append(stuck, fmt.Sprintf("%s (admitted %d times, holding quota: %t)", r.Arrival.Name, len(r.Admissions), r.Admitted))
		}
	}
	return strings.Join(stuck, ", ")
}
