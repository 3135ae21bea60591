package estimator

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/features"
	preemptexpectations "sigs.k8s.io/kueue/pkg/scheduler/preemption/expectations"
	utiltesting "sigs.k8s.io/kueue/pkg/util/testing"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// testEnv is Kueue's real scheduler cache and queue manager, filled from
// objects, with a fake clock.
type testEnv struct {
	ctx    context.Context
	cache  *schdcache.Cache
	queues *qcache.Manager
	clock  *testingclock.FakeClock
}

type envObjects struct {
	flavors  []*kueue.ResourceFlavor
	cohorts  []*kueue.Cohort
	cqs      []*kueue.ClusterQueue
	lqs      []*kueue.LocalQueue
	running  []*kueue.Workload
	pending  []*kueue.Workload
	finished []*kueue.Workload
}

func newTestEnv(t *testing.T, objs envObjects) *testEnv {
	t.Helper()
	ctx := t.Context()
	log := logr.Discard()
	builder := utiltesting.NewClientBuilder()
	var wls kueue.WorkloadList
	for _, w := range append(append(append([]*kueue.Workload{}, objs.running...), objs.pending...), objs.finished...) {
		wls.Items = append(wls.Items, *w.DeepCopy())
	}
	var cqList kueue.ClusterQueueList
	for _, cq := range objs.cqs {
		cqList.Items = append(cqList.Items, *cq.DeepCopy())
	}
	cl := builder.WithLists(&wls, &cqList).Build()
	cache := schdcache.New(cl)
	queues := qcache.NewManagerForUnitTests(cl, cache, qcache.WithPreemptionExpectations(preemptexpectations.New()))
	for _, rf := range objs.flavors {
		cache.AddOrUpdateResourceFlavor(log, rf)
	}
	for _, c := range objs.cohorts {
		if err := cache.AddOrUpdateCohort(c); err != nil {
			t.Fatalf("adding cohort: %v", err)
		}
	}
	for _, cq := range objs.cqs {
		if err := cache.AddClusterQueue(ctx, cq); err != nil {
			t.Fatalf("adding cluster queue to cache: %v", err)
		}
		if err := queues.AddClusterQueue(ctx, cq); err != nil {
			t.Fatalf("adding cluster queue to queues: %v", err)
		}
	}
	for _, lq := range objs.lqs {
		if err := queues.AddLocalQueue(ctx, lq); err != nil {
			t.Fatalf("adding local queue: %v", err)
		}
	}
	for _, w := range objs.running {
		cache.AddOrUpdateWorkload(log, w)
	}
	for _, w := range objs.pending {
		if err := queues.AddOrUpdateWorkload(log, w); err != nil {
			t.Fatalf("adding pending workload: %v", err)
		}
	}
	return &testEnv{ctx: ctx, cache: cache, queues: queues, clock: testingclock.NewFakeClock(t0)}
}

func (env *testEnv) estimator(t *testing.T, opts ...Option) *Estimator {
	t.Helper()
	opts = append([]Option{WithClock(env.clock), WithRand(rand.New(rand.NewPCG(1, 2)))}, opts...)
	e, err := New(env.cache, env.queues, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

func cpuQueue(name, cpu string) *kueue.ClusterQueue {
	return utiltestingapi.MakeClusterQueue(name).
		ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, cpu).Resource(corev1.ResourceMemory, "1Gi").Obj()).
		Obj()
}

func runningWorkload(name, cq, cpu string, admitted time.Time) *kueue.Workload {
	return utiltestingapi.MakeWorkload(name, "ns").Queue("lq").
		Request(corev1.ResourceCPU, cpu).Request(corev1.ResourceMemory, "64Mi").
		ReserveQuotaAt(utiltestingapi.MakeAdmission(kueue.ClusterQueueReference(cq)).PodSets(
			utiltestingapi.MakePodSetAssignment(kueue.DefaultPodSetName).
				Assignment(corev1.ResourceCPU, "default", cpu).
				Assignment(corev1.ResourceMemory, "default", "64Mi").Obj()).Obj(), admitted).
		Creation(admitted.Add(-time.Second)).
		Obj()
}

func pendingWorkload(name, cpu string, created time.Time) *kueue.Workload {
	return utiltestingapi.MakeWorkload(name, "ns").Queue("lq").
		Request(corev1.ResourceCPU, cpu).Request(corev1.ResourceMemory, "64Mi").
		Creation(created).Obj()
}

func paperObjects() envObjects {
	objs := envObjects{
		flavors: []*kueue.ResourceFlavor{utiltestingapi.MakeResourceFlavor("default").Obj()},
		cqs:     []*kueue.ClusterQueue{cpuQueue("cq", "2")},
		lqs:     []*kueue.LocalQueue{utiltestingapi.MakeLocalQueue("lq", "ns").ClusterQueue("cq").Obj()},
	}
	for i, name := range []string{"r0", "r1", "r2", "r3"} {
		objs.running = append(objs.running, runningWorkload(name, "cq", "500m", t0.Add(-time.Duration(10+i)*time.Second)))
	}
	for i, name := range []string{"p0", "p1", "p2"} {
		objs.pending = append(objs.pending, pendingWorkload(name, "500m", t0.Add(-time.Duration(5-i)*time.Second)))
	}
	objs.pending = append(objs.pending, pendingWorkload("huge", "20", t0.Add(-time.Second)))
	return objs
}

