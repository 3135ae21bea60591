package estimator

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/util/sets"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/workload"
)

// wholeSnapshots hides every method of a source but Snapshot: an estimator
// over it takes a whole Snapshot each refresh.
type wholeSnapshots struct{ SnapshotSource }

// recordedTrees is a treeSnapshotSource over a Kueue cache that records the
// ClusterQueues each partial snapshot was asked for, and can change the
// cache between the listing and the snapshot (beforeSnapshot). Over a cache
// that snapshots cohort trees itself (Kueue's tree with the patch series)
// it forwards to it; over the released Kueue module, which has no partial
// snapshot, it takes a whole Snapshot and removes the ClusterQueues of the
// other trees, what the patch's own tests (TestSnapshotClusterQueueTrees)
// check the partial snapshot to hold.
type recordedTrees struct {
	cache          *schdcache.Cache
	asked          []sets.Set[kueue.ClusterQueueReference]
	beforeSnapshot func()
}

func (r *recordedTrees) Snapshot(ctx context.Context, options ...schdcache.SnapshotOption) (*schdcache.Snapshot, error) {
	return r.cache.Snapshot(ctx, options...)
}

func (r *recordedTrees) VisitClusterQueues(visit func(cq kueue.ClusterQueueReference, root kueue.CohortReference, generation int64)) {
	if trees, ok := any(r.cache).(treeSnapshotSource); ok {
		trees.VisitClusterQueues(visit)
		return
	}
	snap, err := r.cache.Snapshot(context.Background())
	if err != nil {
		panic(err)
	}
	for name, place := range placesOf(snap.ClusterQueues()) {
		visit(name, place.Root, place.Generation)
	}
}

func (r *recordedTrees) SnapshotClusterQueueTrees(ctx context.Context, clusterQueues sets.Set[kueue.ClusterQueueReference]) (*schdcache.Snapshot, error) {
	r.asked = append(r.asked, clusterQueues.Clone())
	if r.beforeSnapshot != nil {
		r.beforeSnapshot()
	}
	if trees, ok := any(r.cache).(treeSnapshotSource); ok {
		return trees.SnapshotClusterQueueTrees(ctx, clusterQueues)
	}
	snap, err := r.cache.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	roots := sets.New[kueue.CohortReference]()
	for name := range clusterQueues {
		if cqs := snap.ClusterQueue(name); cqs != nil && cqs.HasParent() {
			roots.Insert(rootOf(cqs))
		}
	}
	for name, cqs := range maps.Clone(snap.ClusterQueues()) {
		if !clusterQueues.Has(name) && (!cqs.HasParent() || !roots.Has(rootOf(cqs))) {
			snap.DeleteClusterQueue(name)
		}
	}
	return snap, nil
}

