package estimator

import (
	"context"
	"errors"
	"fmt"
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"
	"math/rand/v2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	utiltesting "sigs.k8s.io/kueue/pkg/util/testing"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"sigs.k8s.io/controller-runtime/pkg/client"

	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"
)

// warmRecordingEstimator returns a warmed estimator over objs, with a 20 s
// a-priori mean service, that reports to a recordingReporter.
func warmRecordingEstimator(t *testing.T, objs envObjects) (*testEnv, *recordingReporter, *Estimator) {
	t.Helper()
	env := newTestEnv(t, objs)
	rep := &recordingReporter{}
	e := env.estimator(t, WithPriorMeanService(20*time.Second), WithMetricsReporter(rep))
	e.markWarmed()
	return env, rep, e
}

// A workload's first published estimate is the one scored: later refreshes
// do not overwrite it, and every predictor is scored from that moment.
func TestLedgerScoresTheFirstEstimateAtAdmission(t *testing.T) {
	objs := paperObjects()
	objs.pending = objs.pending[:1] // p0 only
	env, rep, e := warmRecordingEstimator(t, objs)
	p0 := objs.pending[0]
	e.WorkloadEventHandler().OnAdd(p0, false) // seen arriving at t0

	env.clock.Step(time.Second)
	e.Refresh(env.ctx)
	first, ok := e.Results().Workload(workload.Key(p0))
	if !ok || !first.HasWait {
		t.Fatalf("no wait published for p0: %+v", first)
	}
	env.clock.Step(2 * time.Second)
	e.Refresh(env.ctx)
	if second, _ := e.Results().Workload(workload.Key(p0)); second.EstimatedAt.Equal(first.EstimatedAt) {
		t.Fatalf("the second refresh published nothing new: %+v", second)
	}

	admitted := p0.DeepCopy()
	admitted.Status.Admission = utiltestingapi.MakeAdmission("cq").Obj()
	e.ObserveAdmission(admitted, t0.Add(7*time.Second))

	want := []Score{{
		Workload: workload.Key(p0), ClusterQueue: "cq", Method: MethodAPriori,
		EstimatedAt: t0.Add(time.Second), Waited: time.Second, Actual: 6 * time.Second,
		Forecast: Prediction{Wait: first.ExpectedWait, OK: true},
		P50:      Prediction{Wait: first.P50, OK: true},
		P90:      Prediction{Wait: first.P90, OK: true},
		// Nothing was scored before: the published quantiles are the
		// raw ones.
		RawP50: Prediction{Wait: first.P50, OK: true},
		RawP90: Prediction{Wait: first.P90, OK: true},
		// A tenth of the 20 s a-priori mean service.
		CalibrationScale: 2,
		// No admission had been seen (EMA) and no service time measured
		// (paper, Whitt): no answer from the baselines.
	}}
	// The ledger keeps float32 seconds: compare to the millisecond.
	if diff := cmp.Diff(want, rep.scores, cmp.Comparer(func(a, b time.Duration) bool {
		return (a - b).Abs() < time.Millisecond
	})); diff != "" {
		t.Errorf("scores (-want,+got):\n%s", diff)
	}
	if len(rep.unscored) != 0 {
		t.Errorf("unscored: %v", rep.unscored)
	}

	env.clock.Step(time.Second)
	e.Refresh(env.ctx)
	m := rep.models["cq"]
	wantP90 := 0.0
	if 6*time.Second <= first.P90 {
		wantP90 = 1
	}
	if !m.HasCoverage || m.ScoredWorkloads != 1 || m.P90Coverage != wantP90 {
		t.Errorf("coverage in the queue model: has %v, scored %d, P90 %v; want true, 1, %v", m.HasCoverage, m.ScoredWorkloads, m.P90Coverage, wantP90)
	}
}

func TestLedgerReportsWhatItCannotScore(t *testing.T) {
	objs := paperObjects()
	env, rep, e := warmRecordingEstimator(t, objs)
	h := e.WorkloadEventHandler()
	p0, p1, p2 := objs.pending[0], objs.pending[1], objs.pending[2]
	h.OnAdd(p0, false)
	h.OnAdd(p1, false)

	// p0 is admitted before any refresh: nothing was published for it.
	admitted := p0.DeepCopy()
	admitted.Status.Admission = utiltestingapi.MakeAdmission("cq").Obj()
	e.ObserveAdmission(admitted, t0.Add(100*time.Millisecond))

	env.clock.Step(time.Second)
	e.Refresh(env.ctx)
	// p1 is deleted after its estimate was published; p2, which the
	// handlers never saw arrive, has no line and leaves no trace.
	h.OnDelete(p1)
	h.OnDelete(p2)

	want := []string{"cq AdmittedBeforeEstimate", "cq DeletedBeforeAdmission"}
	if diff := cmp.Diff(want, rep.unscored); diff != "" {
		t.Errorf("unscored (-want,+got):\n%s", diff)
	}
	if len(rep.scores) != 0 || e.state.Book.Pending.Len() != 0 {
		t.Errorf("scores %v, lines left %v", rep.scores, &e.state.Book.Pending)
	}
}

