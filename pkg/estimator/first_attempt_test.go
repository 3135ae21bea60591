package estimator

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/convert"
	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
	"github.com/kueue-waittime/kueue-waittime/pkg/queuestats"
)

// refusedCopy returns wl as the scheduler writes it when it cannot admit
// it: QuotaReserved=False with the reason it found.
func refusedCopy(wl *kueue.Workload, message string, at time.Time) *kueue.Workload {
	out := wl.DeepCopy()
	out.Status.Conditions = append(out.Status.Conditions, metav1.Condition{
		Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionFalse, Reason: "Pending",
		Message: message, LastTransitionTime: metav1.NewTime(at),
	})
	return out
}

// TestFirstAttemptLatencyIsMeasuredOnlyForUntriedWorkloads: the delay
// from a workload's arrival to its admission enters the first-attempt
// sample only when the scheduler never refused it quota in between, when
// the estimator saw it arrive, and when no workload of its ClusterQueue or
// of its cohort gave quota back in between (it may have waited for that
// quota behind others, or for a reclaim, without ever being tried: a wait,
// not a first attempt's latency). A release in another cohort, or in a
// cohort the ClusterQueue is not in, does not count.
func TestFirstAttemptLatencyIsMeasuredOnlyForUntriedWorkloads(t *testing.T) {
	cases := map[string]struct {
		refused bool
		// unseen: the arrival happened before the estimator watched.
		unseen bool
		// finished, preempted: a running workload finished, or was
		// preempted and released its quota, while it waited.
		finished, preempted bool
		// releasedIn is the ClusterQueue of that running workload ("":
		// cq's own).
		releasedIn kueue.ClusterQueueReference
		// cohort is cq's cohort ("": none); "sibling" is in cohort
		// "team", "stranger" in cohort "elsewhere".
		cohort kueue.CohortReference
		want   []float64
	}{
		"admitted at its first attempt":            {want: []float64{0.3}},
		"refused quota before its admission":       {refused: true},
		"arrival not seen":                         {unseen: true},
		"a workload finished while it waited":      {finished: true},
		"a workload was preempted while it waited": {preempted: true},
		"a sibling's workload finished while it waited": {
			finished: true, releasedIn: "sibling", cohort: "team",
		},
		"a sibling's workload was preempted while it waited": {
			preempted: true, releasedIn: "sibling", cohort: "team",
		},
		"a workload of another cohort finished while it waited": {
			finished: true, releasedIn: "stranger", cohort: "team", want: []float64{0.3},
		},
		"a cohort's workload finished, the ClusterQueue in none": {
			finished: true, releasedIn: "sibling", want: []float64{0.3},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := paperObjects()
			objs.pending = objs.pending[:1]
			objs.cqs[0].Spec.CohortName = tc.cohort
			sibling, stranger := cpuQueue("sibling", "2"), cpuQueue("stranger", "2")
			sibling.Spec.CohortName, stranger.Spec.CohortName = "team", "elsewhere"
			objs.cqs = append(objs.cqs, sibling, stranger)
			releasing := objs.running[0]
			if tc.releasedIn != "" {
				releasing = runningWorkload("other-r0", string(tc.releasedIn), "500m", t0.Add(-10*time.Second))
				objs.running = append(objs.running, releasing)
			}
			env, _, e := warmRecordingEstimator(t, objs)
			for _, cq := range objs.cqs {
				e.ClusterQueueEventHandler().OnAdd(cq, true)
			}
			h := e.WorkloadEventHandler()
			p0 := objs.pending[0]
			if !tc.unseen {
				h.OnAdd(p0, false)
			}
			env.clock.Step(100 * time.Millisecond)
			if tc.refused {
				h.OnUpdate(p0, refusedCopy(p0, "couldn't assign flavors", env.clock.Now()))
			}
			if tc.finished || tc.preempted {
				gone := releasing.DeepCopy()
				if tc.finished {
					gone.Status.Conditions = append(gone.Status.Conditions, metav1.Condition{
						Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "ByTest", LastTransitionTime: metav1.NewTime(env.clock.Now()),
					})
				} else {
					gone.Status.Admission = nil
				}
				h.OnUpdate(releasing, gone)
			}
			env.clock.Step(200 * time.Millisecond)
			e.ObserveAdmission(admittedCopy(p0), env.clock.Now())

			e.mu.Lock()
			defer e.mu.Unlock()
			own := e.statsFor("cq").FirstAttemptLatency.AppendValues(nil)
			shared := e.state.Stats.Shared().FirstAttemptLatency.AppendValues(nil)
			if diff := cmp.Diff(tc.want, own, cmpopts.EquateApprox(0, 1e-9), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("the ClusterQueue's first-attempt latencies in seconds (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(own, shared, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("the shared first-attempt latencies against the ClusterQueue's (-own +shared):\n%s", diff)
			}
		})
	}
}