func TestRefreshPaperPartitionAndModel(t *testing.T) {
	env := newTestEnv(t, paperObjects())
	e := env.estimator(t, WithPriorMeanService(20*time.Second))
	e.Refresh(env.ctx)
	res := e.Results()

	model, ok := res.Queue("cq")
	if !ok {
		t.Fatal("no queue model for cq")
	}
	wantModel := QueueModel{
		ClusterQueue: "cq", APriori: engine.APriori{EffectiveServers: 4, BottleneckFlavor: "default", BottleneckResource: "cpu"},
		PendingWorkloads: 4, UnfeasibleWorkloads: 1, At: t0,
	}
	if diff := cmp.Diff(wantModel, model); diff != "" {
		t.Errorf("queue model (-want,+got):\n%s", diff)
	}

	huge, ok := res.Workload(workload.NewReference("ns", "huge"))
	if !ok {
		t.Fatal("no estimate for the unfeasible workload")
	}
	wantHuge := WorkloadEstimate{
		ClusterQueue: "cq", Admissibility: Unfeasible, Method: MethodNone, EstimatedAt: t0,
		Reason: "flavor default: cpu 20 > potential 2 (nominal 2, borrowable 0)",
	}
	if diff := cmp.Diff(wantHuge, huge); diff != "" {
		t.Errorf("unfeasible estimate (-want,+got):\n%s", diff)
	}

	var last time.Duration
	for _, name := range []string{"p0", "p1", "p2"} {
		est, ok := res.Workload(workload.NewReference("ns", name))
		if !ok {
			t.Fatalf("no estimate for %s", name)
		}
		if est.Admissibility != Quotable || est.Method != MethodAPriori || !est.HasWait {
			t.Errorf("%s: got %+v, want a Quotable APriori estimate with a wait", name, est)
		}
		if est.ExpectedWait <= 0 || est.P50 > est.P90 || est.ExpectedWait < last {
			t.Errorf("%s: wait %v (P50 %v, P90 %v) must be positive, ordered, and not below the previous %v", name, est.ExpectedWait, est.P50, est.P90, last)
		}
		if !est.EstimatedAdmission.Equal(t0.Add(est.ExpectedWait)) {
			t.Errorf("%s: admission time %v != estimatedAt + wait", name, est.EstimatedAdmission)
		}
		last = est.ExpectedWait
	}
}

func TestRefreshWithoutServiceKnowledgeGivesAdmissibilityOnly(t *testing.T) {
	env := newTestEnv(t, paperObjects())
	e := env.estimator(t)
	e.Refresh(env.ctx)
	est, ok := e.Results().Workload(workload.NewReference("ns", "p0"))
	if !ok {
		t.Fatal("no estimate for p0")
	}
	want := WorkloadEstimate{ClusterQueue: "cq", Admissibility: Quotable, Method: MethodNone, EstimatedAt: t0}
	if diff := cmp.Diff(want, est); diff != "" {
		t.Errorf("estimate (-want,+got):\n%s", diff)
	}
}

func TestClassifyWithCohortBorrowing(t *testing.T) {
	cases := map[string]struct {
		borrowingLimit string
		request        string
		want           Admissibility
		wantReason     string
	}{
		"above nominal, within nominal plus borrowable": {request: "5", want: Quotable},
		"above nominal plus borrowable": {
			request: "7", want: Unfeasible,
			wantReason: "flavor default: cpu 7 > potential 6 (nominal 2, borrowable 4)",
		},
		"borrowing limit zero": {
			borrowingLimit: "0", request: "5", want: Unfeasible,
			wantReason: "flavor default: cpu 5 > potential 2 (nominal 2, borrowable 0)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a := utiltestingapi.MakeClusterQueue("a").Cohort("team").
				ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, "2", tc.borrowingLimit).Obj()).Obj()
			b := utiltestingapi.MakeClusterQueue("b").Cohort("team").
				ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, "4").Obj()).Obj()
			env := newTestEnv(t, envObjects{
				flavors: []*kueue.ResourceFlavor{utiltestingapi.MakeResourceFlavor("default").Obj()},
				cqs:     []*kueue.ClusterQueue{a, b},
			})
			snap, err := env.cache.Snapshot(env.ctx)
			if err != nil {
				t.Fatal(err)
			}
			info := workload.NewInfo(utiltestingapi.MakeWorkload("w", "ns").Request(corev1.ResourceCPU, tc.request).Obj())
			e := env.estimator(t)
			adm, reason := e.Classify(info, snap.ClusterQueue("a"))
			if adm != tc.want || reason != tc.wantReason {
				t.Errorf("Classify = (%s, %q), want (%s, %q)", adm, reason, tc.want, tc.wantReason)
			}
		})
	}
}