// panickingSource is a rand.Source that panics: the refresh draws from it
// while it holds the estimator's lock.
type panickingSource struct{}

func (panickingSource) Uint64() uint64 { panic("injected") }

func TestPanicUnderTheLockLeavesTheSchedulerHooksWorking(t *testing.T) {
	env := newTestEnv(t, paperObjects())
	e := env.estimator(t, WithRand(rand.New(panickingSource{})), WithPriorMeanService(time.Second))
	e.Refresh(env.ctx)
	if e.Panics() == 0 {
		t.Fatal("the injected panic did not happen")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.ObserveCycle(t0, t0.Add(time.Millisecond))
		wl := pendingWorkload("p0", "500m", t0)
		wl.Status.Admission = utiltestingapi.MakeAdmission("cq").Obj()
		e.ObserveAdmission(wl, t0.Add(time.Second))
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the scheduler's hooks blocked: the lock was left held by the recovered panic")
	}
}

// panickingReader panics when listed.
type panickingReader struct{ client.Reader }

func (panickingReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	panic("injected")
}

func TestWarmStartPanicLeavesTheEstimatorCounting(t *testing.T) {
	env := newTestEnv(t, paperObjects())
	e := env.estimator(t, WithWarmStart(panickingReader{}))
	if err := e.WarmStart(env.ctx, panickingReader{}); err == nil || e.Panics() != 1 {
		t.Fatalf("WarmStart = %v with %d panics; want the panic as an error", err, e.Panics())
	}
	ctx, cancel := context.WithCancel(env.ctx)
	cancel() // Start warms up, then returns at once
	if err := e.Start(ctx); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	e.WorkloadEventHandler().OnAdd(pendingWorkload("new", "500m", t0), false)
	e.mu.Lock()
	defer e.mu.Unlock()
	if n := e.statsFor("cq").Arrivals.Count(); n != 1 {
		t.Errorf("arrivals counted after a panicking warm start = %d, want 1", n)
	}
}

