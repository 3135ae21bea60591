package estimator_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/features"
	preemptexpectations "sigs.k8s.io/kueue/pkg/scheduler/preemption/expectations"
	utiltesting "sigs.k8s.io/kueue/pkg/util/testing"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/estimator"
)

// benchCluster is Kueue's real scheduler cache and queue manager holding
// clusterQueues ClusterQueues spread round-robin over cohorts cohorts, each
// with 16 CPUs and 64Gi of nominal quota, eight running workloads of 2 CPUs
// and 8Gi, and pending workloads of 1 CPU in four memory shapes in its own
// LocalQueue.
type benchCluster struct {
	ctx     context.Context
	client  client.Client
	cache   *schdcache.Cache
	queues  *qcache.Manager
	cqs     []*kueue.ClusterQueue
	pending []*kueue.Workload
	// clock is the estimator's: a benchmark steps it to make every
	// ClusterQueue's results stale.
	clock *testingclock.FakeClock
}

const benchNamespace = "bench"

func newBenchCluster(b *testing.B, clusterQueues, cohorts, pendingPerQueue int) *benchCluster {
	b.Helper()
	ctx := ctrl.LoggerInto(b.Context(), logr.Discard())
	log := logr.Discard()
	// Adding a workload to a queue reports its LocalQueue's pending count, a
	// scan of the ClusterQueue: the metric is off while the queues fill.
	localQueueMetrics := features.Enabled(features.LocalQueueMetrics)
	features.SetFeatureGateDuringTest(b, features.LocalQueueMetrics, false)
	defer features.SetFeatureGateDuringTest(b, features.LocalQueueMetrics, localQueueMetrics)

	c := &benchCluster{ctx: ctx, client: utiltesting.NewFakeClient(utiltesting.MakeNamespace(benchNamespace)), clock: testingclock.NewFakeClock(time.Now())}
	c.cache = schdcache.New(c.client)
	c.queues = qcache.NewManagerForUnitTests(c.client, c.cache, qcache.WithPreemptionExpectations(preemptexpectations.New()))
	c.cache.AddOrUpdateResourceFlavor(log, utiltestingapi.MakeResourceFlavor("default").Obj())
	created := time.Now().Add(-time.Hour)
	for i := range clusterQueues {
		cqName := fmt.Sprintf("cq-%d", i)
		lqName := fmt.Sprintf("lq-%d", i)
		cq := utiltestingapi.MakeClusterQueue(cqName).Cohort(kueue.CohortReference(fmt.Sprintf("team-%d", i%cohorts))).ResourceGroup(
			*utiltestingapi.MakeFlavorQuotas("default").
				Resource(corev1.ResourceCPU, "16").
				Resource(corev1.ResourceMemory, "64Gi").Obj()).Obj()
		lq := utiltestingapi.MakeLocalQueue(lqName, benchNamespace).ClusterQueue(cqName).Obj()
		c.cqs = append(c.cqs, cq)
		if err := c.cache.AddClusterQueue(ctx, cq); err != nil {
			b.Fatal(err)
		}
		if err := c.queues.AddClusterQueue(ctx, cq); err != nil {
			b.Fatal(err)
		}
		if err := c.cache.AddLocalQueue(lq); err != nil {
			b.Fatal(err)
		}
		if err := c.queues.AddLocalQueue(ctx, lq); err != nil {
			b.Fatal(err)
		}
		for j := range 8 {
			name := fmt.Sprintf("running-%d-%d", i, j)
			wl := utiltestingapi.MakeWorkload(name, benchNamespace).UID(types.UID(name)).Queue(kueue.LocalQueueName(lqName)).
				Request(corev1.ResourceCPU, "2").Request(corev1.ResourceMemory, "8Gi").Creation(created).
				ReserveQuotaAt(utiltestingapi.MakeAdmission(kueue.ClusterQueueReference(cqName)).PodSets(
					utiltestingapi.MakePodSetAssignment(kueue.DefaultPodSetName).
						Assignment(corev1.ResourceCPU, "default", "2").
						Assignment(corev1.ResourceMemory, "default", "8Gi").Obj()).Obj(), created).
				Obj()
			if !c.cache.AddOrUpdateWorkload(log, wl) {
				b.Fatalf("adding running workload %s", name)
			}
		}
		for j := range pendingPerQueue {
			name := fmt.Sprintf("pending-%d-%d", i, j)
			wl := utiltestingapi.MakeWorkload(name, benchNamespace).UID(types.UID(name)).Queue(kueue.LocalQueueName(lqName)).
				Request(corev1.ResourceCPU, "1").Request(corev1.ResourceMemory, fmt.Sprintf("%dGi", 1+j%4)).
				Creation(created.Add(time.Duration(j) * time.Millisecond)).Obj()
			if err := c.queues.AddOrUpdateWorkload(log, wl); err != nil {
				b.Fatal(err)
			}
			c.pending = append(c.pending, wl)
		}
	}
	return c
}