// TestClassifyFromManyGoroutinesAgrees classifies a Quotable and an
// Unfeasible workload against ClusterQueues of different shapes from eight
// goroutines at once, as the scheduler and the visibility server may, and
// checks every verdict: the scratch values Classify converts into are never
// shared between two calls (go test -race checks the rest).
func TestClassifyFromManyGoroutinesAgrees(t *testing.T) {
	wide := utiltestingapi.MakeClusterQueue("wide").ResourceGroup(
		*utiltestingapi.MakeFlavorQuotas("spot").Resource(corev1.ResourceCPU, "8").Resource(corev1.ResourceMemory, "32Gi").Obj(),
		*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, "4").Resource(corev1.ResourceMemory, "16Gi").Obj(),
	).Obj()
	narrow := utiltestingapi.MakeClusterQueue("narrow").ResourceGroup(
		*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, "2").Obj(),
	).Obj()
	env := newTestEnv(t, envObjects{
		flavors: []*kueue.ResourceFlavor{utiltestingapi.MakeResourceFlavor("default").Obj(), utiltestingapi.MakeResourceFlavor("spot").Obj()},
		cqs:     []*kueue.ClusterQueue{wide, narrow},
	})
	snap, err := env.cache.Snapshot(env.ctx)
	if err != nil {
		t.Fatal(err)
	}
	e := env.estimator(t)
	cases := []struct {
		cq   kueue.ClusterQueueReference
		info *workload.Info
		want Admissibility
	}{
		{"wide", workload.NewInfo(utiltestingapi.MakeWorkload("six", "ns").Request(corev1.ResourceCPU, "6").Request(corev1.ResourceMemory, "1Gi").Obj()), Quotable},
		{"narrow", workload.NewInfo(utiltestingapi.MakeWorkload("six", "ns").Request(corev1.ResourceCPU, "6").Obj()), Unfeasible},
		{"wide", workload.NewInfo(utiltestingapi.MakeWorkload("huge", "ns").Request(corev1.ResourceCPU, "9").Obj()), Unfeasible},
		{"narrow", workload.NewInfo(utiltestingapi.MakeWorkload("one", "ns").Request(corev1.ResourceCPU, "1").Obj()), Quotable},
	}
	var wrong atomic.Int64
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 400 {
				c := cases[(g+i)%len(cases)]
				if adm, _ := e.Classify(c.info, snap.ClusterQueue(c.cq)); adm != c.want {
					wrong.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := wrong.Load(); n > 0 {
		t.Errorf("%d of 3200 concurrent verdicts were wrong", n)
	}
}

func TestInadmissibleCondition(t *testing.T) {
	env := newTestEnv(t, paperObjects())
	snap, err := env.cache.Snapshot(env.ctx)
	if err != nil {
		t.Fatal(err)
	}
	e := env.estimator(t)
	small := workload.NewInfo(pendingWorkload("s", "500m", t0))
	huge := workload.NewInfo(pendingWorkload("h", "20", t0))
	const (
		waiting   = kueue.WorkloadQuotaReservedReasonWaitingForQuota
		exceeds   = kueue.WorkloadQuotaReservedReasonExceedsMaxQuota
		unfitting = "Wait time estimation: the workload is Unfeasible: flavor default: cpu 20 > potential 2 (nominal 2, borrowable 0)"
	)
	cases := map[string]struct {
		observability bool
		reason, msg   string
		info          *workload.Info
		cqs           *schdcache.ClusterQueueSnapshot
		wantReason    string
		wantMsg       string
	}{
		"quotable": {
			reason: waiting, msg: "insufficient unused quota", info: small, cqs: snap.ClusterQueue("cq"),
			wantReason: waiting, wantMsg: "insufficient unused quota. Wait time estimation: the workload is Quotable",
		},
		"unfeasible": {
			reason: exceeds, msg: "insufficient quota", info: huge, cqs: snap.ClusterQueue("cq"),
			wantReason: exceeds, wantMsg: "insufficient quota. " + unfitting,
		},
		"empty message": {
			reason: waiting, info: huge, cqs: snap.ClusterQueue("cq"),
			wantReason: waiting, wantMsg: unfitting,
		},
		"no snapshot keeps the message": {
			reason: waiting, msg: "ClusterQueue cq not found", info: small,
			wantReason: waiting, wantMsg: "ClusterQueue cq not found",
		},
		"an outcome not about quota is left alone": {
			reason: kueue.WorkloadQuotaReservedReasonWaitingForPreemptedWorkloads, msg: "waiting for preempted workloads", info: huge, cqs: snap.ClusterQueue("cq"),
			wantReason: kueue.WorkloadQuotaReservedReasonWaitingForPreemptedWorkloads, wantMsg: "waiting for preempted workloads",
		},
		"a misconfiguration (e.g. a namespace the LocalQueue refuses) is left alone": {
			reason: kueue.WorkloadQuotaReservedReasonMisconfigured, msg: "The workload's namespace does not match", info: huge, cqs: snap.ClusterQueue("cq"),
			wantReason: kueue.WorkloadQuotaReservedReasonMisconfigured, wantMsg: "The workload's namespace does not match",
		},
		"no reason (a NoFit without observability) gets the classification": {
			msg: "couldn't assign flavors", info: huge, cqs: snap.ClusterQueue("cq"),
			wantMsg: "couldn't assign flavors. " + unfitting,
		},
		"with observability an unfeasible workload gets ExceedsMaxQuota and Kueue's message": {
			observability: true, reason: waiting, msg: "insufficient quota", info: huge, cqs: snap.ClusterQueue("cq"),
			wantReason: exceeds, wantMsg: "insufficient quota",
		},
		"with observability a quotable workload keeps Kueue's reason and message": {
			observability: true, reason: waiting, msg: "insufficient unused quota", info: small, cqs: snap.ClusterQueue("cq"),
			wantReason: waiting, wantMsg: "insufficient unused quota",
		},
		"with observability Kueue's ExceedsMaxQuota is never taken back": {
			observability: true, reason: exceeds, msg: "insufficient quota", info: small, cqs: snap.ClusterQueue("cq"),
			wantReason: exceeds, wantMsg: "insufficient quota",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			features.SetFeatureGateDuringTest(t, features.UnadmittedWorkloadsObservability, tc.observability)
			gotReason, gotMsg := e.InadmissibleCondition(tc.reason, tc.msg, tc.info, tc.cqs)
			if diff := cmp.Diff([]string{tc.wantReason, tc.wantMsg}, []string{gotReason, gotMsg}); diff != "" {
				t.Errorf("InadmissibleCondition (-want,+got):\n%s", diff)
			}
		})
	}
	var nilEstimator *Estimator
	if r, m := nilEstimator.InadmissibleCondition(waiting, "m", small, snap.ClusterQueue("cq")); r != waiting || m != "m" {
		t.Errorf("nil estimator changed the condition: (%q, %q)", r, m)
	}
}

type recordingReporter struct {
	mu        sync.Mutex
	models    map[kueue.ClusterQueueReference]QueueModel
	cleared   []kueue.ClusterQueueReference
	scores    []Score
	unscored  []string
	refreshes []RefreshReport
}

func (r *recordingReporter) ReportRefresh(rr RefreshReport) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refreshes = append(r.refreshes, rr)
}

func (r *recordingReporter) ReportQueueModel(m QueueModel) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.models == nil {
		r.models = make(map[kueue.ClusterQueueReference]QueueModel)
	}
	r.models[m.ClusterQueue] = m
}

func (r *recordingReporter) ClearQueueModel(cq kueue.ClusterQueueReference) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleared = append(r.cleared, cq)
}

func (r *recordingReporter) ReportScore(s Score) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scores = append(r.scores, s)
}

func (r *recordingReporter) ReportUnscored(cq kueue.ClusterQueueReference, reason UnscoredReason) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.unscored = append(r.unscored, string(cq)+" "+string(reason))
}