// The scheduler's hooks, the informer handlers, the refresh and the
// visibility reads all run at once here; under go test -race (make test)
// any unguarded shared state is a failure.
func TestHooksHandlersRefreshAndReadsRunConcurrently(t *testing.T) {
	env := newTestEnv(t, paperObjects())
	rep := &recordingReporter{}
	e := env.estimator(t, WithPriorMeanService(2*time.Second), WithMetricsReporter(rep))
	e.markWarmed()
	h := e.WorkloadEventHandler()
	const rounds = 200
	var wg sync.WaitGroup
	wg.Go(func() {
		for range rounds {
			e.Refresh(env.ctx)
		}
	})
	wg.Go(func() {
		for i := range rounds {
			at := t0.Add(time.Duration(i) * time.Millisecond)
			e.ObserveCycle(at, at.Add(time.Microsecond))
		}
	})
	wg.Go(func() {
		for i := range rounds {
			wl := pendingWorkload(fmt.Sprintf("w%d", i), "500m", t0)
			h.OnAdd(wl, false)
			admitted := wl.DeepCopy()
			admitted.Status.Admission = utiltestingapi.MakeAdmission("cq").Obj()
			e.ObserveAdmission(admitted, t0.Add(time.Second))
			h.OnDelete(admitted)
		}
	})
	wg.Go(func() {
		for range rounds {
			r := e.Results()
			r.Workload(workload.NewReference("ns", "p0"))
			for range r.Queues() {
			}
		}
	})
	wg.Wait()
	if e.Panics() != 0 {
		t.Errorf("%d panics", e.Panics())
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.state.Book.Pending.Len() != 0 {
		t.Errorf("%d workloads still tracked after every one was admitted and deleted", e.state.Book.Pending.Len())
	}
}

// Quantiles that keep missing are widened once the calibrators have
// enough scores: the published P50 and P90 grow, and the queue model says
// by how much.
func TestCalibrationWidensQuantilesThatMiss(t *testing.T) {
	objs := paperObjects()
	objs.pending = nil
	env := newTestEnv(t, objs)
	rep := &recordingReporter{}
	e := env.estimator(t, WithPriorMeanService(time.Second), WithMetricsReporter(rep))
	e.markWarmed()
	h := e.WorkloadEventHandler()
	var firstP90 time.Duration
	for i := range 30 {
		wl := pendingWorkload(fmt.Sprintf("w%d", i), "500m", env.clock.Now())
		h.OnAdd(wl, false)
		if err := env.queues.AddOrUpdateWorkload(logr.Discard(), wl); err != nil {
			t.Fatal(err)
		}
		env.clock.Step(100 * time.Millisecond)
		e.Refresh(env.ctx)
		est, ok := e.Results().Workload(workload.Key(wl))
		if !ok || !est.HasWait {
			t.Fatalf("w%d: no wait published", i)
		}
		if i == 0 {
			firstP90 = est.P90
		}
		// Every workload waits ten minutes: far beyond any P90 of a queue
		// whose service takes a second.
		env.clock.Step(10 * time.Minute)
		admitted := wl.DeepCopy()
		admitted.Status.Admission = utiltestingapi.MakeAdmission("cq").Obj()
		env.queues.DeleteWorkload(logr.Discard(), workload.Key(admitted))
		e.ObserveAdmission(admitted, env.clock.Now())
	}
	e.Refresh(env.ctx)
	m := rep.models["cq"]
	if !m.Calibrated || !(m.P90Adjustment > 10) || !(m.P50Adjustment > 10) {
		t.Fatalf("calibration: %v, adjustments P50 ×%v P90 ×%v; want both far above 1", m.Calibrated, m.P50Adjustment, m.P90Adjustment)
	}
	wl := pendingWorkload("late", "500m", env.clock.Now())
	h.OnAdd(wl, false)
	if err := env.queues.AddOrUpdateWorkload(logr.Discard(), wl); err != nil {
		t.Fatal(err)
	}
	e.Refresh(env.ctx)
	if est, _ := e.Results().Workload(workload.Key(wl)); est.P90 < 10*firstP90 || est.P50 > est.P90 {
		t.Errorf("published P50 %v, P90 %v after calibration; the first P90 was %v", est.P50, est.P90, firstP90)
	}
}

// blockingReader lists from a fake client once released, so that events
// can arrive while the warm start reads.
type blockingReader struct {
	client.Reader
	listing chan struct{}
	release chan struct{}
}

func (r blockingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*kueue.WorkloadList); ok {
		close(r.listing)
		<-r.release
	}
	return r.Reader.List(ctx, list, opts...)
}