// estimator returns an estimator of the cluster set up as the manager sets
// it up: it knows the ClusterQueues and has seen the pending workloads
// arrive. A prior mean service time gives every Quotable workload a
// forecast, as observed completions would.
func (c *benchCluster) estimator(b *testing.B) *estimator.Estimator {
	b.Helper()
	return c.estimatorReading(b, c.cache, c.queues)
}

// estimatorReading is estimator reading the cluster's cache and queue
// manager through snapshots and queues.
func (c *benchCluster) estimatorReading(b *testing.B, snapshots estimator.SnapshotSource, queues estimator.QueueSource, opts ...estimator.Option) *estimator.Estimator {
	b.Helper()
	e, err := estimator.New(snapshots, queues, append([]estimator.Option{
		estimator.WithClock(c.clock),
		estimator.WithRand(rand.New(rand.NewPCG(1, 2))),
		estimator.WithPriorMeanService(10 * time.Minute)}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	if err := e.WarmStart(c.ctx, c.client); err != nil {
		b.Fatal(err)
	}
	cqHandler := e.ClusterQueueEventHandler()
	for _, cq := range c.cqs {
		cqHandler.OnAdd(cq, true)
	}
	wlHandler := e.WorkloadEventHandler()
	for _, wl := range c.pending {
		wlHandler.OnAdd(wl, false)
	}
	return e
}

// BenchmarkRefresh10000PendingOneClusterQueue is the estimator's whole
// forecast pass over one ClusterQueue with 10 000 pending workloads: its
// cache snapshot, Kueue's ordered pending list (the sort the visibility API
// also does, measured alone by BenchmarkPendingWorkloadsInfo10000), the
// conversion, the partition, the queue model and the forecast.
func BenchmarkRefresh10000PendingOneClusterQueue(b *testing.B) {
	c := newBenchCluster(b, 1, 1, 10000)
	e := c.estimator(b)
	b.ReportAllocs()
	for b.Loop() {
		e.Refresh(c.ctx)
	}
	if _, ok := e.Results().Workload(workload.Key(c.pending[len(c.pending)-1])); !ok {
		b.Fatal("the last pending workload has no estimate")
	}
}

// BenchmarkPendingWorkloadsInfo10000 is Kueue's own part of the refresh
// above: the ordered list of 10 000 pending workloads.
func BenchmarkPendingWorkloadsInfo10000(b *testing.B) {
	c := newBenchCluster(b, 1, 1, 10000)
	b.ReportAllocs()
	for b.Loop() {
		if got := len(c.queues.PendingWorkloadsInfo("cq-0")); got != 10000 {
			b.Fatalf("got %d pending workloads", got)
		}
	}
}

// BenchmarkInadmissibleCondition is the estimator's cost for one head the
// scheduler leaves unadmitted for want of quota: the partition of the
// workload against its ClusterQueue's snapshot (one of ten in a cohort) and
// the message.
func BenchmarkInadmissibleCondition(b *testing.B) {
	c := newBenchCluster(b, 10, 1, 1)
	e := c.estimator(b)
	snap, err := c.cache.Snapshot(c.ctx)
	if err != nil {
		b.Fatal(err)
	}
	cqs := snap.ClusterQueue("cq-3")
	info := workload.NewInfo(c.pending[3])
	b.ReportAllocs()
	for b.Loop() {
		if _, msg := e.InadmissibleCondition(kueue.WorkloadQuotaReservedReasonWaitingForQuota, "couldn't assign flavors", info, cqs); msg == "" {
			b.Fatal("empty message")
		}
	}
}

// BenchmarkObserveCycle is the estimator's cost per scheduling cycle.
func BenchmarkObserveCycle(b *testing.B) {
	c := newBenchCluster(b, 1, 1, 0)
	e := c.estimator(b)
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Millisecond)
		e.ObserveCycle(now.Add(-100*time.Microsecond), now)
	}
}