func TestWarmStartTurnsOnForecastMethod(t *testing.T) {
	objs := paperObjects()
	for i := range 12 {
		admitted := t0.Add(-time.Duration(300-20*i) * time.Second)
		w := runningWorkload("done-"+string(rune('a'+i)), "cq", "500m", admitted)
		w.Spec.QueueName = "lq"
		finished := admitted.Add(time.Duration(15+i) * time.Second)
		w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{
			Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "ByTest", LastTransitionTime: metav1.NewTime(finished),
		})
		objs.finished = append(objs.finished, w)
	}
	env := newTestEnv(t, objs)
	e := env.estimator(t, WithMinServiceSamples(10))
	reader := utiltesting.NewClientBuilder().WithLists(func() *kueue.WorkloadList {
		var l kueue.WorkloadList
		for _, w := range append(append(objs.running, objs.pending...), objs.finished...) {
			l.Items = append(l.Items, *w.DeepCopy())
		}
		return &l
	}(), &kueue.ClusterQueueList{Items: []kueue.ClusterQueue{*objs.cqs[0]}}).Build()
	if err := e.WarmStart(env.ctx, reader); err != nil {
		t.Fatalf("WarmStart: %v", err)
	}
	e.Refresh(env.ctx)
	est, ok := e.Results().Workload(workload.NewReference("ns", "p0"))
	if !ok || est.Method != MethodForecast || !est.HasWait {
		t.Errorf("p0 estimate after warm start = %+v, want method Forecast with a wait", est)
	}
	model, _ := e.Results().Queue("cq")
	if !model.HasRates || model.MeanService < 15*time.Second || model.MeanService > 27*time.Second {
		t.Errorf("queue model after warm start = %+v, want measured rates with a mean service in [15s, 27s]", model)
	}
}

func TestWorkloadEventsFeedStatistics(t *testing.T) {
	env := newTestEnv(t, paperObjects())
	e := env.estimator(t)
	h := e.WorkloadEventHandler()
	running := runningWorkload("r9", "cq", "500m", t0.Add(-30*time.Second))
	done := running.DeepCopy()
	done.Status.Conditions = append(done.Status.Conditions, metav1.Condition{
		Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "ByTest", LastTransitionTime: metav1.NewTime(t0),
	})

	// Before the warm start an event is kept, not yet counted; the warm
	// start (of a cache that does not hold it) applies it.
	h.OnUpdate(running, done)
	e.mu.Lock()
	if s := e.statsFor("cq"); s.Service.Count() != 0 {
		t.Errorf("an event before the warm start was counted before it")
	}
	e.mu.Unlock()

	if err := e.WarmStart(env.ctx, utiltesting.NewClientBuilder().Build()); err != nil {
		t.Fatal(err)
	}
	preempted := running.DeepCopy()
	preempted.Status.Conditions = append(preempted.Status.Conditions, metav1.Condition{
		Type: kueue.WorkloadEvicted, Status: metav1.ConditionTrue, Reason: kueue.WorkloadEvictedByPreemption, LastTransitionTime: metav1.NewTime(t0),
	})
	h.OnUpdate(running, preempted)
	h.OnAdd(pendingWorkload("new", "500m", t0), false)

	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.statsFor("cq")
	if got := s.Service.Count(); got != 1 {
		t.Errorf("service observations = %d, want 1", got)
	}
	if mean, _ := s.Service.Mean(); mean != 30 {
		t.Errorf("service mean = %v, want 30", mean)
	}
	if got := s.Preemptions.Count(); got != 1 {
		t.Errorf("preemptions = %d, want 1", got)
	}
	if got := s.Arrivals.Count(); got != 1 {
		t.Errorf("arrivals = %d, want 1", got)
	}
}

type panickingQueues struct{ QueueSource }

func (panickingQueues) PendingWorkloadsInfo(kueue.ClusterQueueReference) []*workload.Info {
	panic("boom")
}