// Events that arrive while the warm start reads the cache are applied
// once, whether or not the read already held them.
func TestNoEventLostDuringWarmStart(t *testing.T) {
	objs := paperObjects()
	env := newTestEnv(t, objs)
	e := env.estimator(t)
	h := e.WorkloadEventHandler()

	// The cache the warm start reads: a pending workload p0 and a running
	// r0 that it already holds finished.
	p0 := objs.pending[0]
	r0 := objs.running[0]
	r0Done := r0.DeepCopy()
	r0Done.Status.Conditions = append(r0Done.Status.Conditions, metav1.Condition{
		Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "ByTest", LastTransitionTime: metav1.NewTime(t0),
	})
	cache := utiltesting.NewClientBuilder().WithObjects(p0.DeepCopy(), r0Done.DeepCopy()).Build()
	reader := blockingReader{Reader: cache, listing: make(chan struct{}), release: make(chan struct{})}
	warmed := make(chan error)
	go func() { warmed <- e.WarmStart(env.ctx, reader) }()
	<-reader.listing

	// While it reads: p0's arrival and r0's finish (both in the read),
	// and a new arrival and r1's finish (neither in it).
	h.OnAdd(p0, false)
	h.OnUpdate(r0, r0Done)
	h.OnAdd(pendingWorkload("new", "500m", t0), false)
	r1 := objs.running[1]
	r1Done := r1.DeepCopy()
	r1Done.Status.Conditions = append(r1Done.Status.Conditions, metav1.Condition{
		Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "ByTest", LastTransitionTime: metav1.NewTime(t0),
	})
	h.OnUpdate(r1, r1Done)
	close(reader.release)
	if err := <-warmed; err != nil {
		t.Fatal(err)
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.statsFor("cq")
	// Arrivals: p0 and r0 from their creation in the read, "new" from its
	// event; finishes: r0 from the read, r1 from its event.
	if got := s.Arrivals.Count(); got != 3 {
		t.Errorf("arrivals = %d, want 3 (p0 and r0 once each, new)", got)
	}
	if got := s.Service.Count(); got != 2 {
		t.Errorf("service observations = %d, want 2 (r0 once, r1)", got)
	}
	if _, ok := e.state.Book.Pending.Get(workloadName{Namespace: "ns", Name: "new"}); !ok {
		t.Error("the workload that arrived during the warm start is not tracked")
	}
	if e.state.Early.Len() != 0 {
		t.Errorf("%d events left waiting", e.state.Early.Len())
	}
}

// Every refresh that publishes results reports when they were computed,
// which is the time the published results carry, and the configured bound
// on their age.
func TestRefreshReportsWhenItPublished(t *testing.T) {
	env := newTestEnv(t, paperObjects())
	rep := &recordingReporter{}
	e := env.estimator(t, WithMetricsReporter(rep), WithMaxStaleness(30*time.Second))
	e.markWarmed()
	env.clock.Step(time.Second)
	e.Refresh(env.ctx)
	env.clock.Step(2 * time.Second)
	e.Refresh(env.ctx)

	want := []RefreshReport{
		{PublishedAt: t0.Add(time.Second), MaxStaleness: 30 * time.Second},
		{PublishedAt: t0.Add(3 * time.Second), MaxStaleness: 30 * time.Second},
	}
	// The fake clock does not move during a refresh.
	if diff := cmp.Diff(want, rep.refreshes); diff != "" {
		t.Errorf("refresh reports (-want,+got):\n%s", diff)
	}
	if got := e.Results().At(); !got.Equal(rep.refreshes[len(rep.refreshes)-1].PublishedAt) {
		t.Errorf("published results are from %v, the last report says %v", got, rep.refreshes[len(rep.refreshes)-1].PublishedAt)
	}
}

// steppingClock moves on by step at every reading, so that a span between
// two readings lasts a known number of steps.
type steppingClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *steppingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.now
	c.now = c.now.Add(c.step)
	return t
}