// BenchmarkObserveAdmission is the estimator's cost per admission, with the
// results of 10 000 pending workloads published (the admitted one's
// prediction is looked up and checked).
func BenchmarkObserveAdmission(b *testing.B) {
	c := newBenchCluster(b, 1, 1, 10000)
	e := c.estimator(b)
	e.Refresh(c.ctx)
	admitted := c.pending[0].DeepCopy()
	admitted.Status.Admission = utiltestingapi.MakeAdmission("cq-0").PodSets(
		utiltestingapi.MakePodSetAssignment(kueue.DefaultPodSetName).
			Assignment(corev1.ResourceCPU, "default", "1").Obj()).Obj()
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Millisecond)
		e.ObserveAdmission(admitted, now)
	}
}

// heapAfterGC is the live heap once the garbage collector has run.
func heapAfterGC() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// retainedByEstimator is the heap an estimator of c keeps once set up (the
// arrivals it saw) and refreshed twice (the published results and the
// ledger's lines), in bytes: in all, and in the published results alone
// (what a GC frees when they are dropped).
func retainedByEstimator(b *testing.B, c *benchCluster) (total, results int64) {
	before := heapAfterGC()
	e := c.estimator(b)
	// Twice: the estimator refreshes every period, and the steady state is a
	// publication that replaced an earlier one (sized after it).
	e.Refresh(c.ctx)
	e.Refresh(c.ctx)
	refreshed := heapAfterGC()
	e.DropResults()
	unpublished := heapAfterGC()
	runtime.KeepAlive(e)
	return int64(refreshed) - int64(before), int64(refreshed) - int64(unpublished)
}

// BenchmarkRetainedMemoryPerPendingWorkload measures the memory the
// estimator adds per pending workload: the live heap an estimator keeps
// (after a GC, in the steady state of its second refresh) over one
// ClusterQueue with 10 000 pending workloads, less
// what it keeps over the same ClusterQueue with none, divided by 10 000.
// The metrics are B/pending (in total), results-B/pending (its published
// estimate: what dropping the published results frees) and
// events-B/pending (the rest: what the estimator tracks per pending
// workload, its arrival time, kept by the informer handler, and its line
// in the prediction ledger, written by the refresh); ns/op is the time to
// set up and refresh an estimator of 10 000 pending workloads.
func BenchmarkRetainedMemoryPerPendingWorkload(b *testing.B) {
	const pending = 10000
	empty := newBenchCluster(b, 1, 1, 0)
	full := newBenchCluster(b, 1, 1, pending)
	var results, total float64
	n := 0
	for b.Loop() {
		t0, r0 := retainedByEstimator(b, empty)
		t1, r1 := retainedByEstimator(b, full)
		results += float64(r1-r0) / pending
		total += float64(t1-t0) / pending
		n++
	}
	b.ReportMetric(total/float64(n), "B/pending")
	b.ReportMetric((total-results)/float64(n), "events-B/pending")
	b.ReportMetric(results/float64(n), "results-B/pending")
}