func TestRefreshRecoversFromPanics(t *testing.T) {
	env := newTestEnv(t, paperObjects())
	e, err := New(env.cache, panickingQueues{env.queues}, WithClock(env.clock))
	if err != nil {
		t.Fatal(err)
	}
	e.Refresh(env.ctx)
	if e.Panics() != 1 {
		t.Errorf("Panics() = %d, want 1", e.Panics())
	}
	if _, ok := e.Results().Queue("cq"); ok {
		t.Errorf("a queue whose refresh panicked was published")
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	env := newTestEnv(t, envObjects{})
	cases := map[string]struct {
		opt  Option
		want string
	}{
		"zero refresh period":       {WithRefreshPeriod(0), "refresh period"},
		"no refresh CPU":            {WithRefreshCPU(0), "refresh CPU"},
		"refresh CPU above a core":  {WithRefreshCPU(1001), "refresh CPU"},
		"staleness below refresh":   {WithMaxStaleness(time.Millisecond), "max staleness"},
		"negative staleness":        {WithMaxStaleness(-time.Second), "max staleness"},
		"alpha above one":           {WithEMAAlpha(1.5), "EMA alpha"},
		"alpha zero":                {WithEMAAlpha(0), "EMA alpha"},
		"no service samples":        {WithMinServiceSamples(0), "minimum service samples"},
		"negative horizon":          {WithHorizon(-time.Second), "horizon"},
		"too many forecast samples": {WithForecastSamples(1 << 30), "samples"},
		"negative prior":            {WithPriorMeanService(-time.Second), "prior mean service"},
		"zero half-life":            {WithStatisticsHalfLife(0), "half-life"},
		"zero sample size":          {WithServiceSampleSize(0), "sample size"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := New(env.cache, env.queues, tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New error = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
	if _, err := New(nil, env.queues); err == nil {
		t.Errorf("New accepted a nil snapshot source")
	}
}

func TestNilResultsAreEmpty(t *testing.T) {
	var r *Results
	if _, ok := r.Workload("ns/w"); ok {
		t.Error("nil results found a workload")
	}
	if _, ok := r.Queue("cq"); ok {
		t.Error("nil results found a queue")
	}
	for range r.Queues() {
		t.Error("nil results iterated a queue")
	}
	if !r.At().IsZero() {
		t.Error("nil results have a time")
	}
}

func TestEventTimesHaveClockResolution(t *testing.T) {
	env, e := warmPaperEstimator(t)
	h := e.WorkloadEventHandler()
	wl := pendingWorkload("fast", "500m", t0.Add(-time.Second))
	h.OnAdd(wl, false)

	env.clock.Step(1200 * time.Millisecond)
	admitted := wl.DeepCopy()
	admitted.Status.Admission = utiltestingapi.MakeAdmission("cq").Obj()
	e.ObserveAdmission(admitted, env.clock.Now())

	env.clock.Step(2500 * time.Millisecond)
	finished := admitted.DeepCopy()
	finished.Status.Conditions = append(finished.Status.Conditions,
		metav1.Condition{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "ByTest", LastTransitionTime: metav1.NewTime(t0)},
		metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "ByTest", LastTransitionTime: metav1.NewTime(t0.Add(4 * time.Second))})
	h.OnUpdate(admitted, finished)

	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.statsFor("cq")
	if wait, _ := s.Waits.Value(); wait != 1.2 {
		t.Errorf("observed wait = %vs, want 1.2s (from the arrival event, not the creation second)", wait)
	}
	if mean, _ := s.Service.Mean(); mean != 2.5 {
		t.Errorf("observed service = %vs, want 2.5s (from the events, not the conditions' seconds)", mean)
	}
	if e.state.Book.Pending.Len() != 0 || len(e.state.Stats.AdmittedAt) != 0 {
		t.Errorf("per-workload times leaked: pending %v, admitted %v", &e.state.Book.Pending, e.state.Stats.AdmittedAt)
	}
}

func TestNewResultsServesWhatItHolds(t *testing.T) {
	est := WorkloadEstimate{
		ClusterQueue: "cq", Admissibility: Quotable, Method: MethodForecast, HasWait: true,
		ExpectedWait: time.Second, P50: 800 * time.Millisecond, P90: 3 * time.Second,
		EstimatedAt: t0, EstimatedAdmission: t0.Add(time.Second), BeyondHorizon: true,
	}
	unfeasible := WorkloadEstimate{
		ClusterQueue: "cq", Admissibility: Unfeasible, Method: MethodNone, EstimatedAt: t0,
		Reason: "flavor default: cpu 20 > potential 2 (nominal 2, borrowable 0)",
	}
	other := WorkloadEstimate{ClusterQueue: "cq2", Admissibility: Quotable, Method: MethodNone, EstimatedAt: t0.Add(time.Minute)}
	model := QueueModel{ClusterQueue: "cq", APriori: engine.APriori{EffectiveServers: 4}}
	r := NewResults(t0, map[workload.Reference]WorkloadEstimate{"ns/w": est, "ns/u": unfeasible, "ns/o": other},
		map[kueue.ClusterQueueReference]QueueModel{"cq": model})
	for key, want := range map[workload.Reference]WorkloadEstimate{"ns/w": est, "ns/u": unfeasible, "ns/o": other} {
		if got, ok := r.Workload(key); !ok || got != want {
			t.Errorf("Workload(%s) = %+v, %v; want %+v", key, got, ok, want)
		}
		if got, ok := r.WorkloadIn(want.ClusterQueue, key); !ok || got != want {
			t.Errorf("WorkloadIn(%s, %s) = %+v, %v; want %+v", want.ClusterQueue, key, got, ok, want)
		}
	}
	if _, ok := r.Workload("ns/absent"); ok {
		t.Errorf("Workload of an unknown workload was found")
	}
	if got, ok := r.WorkloadIn("cq2", "ns/w"); ok {
		t.Errorf("WorkloadIn found cq's workload in cq2: %+v", got)
	}
	if got, ok := r.WorkloadIn("absent", "ns/w"); ok {
		t.Errorf("WorkloadIn found a workload in an unknown ClusterQueue: %+v", got)
	}
	var none *Results
	if _, ok := none.WorkloadIn("cq", "ns/w"); ok {
		t.Errorf("nil results hold a workload")
	}
	if _, ok := none.Workload("ns/w"); ok {
		t.Errorf("nil results hold a workload")
	}
	odd := NewResults(t0, map[workload.Reference]WorkloadEstimate{"ns/x": {ClusterQueue: "cq", Method: "Guess", EstimatedAt: t0}}, nil)
	if got, _ := odd.Workload("ns/x"); got.Method != MethodNone {
		t.Errorf("an unknown method reads back as %q, want %q", got.Method, MethodNone)
	}
	if got, ok := r.Queue("cq"); !ok || !cmp.Equal(got, model) {
		t.Errorf("Queue = %+v, %v", got, ok)
	}
	if !r.At().Equal(t0) {
		t.Errorf("At = %v", r.At())
	}
}

// A ClusterQueue whose admission order the manager sets by fair sharing
// says that the forecast does not model it, and only then.
func TestQueueModelNamesTheOrderingItDoesNotModel(t *testing.T) {
	cohortCQ := cpuQueue("in-cohort", "2")
	cohortCQ.Spec.CohortName = "research"
	scoped := utiltestingapi.MakeClusterQueue("scoped").
		ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, "2").Obj()).
		AdmissionMode(kueue.UsageBasedAdmissionFairSharing).Obj()
	// An admissionScope whose mode is NoAdmissionFairSharing keeps the
	// ClusterQueue's own order (Kueue's admissionfairsharing.ResourceWeights).
	scopedOff := utiltestingapi.MakeClusterQueue("scoped-off").
		ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, "2").Obj()).
		AdmissionMode(kueue.NoAdmissionFairSharing).Obj()
	plain := cpuQueue("plain", "2")
	objs := envObjects{
		flavors: []*kueue.ResourceFlavor{utiltestingapi.MakeResourceFlavor("default").Obj()},
		cohorts: []*kueue.Cohort{utiltestingapi.MakeCohort("research").Obj()},
		cqs:     []*kueue.ClusterQueue{cohortCQ, scoped, scopedOff, plain},
	}
	tests := map[string]struct {
		opts []Option
		want map[kueue.ClusterQueueReference]Ordering
	}{
		"neither on": {want: map[kueue.ClusterQueueReference]Ordering{"in-cohort": "", "scoped": "", "scoped-off": "", "plain": ""}},
		"fair sharing": {opts: []Option{WithFairSharing(true)},
			want: map[kueue.ClusterQueueReference]Ordering{"in-cohort": OrderingFairSharing, "scoped": "", "scoped-off": "", "plain": ""}},
		"admission fair sharing": {opts: []Option{WithAdmissionFairSharing(true)},
			want: map[kueue.ClusterQueueReference]Ordering{"in-cohort": "", "scoped": OrderingAdmissionFairSharing, "scoped-off": "", "plain": ""}},
		"admission fair sharing rolled from the queue manager's usage": {
			opts: []Option{WithAdmissionFairSharing(true), WithAdmissionFairSharingUsage(10*time.Minute, 5*time.Minute, nil)},
			want: map[kueue.ClusterQueueReference]Ordering{"in-cohort": "", "scoped": "", "scoped-off": "", "plain": ""}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := newTestEnv(t, objs)
			e := env.estimator(t, tc.opts...)
			h := e.ClusterQueueEventHandler()
			for _, cq := range objs.cqs {
				h.OnAdd(cq, true)
			}
			e.Refresh(env.ctx)
			got := map[kueue.ClusterQueueReference]Ordering{}
			for name, m := range e.Results().Queues() {
				got[name] = m.UnmodelledOrdering
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unmodelled ordering (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestWithinClusterQueuePreemptionReachesTheRoll: a high-priority workload
// facing a ClusterQueue full of low-priority work is forecast to be
// admitted at once (no admission latency measured yet) when the spec's
// withinClusterQueue lets it preempt, and after a completion otherwise.
func TestWithinClusterQueuePreemptionReachesTheRoll(t *testing.T) {
	tests := map[string]struct {
		preemption *kueue.ClusterQueuePreemption
		want       bool
	}{
		"LowerPriority preempts": {
			preemption: &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority},
			want:       true,
		},
		"LowerOrNewerEqualPriority preempts": {
			preemption: &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerOrNewerEqualPriority},
			want:       true,
		},
		"Never waits":         {preemption: &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyNever}},
		"no preemption waits": {},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cq := cpuQueue("cq", "2")
			cq.Spec.Preemption = tc.preemption
			objs := envObjects{
				flavors: []*kueue.ResourceFlavor{utiltestingapi.MakeResourceFlavor("default").Obj()},
				cqs:     []*kueue.ClusterQueue{cq},
				lqs:     []*kueue.LocalQueue{utiltestingapi.MakeLocalQueue("lq", "ns").ClusterQueue("cq").Obj()},
			}
			for i, name := range []string{"r0", "r1", "r2", "r3"} {
				objs.running = append(objs.running, runningWorkload(name, "cq", "500m", t0.Add(-time.Duration(1+i)*time.Second)))
			}
			urgent := pendingWorkload("urgent", "500m", t0.Add(-time.Second))
			urgent.Spec.Priority = ptr.To[int32](1000)
			objs.pending = append(objs.pending, urgent)
			env := newTestEnv(t, objs)
			e := env.estimator(t, WithPriorMeanService(20*time.Second))
			e.ClusterQueueEventHandler().OnAdd(cq, true)
			e.Refresh(env.ctx)
			est, ok := e.Results().Workload(workload.NewReference("ns", "urgent"))
			if !ok || !est.HasWait {
				t.Fatalf("urgent estimate = %+v, want one with a wait", est)
			}
			if diff := cmp.Diff(tc.want, est.ExpectedWait == 0); diff != "" {
				t.Errorf("admitted at once (expected wait %v) (-want,+got):\n%s", est.ExpectedWait, diff)
			}
		})
	}
}