// TestPendingUpdatesMarkAWorkloadTried: a refusal of quota marks the
// workload tried, whatever follows; an update that leaves the condition as
// it was, or does not refuse quota, does not.
func TestPendingUpdatesMarkAWorkloadTried(t *testing.T) {
	objs := paperObjects()
	objs.pending = objs.pending[:1]
	p0 := objs.pending[0]
	relabeled := p0.DeepCopy()
	relabeled.Labels = map[string]string{"team": "a"}
	refused := refusedCopy(p0, "couldn't assign flavors", t0)
	refusedAgain := refused.DeepCopy()
	refusedAgain.Labels = map[string]string{"team": "a"}
	cases := map[string]struct {
		updates   [][2]*kueue.Workload
		wantTried bool
	}{
		"no update":                           {},
		"an update that refuses nothing":      {updates: [][2]*kueue.Workload{{p0, relabeled}}},
		"a refusal":                           {updates: [][2]*kueue.Workload{{p0, refused}}, wantTried: true},
		"a refusal, then the same condition":  {updates: [][2]*kueue.Workload{{p0, refused}, {refused, refusedAgain}}, wantTried: true},
		"an update that keeps an old refusal": {updates: [][2]*kueue.Workload{{refused, refusedAgain}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, e := warmRecordingEstimator(t, objs)
			h := e.WorkloadEventHandler()
			h.OnAdd(p0, false)
			for _, u := range tc.updates {
				h.OnUpdate(u[0], u[1])
			}
			e.mu.Lock()
			defer e.mu.Unlock()
			p, ok := e.state.Book.Pending.Get(nameFromReference(workload.Key(p0)))
			if !ok {
				t.Fatal("p0 is not tracked")
			}
			if got := !p.Untried(); got != tc.wantTried {
				t.Errorf("tried = %v, want %v", got, tc.wantTried)
			}
			if _, ok := p.ArrivedAt(p0.CreationTimestamp.Time); !ok {
				t.Error("marking it tried lost its arrival")
			}
		})
	}
}

// TestRefreshTimesAnUntriedHeadByItsFirstAttempt: with one of the two CPUs
// free, the head p0 fits now. Seen arriving 0.1 s ago and never refused
// quota, it is forecast to wait for a first attempt (0.3 s measured) less
// those 0.1 s; the same workload whose object shows a refusal waits for an
// admission latency (5 s measured) after the cycle's phase.
func TestRefreshTimesAnUntriedHeadByItsFirstAttempt(t *testing.T) {
	cases := map[string]struct {
		refused bool
		// refusedSeen: the informer saw the refusal, which the object in
		// the queue does not show yet.
		refusedSeen bool
		want        time.Duration
	}{
		"refused, seen by the informer only": {refusedSeen: true, want: 5 * time.Second},
		"untried":                            {want: 200 * time.Millisecond},
		"refused in its object":              {refused: true, want: 5 * time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := paperObjects()
			objs.running = objs.running[:2]
			objs.pending = objs.pending[:1]
			if tc.refused {
				objs.pending[0] = refusedCopy(objs.pending[0], "couldn't assign flavors", t0)
			}
			env, _, e := warmRecordingEstimator(t, objs)
			p0 := objs.pending[0]
			e.WorkloadEventHandler().OnAdd(p0, false)
			if tc.refusedSeen {
				e.WorkloadEventHandler().OnUpdate(p0, refusedCopy(p0, "couldn't assign flavors", t0))
			}
			refreshWithLatencies(t, env, e, "cq", p0, tc.want)
		})
	}
}