// BenchmarkRetainedMemoryPerClusterQueue measures the memory the
// estimator adds per ClusterQueue: the live heap an estimator keeps (after
// a GC, in the steady state of its second refresh) over 1 000
// ClusterQueues in 100 cohorts, each with 8 running workloads and none
// pending, less what it keeps over 100 in 10 cohorts, divided by 900. The
// metrics are B/clusterqueue and results-B/clusterqueue (its published
// part: the model and the what-if scene). No workload has finished, so
// every service-time reservoir is as allocated, not as filled.
func BenchmarkRetainedMemoryPerClusterQueue(b *testing.B) {
	few := newBenchCluster(b, 100, 10, 0)
	many := newBenchCluster(b, 1000, 100, 0)
	var results, total float64
	n := 0
	for b.Loop() {
		t0, r0 := retainedByEstimator(b, few)
		t1, r1 := retainedByEstimator(b, many)
		total += float64(t1-t0) / 900
		results += float64(r1-r0) / 900
		n++
	}
	b.ReportMetric(total/float64(n), "B/clusterqueue")
	b.ReportMetric(results/float64(n), "results-B/clusterqueue")
}

// benchmarkRefresh is one whole refresh (every ClusterQueue recomputed) of
// clusterQueues ClusterQueues over cohorts cohorts with pendingPerQueue
// pending workloads each, after a first refresh has written the ledger.
func benchmarkRefresh(b *testing.B, clusterQueues, cohorts, pendingPerQueue int) {
	c := newBenchCluster(b, clusterQueues, cohorts, pendingPerQueue)
	c.benchmarkRefreshes(b, c.estimator(b))
}

// benchmarkRefreshes times e's whole refreshes of c, after a first one
// has written the ledger.
func (c *benchCluster) benchmarkRefreshes(b *testing.B, e *estimator.Estimator) {
	e.Refresh(c.ctx)
	b.ReportAllocs()
	for b.Loop() {
		e.Refresh(c.ctx)
	}
	if _, ok := e.Results().Workload(workload.Key(c.pending[len(c.pending)-1])); !ok {
		b.Fatal("the last pending workload has no estimate")
	}
}

// BenchmarkRefresh100000PendingOneClusterQueue is a whole refresh of one
// ClusterQueue with 100 000 pending workloads.
func BenchmarkRefresh100000PendingOneClusterQueue(b *testing.B) { benchmarkRefresh(b, 1, 1, 100000) }

// BenchmarkRefresh100000PendingWithServicePerShape is
// BenchmarkRefresh100000PendingOneClusterQueue after 60 completions of
// each of the ClusterQueue's five demand shapes (the running one and the
// four pending ones, each its own service time) were observed, so that
// the roll draws every running and pending workload's service from its
// shape's law, matched to the shape once per demand class.
func BenchmarkRefresh100000PendingWithServicePerShape(b *testing.B) {
	c := newBenchCluster(b, 1, 1, 100000)
	e := c.estimator(b)
	c.completeEachShape(b, e, 60)
	c.benchmarkRefreshes(b, e)
}

