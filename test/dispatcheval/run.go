package dispatcheval

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	kueueclientset "sigs.k8s.io/kueue/client-go/clientset/versioned"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
	testingjob "sigs.k8s.io/kueue/pkg/util/testingjobs/job"
	"sigs.k8s.io/kueue/pkg/workload/finish"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/controlplane"
)

// Loss stops a worker during a run.
type Loss struct {
	Worker string
	// At is when, from the start of the run.
	At time.Duration
}

// LossReport is what happened around a worker's loss.
type LossReport struct {
	Worker string `json:"worker"`
	// AtSeconds is when the worker was stopped, from the start of the run;
	// GoneSeconds when its API server stopped answering.
	AtSeconds   float64 `json:"atSeconds"`
	GoneSeconds float64 `json:"goneSeconds"`
	// RunningThere are the Jobs reserved on the worker and not finished
	// when it was stopped; PendingThere those copied there (nominated) and
	// not reserved anywhere then.
	RunningThere []string `json:"runningThere"`
	PendingThere []string `json:"pendingThere"`
	// ReadmittedElsewhere are the Jobs of either list later reserved on
	// another worker, NeverFinished the Jobs not finished on the manager
	// when the run ended.
	ReadmittedElsewhere []string `json:"readmittedElsewhere"`
	NeverFinished       []string `json:"neverFinished"`
	// WaitsAfter are the waits (seconds) of the Jobs created after the
	// stop, WaitsBefore of those created before it.
	WaitsBefore WaitStats `json:"waitsBefore"`
	WaitsAfter  WaitStats `json:"waitsAfter"`
}

// jobObservation is what the watches saw of one Job's Workloads.
type jobObservation struct {
	arrival  Arrival
	workload string    // the manager's Workload name
	created  time.Time // its Workload first seen on the manager
	// reserved and admitted: when each worker's copy was first seen
	// holding a quota reservation, and admitted.
	reserved map[string]time.Time
	admitted map[string]time.Time
	copied   map[string]bool
	// jobOn: the workers where MultiKueue created the Job itself.
	jobOn map[string]bool
	// cluster is the worker the manager's Workload last named in
	// status.clusterName; finished whether the manager's Workload finished.
	cluster  string
	finished bool
}

// backgroundObservation is one background workload's.
type backgroundObservation struct {
	arrival  Arrival
	created  time.Time
	reserved time.Time
	finished bool
}

// runState is a run's observations, under mu.
type runState struct {
	mu         sync.Mutex
	jobs       map[string]*jobObservation // by Job name
	byWorkload map[string]*jobObservation // by the manager's Workload name
	background map[string]*backgroundObservation
	dead       map[string]bool
	start      time.Time
}

// jobName is the Job of a Workload that Kueue's Job integration created:
// it names it job-<job name>-<hash>, and the Jobs here have no dash.
func jobName(workloadName string) string {
	parts := strings.Split(workloadName, "-")
	if len(parts) != 3 || parts[0] != "job" {
		return ""
	}
	return parts[1]
}