// TestPreemptionDelayIsMeasuredApart: the delay from a preemption to the
// next admission feeds the roll's preemption delay, not the admission
// latency after completions.
func TestPreemptionDelayIsMeasuredApart(t *testing.T) {
	env, e := warmPaperEstimator(t)
	e.Refresh(env.ctx) // workloads are pending: a completion frees quota for them
	h := e.WorkloadEventHandler()

	running := runningWorkload("r9", "cq", "500m", t0.Add(-30*time.Second))
	done := running.DeepCopy()
	done.Status.Conditions = append(done.Status.Conditions, metav1.Condition{
		Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "ByTest", LastTransitionTime: metav1.NewTime(t0),
	})
	h.OnUpdate(running, done)
	env.clock.Step(time.Second)
	e.ObserveAdmission(runningWorkload("a1", "cq", "500m", env.clock.Now()), env.clock.Now())

	preemptThenAdmit(env, e)

	e.mu.Lock()
	v := e.state.Stats.Shared().View(e.statsFor("cq"))
	e.mu.Unlock()
	type delays struct{ AdmissionLatency, PreemptionDelay float64 }
	want := delays{AdmissionLatency: 1, PreemptionDelay: 3}
	if diff := cmp.Diff(want, delays{v.AdmissionLatency, v.PreemptionDelay}, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("measured delays in seconds (-want +got):\n%s", diff)
	}
}

// TestReclaimDoesNotMeasureAPreemptionDelay: a workload preempted by
// another ClusterQueue's reclaim says nothing about how long this
// ClusterQueue's preemptors wait: its next admission is no preemptor's.
func TestReclaimDoesNotMeasureAPreemptionDelay(t *testing.T) {
	env, e := warmPaperEstimator(t)
	e.Refresh(env.ctx)
	preemptThenAdmitFor(env, e, kueue.InCohortReclamationReason)
	e.mu.Lock()
	v := e.state.Stats.Shared().View(e.statsFor("cq"))
	e.mu.Unlock()
	if v.PreemptionDelay != 0 {
		t.Errorf("preemption delay after a reclaim = %v s, want none measured (0)", v.PreemptionDelay)
	}
}

// TestReleaseDelayIsMeasuredFromEvictionToRelease: how long a workload
// evicted by preemption holds its quota is measured in its ClusterQueue
// from the eviction's sighting to the release's; evicted and released in
// one update it is 0, and an eviction that is no preemption measures
// nothing.
func TestReleaseDelayIsMeasuredFromEvictionToRelease(t *testing.T) {
	evicted := func(wl *kueue.Workload, reason string, at time.Time) *kueue.Workload {
		out := wl.DeepCopy()
		out.Status.Conditions = append(out.Status.Conditions, metav1.Condition{
			Type: kueue.WorkloadEvicted, Status: metav1.ConditionTrue, Reason: reason, LastTransitionTime: metav1.NewTime(at),
		})
		if reason == kueue.WorkloadEvictedByPreemption {
			out.Status.Conditions = append(out.Status.Conditions, metav1.Condition{
				Type: kueue.WorkloadPreempted, Status: metav1.ConditionTrue, Reason: kueue.InCohortReclamationReason, LastTransitionTime: metav1.NewTime(at),
			})
		}
		return out
	}
	released := func(wl *kueue.Workload) *kueue.Workload {
		out := wl.DeepCopy()
		out.Status.Admission = nil
		return out
	}
	cases := map[string]struct {
		reason   string
		together bool
		want     []float64 // the measured release delays
	}{
		"evicted, released 400 ms later":   {reason: kueue.WorkloadEvictedByPreemption, want: []float64{0.4}},
		"evicted and released at once":     {reason: kueue.WorkloadEvictedByPreemption, together: true, want: []float64{0}},
		"deactivated, then released":       {reason: kueue.WorkloadDeactivated},
		"deactivated and released at once": {reason: kueue.WorkloadDeactivated, together: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env, e := warmPaperEstimator(t)
			h := e.WorkloadEventHandler()
			victim := runningWorkload("r8", "cq", "500m", t0.Add(-20*time.Second))
			out := evicted(victim, tc.reason, env.clock.Now())
			if tc.together {
				h.OnUpdate(victim, released(out))
			} else {
				h.OnUpdate(victim, out)
				env.clock.Step(400 * time.Millisecond)
				h.OnUpdate(out, released(out))
			}
			// Admitted again and released 2 s later, without an eviction:
			// the first eviction, forgotten at its release, measures
			// nothing more.
			readmitted := victim.DeepCopy()
			h.OnUpdate(released(out), readmitted)
			env.clock.Step(2 * time.Second)
			h.OnUpdate(readmitted, released(readmitted))
			e.mu.Lock()
			defer e.mu.Unlock()
			var got []float64
			if d, ok := e.statsFor("cq").ReleaseDelay.Value(); ok {
				got = append(got, d)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("release delays (-want,+got):\n%s", diff)
			}
		})
	}
}