// completeEachShape makes e see n workloads of each of the demand shapes
// of the cluster's first ClusterQueue (its running workloads' 2 CPU and
// 8Gi, its pending workloads' 1 CPU and 1–4Gi) arrive, be admitted and
// complete, in turn, the running shape's after 20 minutes and the pending
// ones' after 5–8.
func (c *benchCluster) completeEachShape(b *testing.B, e *estimator.Estimator, n int) {
	b.Helper()
	type shape struct {
		cpu, memory string
		service     time.Duration
	}
	shapes := []shape{{"2", "8Gi", 20 * time.Minute}}
	for g := range 4 {
		shapes = append(shapes, shape{"1", fmt.Sprintf("%dGi", 1+g), time.Duration(5+g) * time.Minute})
	}
	h := e.WorkloadEventHandler()
	cq := kueue.ClusterQueueReference(c.cqs[0].Name)
	lq := kueue.LocalQueueName(fmt.Sprintf("lq-%d", 0))
	for i := range n * len(shapes) {
		sh := shapes[i%len(shapes)]
		name := fmt.Sprintf("completed-%d", i)
		c.clock.Step(time.Second)
		wl := utiltestingapi.MakeWorkload(name, benchNamespace).UID(types.UID(name)).Queue(lq).
			Request(corev1.ResourceCPU, sh.cpu).Request(corev1.ResourceMemory, sh.memory).Creation(c.clock.Now()).Obj()
		h.OnAdd(wl, false)
		admitted := wl.DeepCopy()
		admitted.Status.Admission = utiltestingapi.MakeAdmission(cq).PodSets(
			utiltestingapi.MakePodSetAssignment(kueue.DefaultPodSetName).
				Assignment(corev1.ResourceCPU, "default", sh.cpu).
				Assignment(corev1.ResourceMemory, "default", sh.memory).Obj()).Obj()
		h.OnUpdate(wl, admitted)
		c.clock.Step(sh.service)
		done := admitted.DeepCopy()
		apimeta.SetStatusCondition(&done.Status.Conditions, metav1.Condition{
			Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "Bench", LastTransitionTime: metav1.NewTime(c.clock.Now()),
		})
		h.OnUpdate(admitted, done)
	}
}

// BenchmarkRefresh100000PendingAfterOneArrival is the refresh the loop
// runs at 100 000 pending workloads in one ClusterQueue when one more
// arrives (untimed: Kueue's queue manager lists it and the estimator hears
// of it): the ClusterQueue is recomputed, and its ledger, unlike that of
// BenchmarkRefresh100000PendingOneClusterQueue, has a workload without a
// line to look for among the pending ones.
func BenchmarkRefresh100000PendingAfterOneArrival(b *testing.B) {
	c := newBenchCluster(b, 1, 1, 100000)
	e := c.estimator(b)
	e.Refresh(c.ctx)
	handler := e.WorkloadEventHandler()
	log := logr.Discard()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		c.clock.Step(time.Second)
		name := fmt.Sprintf("arrival-%d", i)
		wl := utiltestingapi.MakeWorkload(name, benchNamespace).UID(types.UID(name)).Queue("lq-0").
			Request(corev1.ResourceCPU, "1").Request(corev1.ResourceMemory, "1Gi").
			Creation(c.clock.Now()).Obj()
		if err := c.queues.AddOrUpdateWorkload(log, wl); err != nil {
			b.Fatal(err)
		}
		handler.OnAdd(wl, false)
		b.StartTimer()
		refreshLoopStep(c.ctx, e)
		b.StopTimer()
		if _, ok := e.Results().Workload(workload.Key(wl)); !ok {
			b.Fatalf("the arrival %s has no estimate", name)
		}
		b.StartTimer()
		i++
	}
}

// BenchmarkRefresh10000PendingThousandClusterQueues is a whole refresh of
// 1 000 ClusterQueues in 100 cohorts with 10 pending workloads each.
func BenchmarkRefresh10000PendingThousandClusterQueues(b *testing.B) {
	benchmarkRefresh(b, 1000, 100, 10)
}