// Run submits a plan's Jobs to the manager and its background to the
// workers in namespace (prepared with prepare), finishes every workload a
// worker reserves after its service time, and returns the waits once every
// Job's Workload finished on the manager and every background workload on
// its worker, or when drain has passed after the last submission (then the
// unfinished ones are reported, not waited for). With loss, that worker is
// stopped at loss.At.
func (c *Clusters) Run(ctx context.Context, scenario Scenario, plan Plan, namespace string, drain time.Duration, loss *Loss, progress func(string, ...any)) (*RunResult, *LossReport, error) {
	if err := c.prepare(ctx, namespace, scenario.Workers); err != nil {
		return nil, nil, err
	}
	st := &runState{jobs: map[string]*jobObservation{}, byWorkload: map[string]*jobObservation{}, background: map[string]*backgroundObservation{}, dead: map[string]bool{}}
	for _, a := range plan.Jobs {
		st.jobs[a.Name] = &jobObservation{arrival: a, reserved: map[string]time.Time{}, admitted: map[string]time.Time{}, copied: map[string]bool{}, jobOn: map[string]bool{}}
	}
	for _, bg := range plan.Background {
		for _, a := range bg {
			st.background[a.Name] = &backgroundObservation{arrival: a}
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var errMu sync.Mutex
	var runErr error
	fail := func(err error) {
		errMu.Lock()
		defer errMu.Unlock()
		if runErr == nil && runCtx.Err() == nil {
			runErr = err
		}
	}

	// The manager: when each Job's Workload appears, which worker admits
	// it, whether it finished.
	if err := watchWorkloads(runCtx, c.Manager, namespace, func(wl *kueue.Workload) {
		now := time.Now()
		st.mu.Lock()
		defer st.mu.Unlock()
		j := st.jobs[jobName(wl.Name)]
		if j == nil {
			return
		}
		if j.workload == "" {
			j.workload, j.created = wl.Name, now
			st.byWorkload[wl.Name] = j
		}
		if wl.Status.ClusterName != nil && *wl.Status.ClusterName != "" {
			j.cluster = *wl.Status.ClusterName
		}
		if apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			j.finished = true
		}
	}); err != nil {
		return nil, nil, err
	}
	// Each worker: the copies MultiKueue creates there and their
	// reservations, the background's reservations; whatever is reserved
	// finishes after its service time.
	for _, w := range scenario.Workers {
		cp := c.Workers[w.Name]
		if err := watchWorkloads(runCtx, cp, namespace, func(wl *kueue.Workload) {
			now := time.Now()
			reserved := apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
			admitted := apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted)
			var service time.Duration
			st.mu.Lock()
			defer st.mu.Unlock()
			if bg := st.background[wl.Name]; bg != nil {
				if !reserved || !bg.reserved.IsZero() {
					return
				}
				bg.reserved, service = now, bg.arrival.Service
				time.AfterFunc(service, func() {
					done, err := c.finishIfReserved(runCtx, w.Name, cp, wl.Name, namespace)
					st.mu.Lock()
					defer st.mu.Unlock()
					if err != nil && !st.dead[w.Name] {
						fail(fmt.Errorf("finishing %s on %s: %w", wl.Name, w.Name, err))
					}
					bg.finished = bg.finished || done
				})
				return
			}
			j := st.jobs[jobName(wl.Name)]
			if j == nil {
				return
			}
			j.copied[w.Name] = true
			if admitted {
				if _, ok := j.admitted[w.Name]; !ok {
					j.admitted[w.Name] = now
				}
			}
			if !reserved {
				return
			}
			if _, ok := j.reserved[w.Name]; ok {
				return
			}
			j.reserved[w.Name] = now
			time.AfterFunc(j.arrival.Service, func() {
				// Only the worker MultiKueue chose runs the Job: a copy
				// reserved elsewhere is removed, never finished.
				if !st.waitForCluster(runCtx, j, w.Name) {
					return
				}
				if _, err := c.finishIfReserved(runCtx, w.Name, cp, wl.Name, namespace); err != nil {
					st.mu.Lock()
					defer st.mu.Unlock()
					if !st.dead[w.Name] {
						fail(fmt.Errorf("finishing %s on %s: %w", wl.Name, w.Name, err))
					}
				}
			})
		}); err != nil {
			return nil, nil, err
		}
	}

	// Each worker: the Jobs MultiKueue creates there, only on the worker
	// it chose.
	for _, w := range scenario.Workers {
		if err := watchJobs(runCtx, c.Workers[w.Name], namespace, func(job *batchv1.Job) {
			st.mu.Lock()
			defer st.mu.Unlock()
			if j := st.jobs[job.Name]; j != nil {
				j.jobOn[w.Name] = true
			}
		}); err != nil {
			return nil, nil, err
		}
	}

	type submission struct {
		at     time.Duration
		worker string // "" for the manager
		a      Arrival
	}
	var subs []submission
	for _, a := range plan.Jobs {
		subs = append(subs, submission{a.Offset, "", a})
	}
	for w, bg := range plan.Background {
		for _, a := range bg {
			subs = append(subs, submission{a.Offset, w, a})
		}
	}
	slices.SortStableFunc(subs, func(x, y submission) int { return int(x.at - y.at) })

	var lossReport *LossReport
	lossDone := make(chan struct{})
	st.start = time.Now()
	if loss != nil {
		lossReport = &LossReport{Worker: loss.Worker}
		go func() {
			defer close(lossDone)
			select {
			case <-runCtx.Done():
				return
			case <-time.After(time.Until(st.start.Add(loss.At))):
			}
			func() {
				st.mu.Lock()
				defer st.mu.Unlock()
				st.dead[loss.Worker] = true
				lossReport.AtSeconds = time.Since(st.start).Seconds()
				for name, j := range st.jobs {
					_, running := j.reserved[loss.Worker]
					switch {
					case running && !j.finished:
						lossReport.RunningThere = append(lossReport.RunningThere, name)
					case j.copied[loss.Worker] && len(j.reserved) == 0:
						lossReport.PendingThere = append(lossReport.PendingThere, name)
					}
				}
			}()
			progress("stopping worker %s at %.0fs", loss.Worker, lossReport.AtSeconds)
			stopped := make(chan error, 1)
			go func() { stopped <- c.StopWorker(loss.Worker) }()
			// Gone: its API server no longer answers.
			for runCtx.Err() == nil {
				var ns corev1.Namespace
				gctx, gcancel := context.WithTimeout(runCtx, time.Second)
				err := c.Workers[loss.Worker].Client.Get(gctx, client.ObjectKey{Name: namespace}, &ns)
				gcancel()
				if err != nil && !apierrors.IsNotFound(err) {
					lossReport.GoneSeconds = time.Since(st.start).Seconds()
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
			if err := <-stopped; err != nil {
				progress("stopping worker %s: %v", loss.Worker, err)
			}
		}()
	} else {
		close(lossDone)
	}

	for _, s := range subs {
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(time.Until(st.start.Add(s.at))):
		}
		if s.worker == "" {
			job := testingjob.MakeJob(s.a.Name, namespace).Queue(localQueue).
				Request(corev1.ResourceCPU, fmt.Sprintf("%dm", s.a.CPUMilli)).Obj()
			if err := c.Manager.Client.Create(ctx, job); err != nil {
				return nil, nil, fmt.Errorf("creating Job %s: %w", s.a.Name, err)
			}
			continue
		}
		dead := func() bool {
			st.mu.Lock()
			defer st.mu.Unlock()
			st.background[s.a.Name].created = time.Now()
			return st.dead[s.worker]
		}()
		if dead {
			continue
		}
		wl := utiltestingapi.MakeWorkload(s.a.Name, namespace).Queue(localQueue).
			Request(corev1.ResourceCPU, resource.NewMilliQuantity(s.a.CPUMilli, resource.DecimalSI).String()).Obj()
		if err := c.Workers[s.worker].Client.Create(ctx, wl); err != nil {
			return nil, nil, fmt.Errorf("creating background %s on %s: %w", s.a.Name, s.worker, err)
		}
	}
	progress("%s %s: all %d Jobs and %d background workloads submitted after %.0fs", c.Dispatcher, namespace, len(plan.Jobs), len(st.background), time.Since(st.start).Seconds())

	// Until everything finished, or the drain is over.
	deadline := time.Now().Add(drain)
	for {
		left := func() int {
			st.mu.Lock()
			defer st.mu.Unlock()
			left := 0
			for _, j := range st.jobs {
				if !j.finished {
					left++
				}
			}
			for _, bg := range st.background {
				if !bg.finished && !st.dead[workerOf(bg.arrival.Name, scenario.Workers)] {
					left++
				}
			}
			return left
		}()
		err := func() error {
			errMu.Lock()
			defer errMu.Unlock()
			return runErr
		}()
		if err != nil {
			return nil, nil, err
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			progress("%s %s: %d workloads unfinished %s after the last submission: reported, not waited for", c.Dispatcher, namespace, left, drain)
			break
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	wall := time.Since(st.start)
	cancel()
	<-lossDone

	st.mu.Lock()
	defer st.mu.Unlock()
	res := &RunResult{Dispatcher: c.Dispatcher, Seed: plan.Seed, Offered: plan.Offered(), CopiedTo: map[string]int{}, AdmittedOn: map[string]int{},
		BackgroundStats: map[string]WaitStats{}, WallSeconds: wall.Seconds()}
	var before, after []float64
	for _, a := range plan.Jobs {
		j := st.jobs[a.Name]
		for w := range j.copied {
			res.CopiedTo[w]++
		}
		if len(j.reserved) >= 2 {
			res.ReservedOnTwo++
		}
		if len(j.admitted) >= 2 {
			res.AdmittedOnTwo++
		}
		if len(j.jobOn) >= 2 {
			res.JobOnTwo++
		}
		if !j.finished {
			res.Unfinished++
		}
		at, ok := j.reserved[j.cluster]
		if !ok || j.created.IsZero() {
			res.Unadmitted++
			continue
		}
		res.AdmittedOn[j.cluster]++
		w := at.Sub(j.created).Seconds()
		res.Waits = append(res.Waits, w)
		if lossReport != nil {
			if j.created.Sub(st.start).Seconds() < lossReport.AtSeconds {
				before = append(before, w)
			} else {
				after = append(after, w)
			}
		}
	}
	res.Stats = waitStats(res.Waits)
	bg := map[string][]float64{}
	for _, b := range st.background {
		if !b.reserved.IsZero() && !b.created.IsZero() {
			w := workerOf(b.arrival.Name, scenario.Workers)
			bg[w] = append(bg[w], b.reserved.Sub(b.created).Seconds())
		}
	}
	for w, waits := range bg {
		res.BackgroundStats[w] = waitStats(waits)
	}
	if lossReport != nil {
		lossReport.WaitsBefore, lossReport.WaitsAfter = waitStats(before), waitStats(after)
		for _, name := range append(slices.Clone(lossReport.RunningThere), lossReport.PendingThere...) {
			j := st.jobs[name]
			for w := range j.reserved {
				if w != loss.Worker {
					lossReport.ReadmittedElsewhere = append(lossReport.ReadmittedElsewhere, name)
					break
				}
			}
		}
		for name, j := range st.jobs {
			if !j.finished {
				lossReport.NeverFinished = append(lossReport.NeverFinished, name)
			}
		}
		for _, l := range [][]string{lossReport.RunningThere, lossReport.PendingThere, lossReport.ReadmittedElsewhere, lossReport.NeverFinished} {
			slices.Sort(l)
		}
	}
	return res, lossReport, nil
}

// waitForCluster waits until the manager's Workload names the worker that
// admits it and says whether that is worker; false when ctx ends first.
func (st *runState) waitForCluster(ctx context.Context, j *jobObservation, worker string) bool {
	for {
		cluster := func() string {
			st.mu.Lock()
			defer st.mu.Unlock()
			return j.cluster
		}()
		if cluster != "" {
			return cluster == worker
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// workerOf is the worker of a background workload's name.
func workerOf(name string, workers []Worker) string {
	for _, w := range workers {
		if strings.HasPrefix(name, "bg-"+w.Name+"-") {
			return w.Name
		}
	}
	return ""
}

// finishIfReserved marks a worker's Workload Finished, as the job
// integration does when its Job succeeds, unless it is gone (MultiKueue
// removed a copy that another worker admitted first) or holds no
// reservation: then false.
func (c *Clusters) finishIfReserved(ctx context.Context, worker string, cp *controlplane.ControlPlane, name, namespace string) (bool, error) {
	finished := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var wl kueue.Workload
		if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &wl); err != nil {
			return err
		}
		if !apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) ||
			apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) || wl.DeletionTimestamp != nil {
			return nil
		}
		if err := finish.Finish(ctx, cp.Client, &wl, kueue.WorkloadFinishedReasonSucceeded, "finished by the dispatch evaluation after its service time", clock.RealClock{}); err != nil {
			return err
		}
		finished = true
		return nil
	})
	if ctx.Err() != nil || apierrors.IsNotFound(err) {
		return finished, nil
	}
	return finished, err
}

// watchJobs calls observe with every batch/v1 Job of namespace on the
// cluster, as watchWorkloads does.
func watchJobs(ctx context.Context, cp *controlplane.ControlPlane, namespace string, observe func(*batchv1.Job)) error {
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return err
	}
	jobs := cs.BatchV1().Jobs(namespace)
	list, err := jobs.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range list.Items {
		observe(&list.Items[i])
	}
	return follow(ctx, list.ResourceVersion, func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
		return jobs.Watch(ctx, options)
	}, func(o runtime.Object) {
		if job, ok := o.(*batchv1.Job); ok {
			observe(job)
		}
	})
}