// warmPaperEstimator is an estimator of paperObjects, warm-started from an
// empty list, as the tests of its measured delays use it.
func warmPaperEstimator(t *testing.T) (*testEnv, *Estimator) {
	t.Helper()
	env := newTestEnv(t, paperObjects())
	e := env.estimator(t)
	if err := e.WarmStart(env.ctx, utiltesting.NewClientBuilder().Build()); err != nil {
		t.Fatal(err)
	}
	return env, e
}

// preemptThenAdmit has the informer see the running r8 evicted by
// preemption 9 s from now, and the scheduler admit a2 3 s after that: a
// preemption delay of 3 s as measured from the eviction's sighting.
func preemptThenAdmit(env *testEnv, e *Estimator) {
	preemptThenAdmitFor(env, e, kueue.InClusterQueueReason)
}

// preemptThenAdmitFor is preemptThenAdmit with the Preempted condition's
// reason given.
func preemptThenAdmitFor(env *testEnv, e *Estimator, reason string) {
	env.clock.Step(9 * time.Second)
	victim := runningWorkload("r8", "cq", "500m", t0.Add(-20*time.Second))
	e.WorkloadEventHandler().OnUpdate(victim, preemptedAt(victim, reason, env.clock.Now()))
	env.clock.Step(3 * time.Second)
	e.ObserveAdmission(runningWorkload("a2", "cq", "500m", env.clock.Now()), env.clock.Now())
}

// preemptedAt is wl evicted by preemption at at, with the Preempted
// condition's reason given.
func preemptedAt(wl *kueue.Workload, reason string, at time.Time) *kueue.Workload {
	out := wl.DeepCopy()
	out.Status.Conditions = append(out.Status.Conditions, metav1.Condition{
		Type: kueue.WorkloadEvicted, Status: metav1.ConditionTrue, Reason: kueue.WorkloadEvictedByPreemption, LastTransitionTime: metav1.NewTime(at),
	}, metav1.Condition{
		Type: kueue.WorkloadPreempted, Status: metav1.ConditionTrue, Reason: reason, LastTransitionTime: metav1.NewTime(at),
	})
	return out
}

// admitWithWriteLag has the scheduler admit a1 now and the informer see
// it 250 ms later: a measured write lag of 250 ms.
func admitWithWriteLag(env *testEnv, e *Estimator) {
	decided := env.clock.Now()
	admitted := runningWorkload("a1", "cq", "500m", decided)
	e.ObserveAdmission(admitted, decided)
	env.clock.Step(250 * time.Millisecond)
	e.WorkloadEventHandler().OnUpdate(pendingWorkload("a1", "500m", admitted.CreationTimestamp.Time), admitted)
}

// TestPreemptionDelayAddsTheWriteLag: the preemption delay the roll gets is
// the measured delay from the eviction's sighting to the next admission
// plus the lag from an admission decision to its sighting by the informer
// (the eviction is such a write, seen that much after the decision).
func TestPreemptionDelayAddsTheWriteLag(t *testing.T) {
	env, e := warmPaperEstimator(t)
	admitWithWriteLag(env, e)

	preemptThenAdmit(env, e)

	e.mu.Lock()
	v := e.state.Stats.Shared().View(e.statsFor("cq"))
	e.mu.Unlock()
	if diff := cmp.Diff(3.25, v.PreemptionDelay, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("preemption delay in seconds (-want +got):\n%s", diff)
	}
}