// BenchmarkRefreshMillionPendingThousandClusterQueues is a whole refresh of
// 1 000 ClusterQueues in 100 cohorts with 1 000 pending workloads each, and
// the heap the estimator adds over that cluster (added-MB: the live heap
// after a GC, with the estimator set up and refreshed twice, less the
// cluster's alone). Building the cluster takes minutes and gigabytes: it
// runs only with ESTIMATOR_BENCH_1M=1.
func BenchmarkRefreshMillionPendingThousandClusterQueues(b *testing.B) {
	if os.Getenv("ESTIMATOR_BENCH_1M") != "1" {
		b.Skip("set ESTIMATOR_BENCH_1M=1 to build a cluster of 1 000 000 pending workloads")
	}
	c := newBenchCluster(b, 1000, 100, 1000)
	before := heapAfterGC()
	e := c.estimator(b)
	e.Refresh(c.ctx)
	e.Refresh(c.ctx)
	added := int64(heapAfterGC()) - int64(before)
	b.ReportAllocs()
	for b.Loop() {
		e.Refresh(c.ctx)
	}
	b.ReportMetric(float64(added)/1e6, "added-MB")
	runtime.KeepAlive(e)
}

// BenchmarkRefreshAfterOneAdmission is the refresh that follows one
// admission (the head of one of 1 000 ClusterQueues in 100 cohorts, with 10
// pending workloads each, gets its quota reservation in Kueue's cache and
// the estimator hears of it from the scheduler and the informer) in the
// refresh loop. Between iterations, untimed, the admission is undone (the
// workload deleted and created pending again) and refreshed away.
// max-cache-snapshot-ns is the longest call that held the scheduler cache's
// read lock in those refreshes: Cache.Snapshot, or, where the cache has
// them (the patched tree), its listing and partial snapshot.
func BenchmarkRefreshAfterOneAdmission(b *testing.B) {
	const clusterQueues, pendingPerQueue = 1000, 10
	c := newBenchCluster(b, clusterQueues, 100, pendingPerQueue)
	source, snapshots := c.timed()
	e := c.estimatorReading(b, source, c.queues)
	e.Refresh(c.ctx)
	snapshots.longest = 0
	log := logr.Discard()
	handler := e.WorkloadEventHandler()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		cq := c.cqs[i%clusterQueues]
		pending := c.pending[(i%clusterQueues)*pendingPerQueue]
		admitted := (&utiltestingapi.WorkloadWrapper{Workload: *pending.DeepCopy()}).ReserveQuotaAt(
			utiltestingapi.MakeAdmission(kueue.ClusterQueueReference(cq.Name)).PodSets(
				utiltestingapi.MakePodSetAssignment(kueue.DefaultPodSetName).
					Assignment(corev1.ResourceCPU, "default", "1").
					Assignment(corev1.ResourceMemory, "default", "1Gi").Obj()).Obj(), c.clock.Now()).Obj()
		c.queues.DeleteWorkload(log, workload.Key(pending))
		if !c.cache.AddOrUpdateWorkload(log, admitted) {
			b.Fatal("admitting a workload in the cache")
		}
		e.ObserveAdmission(admitted, c.clock.Now())
		handler.OnUpdate(pending, admitted)
		b.StartTimer()
		refreshLoopStep(c.ctx, e)
		b.StopTimer()
		if err := c.cache.DeleteWorkload(log, workload.Key(admitted)); err != nil {
			b.Fatal(err)
		}
		handler.OnDelete(admitted)
		if err := c.queues.AddOrUpdateWorkload(log, pending); err != nil {
			b.Fatal(err)
		}
		handler.OnAdd(pending, false)
		refreshLoopStep(c.ctx, e)
		b.StartTimer()
		i++
	}
	// The longest call under the scheduler cache's read lock (see
	// timedSnapshots).
	b.ReportMetric(float64(snapshots.longest.Nanoseconds()), "max-cache-snapshot-ns")
}

// refreshLoopStep is what one step of the refresh loop does when something
// changed: recompute the ClusterQueues whose inputs changed.
func refreshLoopStep(ctx context.Context, e *estimator.Estimator) { e.RefreshChanged(ctx) }

// timedSnapshots times every snapshot: Cache.Snapshot holds the cache's
// read lock from its first statement to its return, so its duration is how
// long the scheduler's writers (admissions, informer updates) may wait.
type timedSnapshots struct {
	estimator.SnapshotSource
	longest time.Duration
}