// follow watches from resourceVersion, resuming where a watch ended, and
// calls observe with every object added or modified until ctx is done.
func follow(ctx context.Context, resourceVersion string, watchFunc cache.WatchFuncWithContext, observe func(runtime.Object)) error {
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, resourceVersion, &cache.ListWatch{WatchFuncWithContext: watchFunc})
	if err != nil {
		return err
	}
	go func() {
		defer rw.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-rw.ResultChan():
				if !ok {
					return
				}
				if ev.Type == watch.Added || ev.Type == watch.Modified {
					observe(ev.Object)
				}
			}
		}
	}()
	return nil
}

// watchWorkloads calls observe with every Workload of namespace on the
// cluster, from a list and then a watch that resumes where it ended, until
// ctx is done.
func watchWorkloads(ctx context.Context, cp *controlplane.ControlPlane, namespace string, observe func(*kueue.Workload)) error {
	cs, err := kueueclientset.NewForConfig(cp.Config)
	if err != nil {
		return err
	}
	wls := cs.KueueV1beta2().Workloads(namespace)
	list, err := wls.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range list.Items {
		observe(&list.Items[i])
	}
	return follow(ctx, list.ResourceVersion, func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
		return wls.Watch(ctx, options)
	}, func(o runtime.Object) {
		if wl, ok := o.(*kueue.Workload); ok {
			observe(wl)
		}
	})
}