// TestPreemptionReactionIsMeasuredFromThePreemptorsArrival: at the
// admission that follows a preemption, a workload that arrived before the
// eviction's sighting with a higher priority than its victim is the
// preemptor: the time from its arrival to that sighting is a reaction
// sample, and the preemption delay the roll gets is then counted from the
// sighting without the write lag (the eviction's write is in the
// reaction), with the measured delays as its sample. A workload of the
// victim's priority, or one that arrived after the eviction, measures no
// reaction: the roll gets the mean delay plus the write lag, no samples.
func TestPreemptionReactionIsMeasuredFromThePreemptorsArrival(t *testing.T) {
	cases := map[string]struct {
		priority      int32
		arriveAfter   bool
		wantReactions []float64
		wantDelays    []float64
		wantDelay     float64
	}{
		"a higher-priority preemptor":         {priority: 1000, wantReactions: []float64{2}, wantDelays: []float64{3}, wantDelay: 3},
		"a workload of the victim's priority": {priority: 0, wantDelay: 3.25},
		"a preemptor seen after the eviction": {priority: 1000, arriveAfter: true, wantDelay: 3.25},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env, e := warmPaperEstimator(t)
			h := e.WorkloadEventHandler()
			admitWithWriteLag(env, e)

			created := env.clock.Now()
			urgent := pendingWorkload("urgent", "500m", created)
			urgent.Spec.Priority = ptr.To(tc.priority)
			if !tc.arriveAfter {
				h.OnAdd(urgent, false)
			}
			env.clock.Step(2 * time.Second)
			victim := runningWorkload("r8", "cq", "500m", t0.Add(-20*time.Second))
			h.OnUpdate(victim, preemptedAt(victim, kueue.InClusterQueueReason, env.clock.Now()))
			if tc.arriveAfter {
				env.clock.Step(time.Second)
				h.OnAdd(urgent, false)
				env.clock.Step(2 * time.Second)
			} else {
				env.clock.Step(3 * time.Second)
			}
			in := runningWorkload("urgent", "cq", "500m", env.clock.Now())
			in.CreationTimestamp = urgent.CreationTimestamp
			in.Spec.Priority = ptr.To(tc.priority)
			e.ObserveAdmission(in, env.clock.Now())

			e.mu.Lock()
			v := e.state.Stats.Shared().View(e.statsFor("cq"))
			e.mu.Unlock()
			type got struct {
				Reactions, Delays []float64
				Delay             float64
			}
			want := got{Reactions: tc.wantReactions, Delays: tc.wantDelays, Delay: tc.wantDelay}
			if diff := cmp.Diff(want, got{v.PreemptionReactionSample, v.PreemptionDelaySample, v.PreemptionDelay}, cmpopts.EquateApprox(0, 1e-9), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("preemption reactions and delay in seconds (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCompletionMeasuresLatencyOnlyWithQuotableWorkloadsPending: a
// completion starts an admission-latency measurement only when the last
// refresh found a Quotable workload pending. With only an Unfeasible one
// pending (it never takes the freed quota), the next admission, of a
// workload that arrived later, is no latency sample.
func TestCompletionMeasuresLatencyOnlyWithQuotableWorkloadsPending(t *testing.T) {
	cases := map[string]struct {
		pending []string // names of paperObjects' pending workloads to keep
		want    []float64
	}{
		"a Quotable workload pending": {pending: []string{"p0", "huge"}, want: []float64{2}},
		"only an Unfeasible workload": {pending: []string{"huge"}},
		"nothing pending":             {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := paperObjects()
			objs.pending = slices.DeleteFunc(objs.pending, func(wl *kueue.Workload) bool { return !slices.Contains(tc.pending, wl.Name) })
			env := newTestEnv(t, objs)
			e := env.estimator(t)
			if err := e.WarmStart(env.ctx, utiltesting.NewClientBuilder().Build()); err != nil {
				t.Fatal(err)
			}
			e.Refresh(env.ctx)

			running := objs.running[0]
			done := running.DeepCopy()
			done.Status.Conditions = append(done.Status.Conditions, metav1.Condition{
				Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "ByTest", LastTransitionTime: metav1.NewTime(env.clock.Now()),
			})
			e.WorkloadEventHandler().OnUpdate(running, done)
			env.clock.Step(2 * time.Second)
			e.ObserveAdmission(runningWorkload("later", "cq", "500m", env.clock.Now()), env.clock.Now())

			e.mu.Lock()
			v := e.state.Stats.Shared().View(e.statsFor("cq"))
			e.mu.Unlock()
			if diff := cmp.Diff(tc.want, v.AdmissionLatencySample, cmpopts.EquateApprox(0, 1e-9), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("latency sample in seconds (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAdmissionLatencySampleIsKept: the admission latencies measured after
// completions reach the roll as a sample, with their mean as the fixed
// latency.
func TestAdmissionLatencySampleIsKept(t *testing.T) {
	env, e := warmPaperEstimator(t)
	e.Refresh(env.ctx) // workloads are pending: a completion frees quota for them
	h := e.WorkloadEventHandler()
	for i, latency := range []time.Duration{time.Second, 3 * time.Second, 500 * time.Millisecond} {
		running := runningWorkload(fmt.Sprintf("r%d", i), "cq", "500m", t0.Add(-30*time.Second))
		done := running.DeepCopy()
		done.Status.Conditions = append(done.Status.Conditions, metav1.Condition{
			Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "ByTest", LastTransitionTime: metav1.NewTime(env.clock.Now()),
		})
		h.OnUpdate(running, done)
		env.clock.Step(latency)
		e.ObserveAdmission(runningWorkload(fmt.Sprintf("a%d", i), "cq", "500m", env.clock.Now()), env.clock.Now())
	}
	e.mu.Lock()
	v := e.state.Stats.Shared().View(e.statsFor("cq"))
	e.mu.Unlock()
	slices.Sort(v.AdmissionLatencySample)
	if diff := cmp.Diff([]float64{0.5, 1, 3}, v.AdmissionLatencySample, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("latency sample in seconds (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(1.5, v.AdmissionLatency, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("mean latency in seconds (-want +got):\n%s", diff)
	}
}

// TestRollDrawsTheSharedLatencyUntilItsOwnHasEnough: a ClusterQueue rolls
// with its own admission latencies once it has queuestats.MinOwnLatencySamples of
// them, and before that with every ClusterQueue's; with none measured
// anywhere, with none.
func TestRollDrawsTheSharedLatencyUntilItsOwnHasEnough(t *testing.T) {
	type latency struct {
		Mean   float64
		Sample []float64
	}
	cases := map[string]struct {
		quiet, busy []float64 // latencies measured in each ClusterQueue
		want        latency   // what quiet rolls with
	}{
		"nothing measured":               {},
		"one of its own, none elsewhere": {quiet: []float64{5}, want: latency{5, []float64{5}}},
		"one of its own, more elsewhere": {quiet: []float64{5}, busy: []float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
			want: latency{5.8 / 9, []float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 5}}},
		"enough of its own": {quiet: []float64{1, 1, 1, 1, 1, 1, 1, 1}, busy: []float64{0.1},
			want: latency{1, []float64{1, 1, 1, 1, 1, 1, 1, 1}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env, e := warmPaperEstimator(t)
			e.mu.Lock()
			defer e.mu.Unlock()
			for cq, sample := range map[kueue.ClusterQueueReference][]float64{"quiet": tc.quiet, "busy": tc.busy} {
				for _, d := range sample {
					e.statsFor(cq).AdmissionLatency.ObserveAt(env.clock.Now(), d)
					e.state.Stats.Shared().AdmissionLatency.ObserveAt(env.clock.Now(), d)
				}
			}
			var got latency
			got.Mean, got.Sample = e.state.Stats.Shared().Latency(e.statsFor("quiet"))
			slices.Sort(got.Sample)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("latency quiet rolls with (-want +got):\n%s", diff)
			}
		})
	}
}