func (t *timedSnapshots) Snapshot(ctx context.Context, options ...schdcache.SnapshotOption) (*schdcache.Snapshot, error) {
	start := time.Now()
	defer func() { t.longest = max(t.longest, time.Since(start)) }()
	return t.SnapshotSource.Snapshot(ctx, options...)
}

// treeSnapshots is what a Kueue cache with the patch series' partial
// snapshots ("cache/scheduler: snapshot only the cohort trees of some
// ClusterQueues") offers the estimator; the released module's has not.
type treeSnapshots interface {
	VisitClusterQueues(visit func(cq kueue.ClusterQueueReference, root kueue.CohortReference, allocatableResourceGeneration int64))
	SnapshotClusterQueueTrees(ctx context.Context, clusterQueues sets.Set[kueue.ClusterQueueReference]) (*schdcache.Snapshot, error)
}

// timedTreeSnapshots is timedSnapshots over a cache with partial
// snapshots: it offers them to the estimator, and times each call, as
// each holds the cache's read lock throughout.
type timedTreeSnapshots struct {
	*timedSnapshots
	trees treeSnapshots
}

func (t *timedTreeSnapshots) VisitClusterQueues(visit func(kueue.ClusterQueueReference, kueue.CohortReference, int64)) {
	start := time.Now()
	defer func() { t.longest = max(t.longest, time.Since(start)) }()
	t.trees.VisitClusterQueues(visit)
}

func (t *timedTreeSnapshots) SnapshotClusterQueueTrees(ctx context.Context, clusterQueues sets.Set[kueue.ClusterQueueReference]) (*schdcache.Snapshot, error) {
	start := time.Now()
	defer func() { t.longest = max(t.longest, time.Since(start)) }()
	return t.trees.SnapshotClusterQueueTrees(ctx, clusterQueues)
}

// timed returns the cluster's cache as the estimator reads it, with every
// call that holds the cache's lock timed in the returned timedSnapshots:
// whole snapshots, and partial ones where the cache has them.
func (c *benchCluster) timed() (estimator.SnapshotSource, *timedSnapshots) {
	whole := &timedSnapshots{SnapshotSource: c.cache}
	if trees, ok := any(c.cache).(treeSnapshots); ok {
		return &timedTreeSnapshots{timedSnapshots: whole, trees: trees}, whole
	}
	return whole, whole
}

// latencyProbe calls call every interval until stopped and keeps the
// longest call: the longest the caller waited for a lock the refresh held,
// plus the call's own work.
type latencyProbe struct {
	stop    chan struct{}
	done    chan struct{}
	longest time.Duration
}

func startProbe(interval time.Duration, call func()) *latencyProbe {
	p := &latencyProbe{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for {
			select {
			case <-p.stop:
				return
			case <-time.After(interval):
			}
			start := time.Now()
			call()
			p.longest = max(p.longest, time.Since(start))
		}
	}()
	return p
}

// finish stops the probe and returns the longest call.
func (p *latencyProbe) finish() time.Duration {
	close(p.stop)
	<-p.done
	return p.longest
}