func (c *steppingClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

func (c *steppingClock) setStep(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.step = d
}

// A refresh reports the longest it held the estimator's lock, timed on the
// estimator's clock: with a clock that moves one step per reading, a hold
// lasts a whole number of steps, at least one (the statistics' decay reads
// the clock too, so some holds last more). A second refresh with a third
// of the step reports its own holds, shorter than the first's longest:
// the longest is not carried from one refresh to the next.
func TestRefreshReportsItsLongestLockHold(t *testing.T) {
	env := newTestEnv(t, paperObjects())
	rep := &recordingReporter{}
	clk := &steppingClock{now: t0, step: 3 * time.Millisecond}
	e := env.estimator(t, WithMetricsReporter(rep), WithClock(clk))
	e.markWarmed()
	e.Refresh(env.ctx)
	clk.setStep(time.Millisecond)
	e.Refresh(env.ctx)

	if len(rep.refreshes) != 2 {
		t.Fatalf("%d refresh reports, want 2", len(rep.refreshes))
	}
	first, second := rep.refreshes[0].LongestLockHold, rep.refreshes[1].LongestLockHold
	if first < 3*time.Millisecond || first%(3*time.Millisecond) != 0 {
		t.Errorf("first refresh's longest hold = %v, want a positive multiple of its clock's step (3ms)", first)
	}
	if second < time.Millisecond || second >= first {
		t.Errorf("second refresh's longest hold = %v, want at least its clock's step (1ms) and less than the first refresh's %v", second, first)
	}
	if n := e.Results().PendingCount(); n == 0 {
		t.Error("the refreshes published no pending workload: no hold of the refresh was exercised")
	}
}

// armedClock is a fake clock whose readings panic once armed.
type armedClock struct {
	*testingclock.FakeClock
	armed atomic.Bool
}

func (c *armedClock) Now() time.Time {
	if c.armed.Load() {
		panic("clock failed")
	}
	return c.FakeClock.Now()
}

func (c *armedClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// A clock that panics while a refresh takes the estimator's lock leaves
// the lock free: the scheduler's hooks, which take it every cycle, are
// not blocked by a panic they never see.
func TestLockForRefreshReleasesTheLockWhenTheClockPanics(t *testing.T) {
	env := newTestEnv(t, paperObjects())
	clk := &armedClock{FakeClock: testingclock.NewFakeClock(t0)}
	e := env.estimator(t, WithClock(clk))
	clk.armed.Store(true)
	func() {
		defer func() {
			if r := recover(); r == nil {
				t.Error("lockForRefresh did not panic with a panicking clock")
			}
		}()
		e.lockForRefresh().Unlock()
	}()
	if !e.mu.TryLock() {
		t.Fatal("the estimator's lock is still held after the clock panicked")
	}
	e.mu.Unlock()
}

// A clock that panics while a refresh releases the estimator's lock
// leaves the lock free too.
func TestRefreshHoldUnlockReleasesTheLockWhenTheClockPanics(t *testing.T) {
	env := newTestEnv(t, paperObjects())
	clk := &armedClock{FakeClock: testingclock.NewFakeClock(t0)}
	e := env.estimator(t, WithClock(clk))
	h := e.lockForRefresh()
	clk.armed.Store(true)
	func() {
		defer func() {
			if r := recover(); r == nil {
				t.Error("unlock did not panic with a panicking clock")
			}
		}()
		h.Unlock()
	}()
	if !e.mu.TryLock() {
		t.Fatal("the estimator's lock is still held after the clock panicked")
	}
	e.mu.Unlock()
}

// TestArrivalInALocalQueueTheManagerMapsLateIsScored: a workload whose
// arrival the estimator sees before Kueue's queue manager maps its
// LocalQueue (the two informers' events race) is recorded once the manager
// maps it, at the time it was seen: the refresh that publishes it gives it
// its ledger line and its admission is scored. One deleted or admitted
// before that is never brought back.
func TestArrivalInALocalQueueTheManagerMapsLateIsScored(t *testing.T) {
	cases := map[string]struct {
		// before is what happens to the workload before its LocalQueue is
		// mapped: "", "deleted" or "admitted".
		before       string
		wantScored   []workload.Reference
		wantUnscored []string
		wantPending  bool
	}{
		"mapped after the arrival": {
			wantScored: []workload.Reference{"ns/late-0"}, wantPending: true,
		},
		"deleted before the mapping": {before: "deleted"},
		"admitted before the mapping": {
			before: "admitted", wantUnscored: []string{"cq " + string(AdmittedBeforeEstimate)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := paperObjects()
			objs.pending = nil
			env, rep, e := warmRecordingEstimator(t, objs)
			h := e.WorkloadEventHandler()
			wl := queuedWorkload("late-0", "late", t0)
			h.OnAdd(wl, false)
			env.clock.Step(100 * time.Millisecond)
			switch tc.before {
			case "deleted":
				h.OnDelete(wl)
			case "admitted":
				e.ObserveAdmission(admittedCopy(wl), env.clock.Now())
			}
			if err := env.queues.AddLocalQueue(env.ctx, utiltestingapi.MakeLocalQueue("late", "ns").ClusterQueue("cq").Obj()); err != nil {
				t.Fatal(err)
			}
			if tc.before == "" {
				if err := env.queues.AddOrUpdateWorkload(logr.Discard(), wl); err != nil {
					t.Fatal(err)
				}
			}
			env.clock.Step(time.Second)
			e.Refresh(env.ctx)
			e.mu.Lock()
			p, pending := e.state.Book.Pending.Get(nameFromReference(workload.Key(wl)))
			parked := len(e.state.Parked())
			e.mu.Unlock()
			if pending != tc.wantPending || parked != 0 {
				t.Fatalf("tracked as pending: %v, want %v; %d arrivals still parked, want 0", pending, tc.wantPending, parked)
			}
			if tc.wantPending {
				if p.Stamp == nil {
					t.Fatal("no ledger line after the refresh that published it")
				}
				if at, ok := p.ArrivedAt(wl.CreationTimestamp.Time); !ok || !at.Equal(t0) {
					t.Errorf("arrival recorded at %v (known: %v), want the event's time %v", at, ok, t0)
				}
				env.clock.Step(time.Second)
				e.ObserveAdmission(admittedCopy(wl), env.clock.Now())
			}
			var scored []workload.Reference
			for _, s := range rep.scores {
				scored = append(scored, s.Workload)
			}
			if diff := cmp.Diff(tc.wantScored, scored, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("scored workloads (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantUnscored, rep.unscored, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("unscored reasons (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnmappedArrivalIsLookedUpEveryPeriodOnlyWhileYoung: a parked arrival
// asks for the next refresh, and each refresh that still finds its
// LocalQueue unmapped asks for another until the arrival is the maximum
// staleness old; after that it waits for refreshes that run anyway.
func TestUnmappedArrivalIsLookedUpEveryPeriodOnlyWhileYoung(t *testing.T) {
	objs := paperObjects()
	objs.pending = nil
	env, _, e := warmRecordingEstimator(t, objs)
	e.Refresh(env.ctx)
	if e.dirty.Load() {
		t.Fatal("dirty after a refresh with nothing parked")
	}
	e.WorkloadEventHandler().OnAdd(queuedWorkload("orphan", "missing", t0), false)
	var got []bool
	got = append(got, e.dirty.Load())
	for _, step := range []time.Duration{time.Second, e.opts.MaxStaleness} {
		env.clock.Step(step)
		e.refresh(env.ctx, false)
		got = append(got, e.dirty.Load())
	}
	if diff := cmp.Diff([]bool{true, true, false}, got); diff != "" {
		t.Errorf("refresh asked for after parking, after a refresh 1 s later, after one past the maximum staleness (-want +got):\n%s", diff)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.state.Parked()["ns/orphan"]; !ok {
		t.Error("the arrival was dropped; it stays parked until its LocalQueue is mapped or it goes")
	}
}

// unledgeredKeys is the sorted keys of the workloads e.state.Book holds without a line.
func unledgeredKeys(e *Estimator) []workload.Reference {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Sorted(e.state.Book.Unledgered())
}

// stamped reports whether workload wl has a ledger line.
func stamped(e *Estimator, wl *kueue.Workload) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return trackedOf(e, workload.Key(wl)).Stamp != nil
}

// TestRefreshLedgersOnlyTheWorkloadsWithoutALine: the set of pending
// workloads without a ledger line, which is all a refresh's ledger looks
// at, holds a workload from its arrival to its first Quotable estimate,
// keeps one the refresh could not estimate (an Unfeasible workload, a roll
// that panicked) for the next refresh, and lets go of one admitted or
// deleted.
func TestRefreshLedgersOnlyTheWorkloadsWithoutALine(t *testing.T) {
	objs := paperObjects()
	env, _, e := warmRecordingEstimator(t, objs)
	h := e.WorkloadEventHandler()
	p0, p1, p2, huge := objs.pending[0], objs.pending[1], objs.pending[2], objs.pending[3]
	want := func(step string, keys ...*kueue.Workload) {
		t.Helper()
		wantKeys := []workload.Reference{}
		for _, wl := range keys {
			wantKeys = append(wantKeys, workload.Key(wl))
		}
		slices.Sort(wantKeys)
		if diff := cmp.Diff(wantKeys, unledgeredKeys(e), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: workloads without a line (-want,+got):\n%s", step, diff)
		}
	}

	h.OnAdd(p0, false)
	h.OnAdd(p1, false)
	h.OnAdd(huge, false)
	want("arrived", p0, p1, huge)

	env.clock.Step(time.Second)
	e.Refresh(env.ctx)
	want("after a refresh: the Unfeasible one waits on", huge)
	if !stamped(e, p0) || !stamped(e, p1) || stamped(e, huge) {
		t.Errorf("lines after the refresh: p0 %v, p1 %v, huge %v; want true, true, false", stamped(e, p0), stamped(e, p1), stamped(e, huge))
	}

	h.OnDelete(huge)
	h.OnAdd(p2, false)
	want("huge deleted, p2 arrived", p2)
	e.mu.Lock()
	e.rng = rand.New(panickingSource{})
	e.mu.Unlock()
	env.clock.Step(time.Second)
	e.Refresh(env.ctx)
	if e.Panics() == 0 {
		t.Fatal("the refresh drew from the panicking source without panicking")
	}
	want("after a refresh whose roll panicked", p2)
	if stamped(e, p2) {
		t.Error("p2 got a line from a roll that panicked")
	}

	e.mu.Lock()
	e.rng = rand.New(rand.NewPCG(1, 2))
	e.mu.Unlock()
	env.clock.Step(time.Second)
	e.Refresh(env.ctx)
	want("after the next refresh")
	if !stamped(e, p2) {
		t.Error("p2 has no line after a refresh that estimated it")
	}

	p3 := pendingWorkload("p3", "500m", env.clock.Now())
	h.OnAdd(p3, false)
	admitted := p3.DeepCopy()
	admitted.Status.Admission = utiltestingapi.MakeAdmission("cq").Obj()
	e.ObserveAdmission(admitted, env.clock.Now().Add(time.Millisecond))
	want("p3 admitted before any refresh")
}