// estimatorOver returns a warmed-up estimator of env reading its
// snapshots from source, with a prior mean service time so that every
// Quotable workload gets a forecast.
func estimatorOver(t *testing.T, env *testEnv, source SnapshotSource) *Estimator {
	t.Helper()
	e, err := New(source, env.queues, WithClock(env.clock), WithPriorMeanService(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	e.markWarmed()
	return e
}

func TestRefreshSnapshotsOnlyTheTreesItRecomputes(t *testing.T) {
	objs := cohortObjects()
	env := newTestEnv(t, objs)
	trees := &recordedTrees{cache: env.cache}
	e := estimatorOver(t, env, trees)
	names := func(n ...kueue.ClusterQueueReference) sets.Set[kueue.ClusterQueueReference] { return sets.New(n...) }

	e.Refresh(env.ctx)
	arrived := arriveIn(t, env, e, "c")
	e.refresh(env.ctx, false)
	env.clock.Step(time.Second)
	e.ObserveAdmission(admitHead(env, "a", objs.pending[0]), env.clock.Now())
	e.refresh(env.ctx, false)
	// Nothing changed: no snapshot at all.
	env.clock.Step(time.Second)
	e.refresh(env.ctx, false)

	want := []sets.Set[kueue.ClusterQueueReference]{
		names("a", "b", "c", "d"), // everything
		names("c"),                // an arrival in c, which is in no cohort
		names("a", "b"),           // an admission in a, whose cohort is a and b
	}
	if diff := cmp.Diff(want, trees.asked); diff != "" {
		t.Errorf("ClusterQueues snapshotted by each refresh (-want +got):\n%s", diff)
	}
	if _, ok := e.Results().Workload(workload.Key(arrived)); !ok {
		t.Error("the arrival in c has no estimate")
	}
}

func TestTreeSnapshotsPublishWhatWholeSnapshotsDo(t *testing.T) {
	objs := cohortObjects()
	env := newTestEnv(t, objs)
	partial := estimatorOver(t, env, &recordedTrees{cache: env.cache})
	whole := estimatorOver(t, env, wholeSnapshots{SnapshotSource: env.cache})
	both := func(f func(e *Estimator)) {
		f(partial)
		f(whole)
	}
	// What a snapshot decides, without the roll's random draws: the
	// models (quota, k_eff, borrowing, utilization) and each workload's
	// admissibility, method and whether it has a wait.
	type decided struct {
		Admissibility Admissibility
		Reason        string
		Method        Method
		HasWait       bool
	}
	compare := func(step string) {
		t.Helper()
		models := func(e *Estimator) map[kueue.ClusterQueueReference]QueueModel {
			out := make(map[kueue.ClusterQueueReference]QueueModel)
			for cq := range e.Results().ClusterQueues() {
				out[cq], _ = e.Results().Queue(cq)
			}
			return out
		}
		estimates := func(e *Estimator) map[workload.Reference]decided {
			out := make(map[workload.Reference]decided)
			for key, est := range allEstimates(e.Results()) {
				out[key] = decided{est.Admissibility, est.Reason, est.Method, est.HasWait}
			}
			return out
		}
		if len(models(partial)) == 0 || len(estimates(partial)) == 0 {
			t.Fatalf("%s: nothing published", step)
		}
		if diff := cmp.Diff(models(whole), models(partial), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
			t.Errorf("%s: queue models (-whole +partial):\n%s", step, diff)
		}
		if diff := cmp.Diff(estimates(whole), estimates(partial)); diff != "" {
			t.Errorf("%s: estimates (-whole +partial):\n%s", step, diff)
		}
	}

	both(func(e *Estimator) { e.Refresh(env.ctx) })
	compare("first refresh")

	env.clock.Step(time.Second)
	admitted := admitHead(env, "a", objs.pending[0])
	both(func(e *Estimator) { e.ObserveAdmission(admitted, env.clock.Now()) })
	both(func(e *Estimator) { e.refresh(env.ctx, false) })
	compare("after an admission in a")
}

func TestClusterQueueGoneBeforeItsTreeSnapshotIsRecomputedNextRefresh(t *testing.T) {
	objs := cohortObjects()
	env := newTestEnv(t, objs)
	trees := &recordedTrees{cache: env.cache}
	e := estimatorOver(t, env, trees)
	e.Refresh(env.ctx)

	// An arrival in c is listed; c is deleted from the cache before the
	// partial snapshot is taken.
	arriveIn(t, env, e, "c")
	e.dirty.Store(false)
	trees.beforeSnapshot = func() {
		env.cache.DeleteClusterQueue(objs.cqs[2])
		trees.beforeSnapshot = nil
	}
	e.refresh(env.ctx, false)

	if _, ok := e.Results().Queue("c"); ok {
		t.Error("c, gone from the snapshot, still has a model")
	}
	if _, ok := e.Results().Workload("ns/wait-c"); ok {
		t.Error("a workload of c, gone from the snapshot, still has an estimate")
	}
	for _, cq := range []kueue.ClusterQueueReference{"a", "b", "d"} {
		if _, ok := e.Results().Queue(cq); !ok {
			t.Errorf("%s lost its model", cq)
		}
	}
	e.mu.Lock()
	changed, _ := e.state.Changes.Take()
	_, again := changed["c"]
	e.mu.Unlock()
	if !again || !e.dirty.Load() {
		t.Errorf("c is to be recomputed = %v, estimator dirty = %v; want both", again, e.dirty.Load())
	}
}