// TestPreemptedWorkloadReentersTried: a workload evicted by preemption
// re-enters the queue with its arrival known and marked tried: Kueue
// requeues it with a backoff, not as a first attempt.
func TestPreemptedWorkloadReentersTried(t *testing.T) {
	env, e := warmPaperEstimator(t)
	preemptThenAdmit(env, e)
	e.mu.Lock()
	defer e.mu.Unlock()
	victim := runningWorkload("r8", "cq", "500m", t0.Add(-20*time.Second))
	p, ok := e.state.Book.Pending.Get(nameFromReference(workload.Key(victim)))
	if !ok {
		t.Fatal("the preempted r8 is not tracked as pending")
	}
	if p.Untried() {
		t.Error("the preempted r8 re-entered untried")
	}
	if _, ok := p.ArrivedAt(victim.CreationTimestamp.Time); !ok {
		t.Error("the preempted r8 re-entered without an arrival")
	}
}

// TestRefreshTimesByAFirstAttemptOnlyWithoutBorrowing: an untried workload
// that fits its ClusterQueue's free nominal quota is timed by its first
// attempt; one that fits now only by borrowing its cohort's idle quota is
// timed as any other admission.
func TestRefreshTimesByAFirstAttemptOnlyWithoutBorrowing(t *testing.T) {
	cases := map[string]struct {
		// runningCPU is what the borrower runs of its 2 CPU nominal quota,
		// in 500m workloads.
		runningCPU float64
		want       time.Duration
	}{
		"within nominal quota": {runningCPU: 1.5, want: 200 * time.Millisecond},
		"only by borrowing":    {runningCPU: 2, want: 5 * time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := lendingObjectsOf(int(2*tc.runningCPU), "500m", "")
			objs.lqs = []*kueue.LocalQueue{utiltestingapi.MakeLocalQueue("lq", "ns").ClusterQueue("borrower").Obj()}
			objs.pending = []*kueue.Workload{pendingWorkload("p0", "500m", t0.Add(-time.Second))}
			env, _, e := warmRecordingEstimator(t, objs)
			p0 := objs.pending[0]
			e.WorkloadEventHandler().OnAdd(p0, false)
			refreshWithLatencies(t, env, e, "borrower", p0, tc.want)
		})
	}
}