// BenchmarkRefreshLockHold100000Pending measures, over whole refreshes of
// one ClusterQueue with 100 000 pending workloads, the longest the refresh
// keeps the scheduler from a lock it takes:
//   - max-cache-snapshot-ns: the longest Cache.Snapshot (or listing or
//     partial snapshot, see timedTreeSnapshots), all of it under the
//     scheduler cache's read lock (explicit timing);
//   - max-queue-pending-list-ns: the longest call of the queue manager's
//     UpdateClusterQueue with an unchanged ClusterQueue (the manager's and
//     the ClusterQueue's write locks, which the scheduler's Heads and the
//     controllers take too, and little work), probed every 100µs while
//     PendingWorkloadsInfo copies the pending list under the ClusterQueue's
//     read lock (its sort runs after, unlocked);
//   - max-estimator-mu-ns: the longest ObserveCycle (the estimator's lock,
//     as the scheduler takes it every cycle), probed every 100µs;
//   - max-estimator-mu-hold-ns: the longest hold of that lock by the
//     refreshes, as they time it themselves (RefreshReport.LongestLockHold,
//     with the estimator on the real clock): what the probe's figure is
//     without its wait for a CPU.
//
// The same probes run for a second with no refresh first: idle-max-queue-
// pending-list-ns and idle-max-estimator-mu-ns are what the machine alone
// (its load, the garbage collector) puts in those figures. The probes need
// a second thread: the benchmark runs with GOMAXPROCS ≥ 2 whatever -cpu
// says. A probe's figure includes its own work and any wait for a CPU: it
// bounds the hold from above.
func BenchmarkRefreshLockHold100000Pending(b *testing.B) {
	defer runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0)))
	runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0)))
	c := newBenchCluster(b, 1, 1, 100000)
	source, snapshots := c.timed()
	holds := &longestHoldReporter{}
	e := c.estimatorReading(b, source, c.queues, estimator.WithClock(clock.RealClock{}), estimator.WithMetricsReporter(holds))
	e.Refresh(c.ctx)
	snapshots.longest = 0
	holds.longest = 0
	active := c.cqs[0].DeepCopy()
	apimeta.SetStatusCondition(&active.Status.Conditions, metav1.Condition{Type: kueue.ClusterQueueActive, Status: metav1.ConditionTrue, Reason: "Ready"})
	if err := c.queues.UpdateClusterQueue(c.ctx, active, false); err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	probes := func() (queue, mu *latencyProbe) {
		queue = startProbe(100*time.Microsecond, func() {
			if err := c.queues.UpdateClusterQueue(c.ctx, active, false); err != nil {
				b.Error(err)
			}
		})
		mu = startProbe(100*time.Microsecond, func() {
			now = now.Add(time.Millisecond)
			e.ObserveCycle(now.Add(-100*time.Microsecond), now)
		})
		return queue, mu
	}
	queueProbe, muProbe := probes()
	time.Sleep(time.Second)
	idleQueue, idleMu := queueProbe.finish(), muProbe.finish()
	queueProbe, muProbe = probes()
	for b.Loop() {
		e.Refresh(c.ctx)
	}
	b.ReportMetric(float64(snapshots.longest.Nanoseconds()), "max-cache-snapshot-ns")
	b.ReportMetric(float64(queueProbe.finish().Nanoseconds()), "max-queue-pending-list-ns")
	b.ReportMetric(float64(muProbe.finish().Nanoseconds()), "max-estimator-mu-ns")
	b.ReportMetric(float64(holds.longest.Nanoseconds()), "max-estimator-mu-hold-ns")
	b.ReportMetric(float64(idleQueue.Nanoseconds()), "idle-max-queue-pending-list-ns")
	b.ReportMetric(float64(idleMu.Nanoseconds()), "idle-max-estimator-mu-ns")
}

// longestHoldReporter keeps the longest RefreshReport.LongestLockHold of
// the refreshes it hears of; the refreshes of a benchmark run one at a time.
type longestHoldReporter struct{ longest time.Duration }

func (r *longestHoldReporter) ReportRefresh(rr estimator.RefreshReport) {
	r.longest = max(r.longest, rr.LongestLockHold)
}

func (*longestHoldReporter) ReportQueueModel(estimator.QueueModel)                                {}
func (*longestHoldReporter) ClearQueueModel(kueue.ClusterQueueReference)                          {}
func (*longestHoldReporter) ReportScore(estimator.Score)                                          {}
func (*longestHoldReporter) ReportUnscored(kueue.ClusterQueueReference, estimator.UnscoredReason) {}