func TestFitsWithinNominal(t *testing.T) {
	cases := map[string]struct {
		// borrowerRunning is how many 500m workloads the borrower (2 CPU
		// nominal, in a cohort with a 2 CPU lender) runs.
		borrowerRunning int
		queue           kueue.ClusterQueueReference
		workload        *kueue.Workload
		want            bool
	}{
		"room left in nominal quota": {
			borrowerRunning: 3, queue: "borrower", workload: pendingWorkload("w", "500m", t0), want: true,
		},
		"exactly the rest of nominal quota": {
			borrowerRunning: 2, queue: "borrower", workload: pendingWorkload("w", "1", t0), want: true,
		},
		"only by borrowing": {
			borrowerRunning: 4, queue: "borrower", workload: pendingWorkload("w", "500m", t0),
		},
		"a lender whose quota is lent out: its own usage is what counts": {
			borrowerRunning: 8, queue: "lender", workload: pendingWorkload("w", "500m", t0), want: true,
		},
		"more than nominal quota": {
			queue: "lender", workload: pendingWorkload("w", "3", t0),
		},
		"a resource no resource group covers": {
			queue: "lender",
			workload: utiltestingapi.MakeWorkload("w", "ns").Queue("lq").
				Request(corev1.ResourceCPU, "500m").Request("example.com/gpu", "1").Obj(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := newTestEnv(t, lendingObjectsOf(tc.borrowerRunning, "500m", ""))
			snap, err := env.cache.Snapshot(env.ctx)
			if err != nil {
				t.Fatal(err)
			}
			var fit convert.NominalFit
			if got := fit.Fits(snap.ClusterQueue(tc.queue), workload.NewInfo(tc.workload)); got != tc.want {
				t.Errorf("NominalFit.Fits = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRefreshExaminesBoundedUntriedCandidates: behind n pending 1-CPU
// workloads that do not fit the 0.5 CPU left, a 500m workload fits now and
// is admitted at the roll's first opportunity. A refresh examines only the
// first engine.MaxUntriedCandidates pending workloads as untried candidates: it
// is timed by its first attempt behind engine.MaxUntriedCandidates−1 of them, and
// as any admission behind engine.MaxUntriedCandidates.
func TestRefreshExaminesBoundedUntriedCandidates(t *testing.T) {
	cases := map[string]struct {
		ahead int
		want  time.Duration
	}{
		"within the bound": {ahead: engine.MaxUntriedCandidates - 1, want: 200 * time.Millisecond},
		"beyond the bound": {ahead: engine.MaxUntriedCandidates, want: 5 * time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := paperObjects()
			objs.running = objs.running[:3]
			objs.pending = nil
			for i := range tc.ahead {
				objs.pending = append(objs.pending, pendingWorkload(fmt.Sprintf("big%02d", i), "1", t0.Add(-10*time.Second+time.Duration(i)*time.Millisecond)))
			}
			small := pendingWorkload("small", "500m", t0.Add(-time.Second))
			objs.pending = append(objs.pending, small)
			env, _, e := warmRecordingEstimator(t, objs)
			e.WorkloadEventHandler().OnAdd(small, false)
			refreshWithLatencies(t, env, e, "cq", small, tc.want)
		})
	}
}

// TestRefreshTimesABurstByFirstAttemptsOnlyOutsideACohort: two untried 500m
// workloads both fit the 1 CPU left of their ClusterQueue's nominal quota.
// Without a cohort the second is timed by a first attempt too (0.3 s, 0.1 s
// of which has passed); in a cohort, whose siblings' heads the roll does
// not see, only the first is, and the second as any admission (5 s).
func TestRefreshTimesABurstByFirstAttemptsOnlyOutsideACohort(t *testing.T) {
	cases := map[string]struct {
		objs func() envObjects
		cq   kueue.ClusterQueueReference
		want time.Duration
	}{
		"no cohort": {
			objs: func() envObjects {
				objs := paperObjects()
				objs.running = objs.running[:2]
				return objs
			},
			cq: "cq", want: 200 * time.Millisecond,
		},
		"in a cohort": {
			objs: func() envObjects {
				objs := lendingObjectsOf(2, "500m", "")
				objs.lqs = []*kueue.LocalQueue{utiltestingapi.MakeLocalQueue("lq", "ns").ClusterQueue("borrower").Obj()}
				return objs
			},
			cq: "borrower", want: 5 * time.Second,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := tc.objs()
			objs.pending = []*kueue.Workload{
				pendingWorkload("p0", "500m", t0.Add(-time.Second)),
				pendingWorkload("p1", "500m", t0.Add(-time.Second+time.Millisecond)),
			}
			env, _, e := warmRecordingEstimator(t, objs)
			for _, p := range objs.pending {
				e.WorkloadEventHandler().OnAdd(p, false)
			}
			refreshWithLatencies(t, env, e, tc.cq, objs.pending[1], tc.want)
		})
	}
}

// refreshWithLatencies gives ClusterQueue cq queuestats.MinOwnLatencySamples
// first-attempt latencies of 0.3 s and admission latencies of 5 s,
// refreshes 100 ms later, and checks that wl's published mean, P50 and P90
// are all want.
func refreshWithLatencies(t *testing.T, env *testEnv, e *Estimator, cq kueue.ClusterQueueReference, wl *kueue.Workload, want time.Duration) {
	t.Helper()
	e.mu.Lock()
	for range queuestats.MinOwnLatencySamples {
		e.statsFor(cq).FirstAttemptLatency.ObserveAt(env.clock.Now(), 0.3)
		e.statsFor(cq).AdmissionLatency.ObserveAt(env.clock.Now(), 5)
	}
	e.mu.Unlock()
	env.clock.Step(100 * time.Millisecond)
	e.Refresh(env.ctx)
	est, ok := e.Results().Workload(workload.Key(wl))
	if !ok || !est.HasWait {
		t.Fatalf("no wait published for %s: %+v", wl.Name, est)
	}
	got := []float64{est.ExpectedWait.Seconds(), est.P50.Seconds(), est.P90.Seconds()}
	w := []float64{want.Seconds(), want.Seconds(), want.Seconds()}
	if diff := cmp.Diff(w, got, cmpopts.EquateApprox(0, 0.001)); diff != "" {
		t.Errorf("%s's mean, P50 and P90 (-want +got):\n%s", wl.Name, diff)
	}
}
