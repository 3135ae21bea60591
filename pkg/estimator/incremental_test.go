package estimator

import (
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
	"github.com/kueue-waittime/kueue-waittime/pkg/published"
	"github.com/kueue-waittime/kueue-waittime/pkg/refreshschedule"
)

// cohortObjects are ClusterQueues a and b of cohort "team" and c and d of
// none, each with 2 CPUs held by a running workload and a pending workload
// of 1 CPU, all in
// LocalQueues named after their ClusterQueue.
func cohortObjects() envObjects {
	objs := envObjects{flavors: []*kueue.ResourceFlavor{utiltestingapi.MakeResourceFlavor("default").Obj()}}
	for _, name := range []string{"a", "b", "c", "d"} {
		cq := cpuQueue(name, "2")
		if name == "a" || name == "b" {
			cq.Spec.CohortName = "team"
		}
		objs.cqs = append(objs.cqs, cq)
		objs.lqs = append(objs.lqs, utiltestingapi.MakeLocalQueue(name, "ns").ClusterQueue(name).Obj())
		run := runningWorkload("run-"+name, name, "2", t0.Add(-time.Minute))
		run.Spec.QueueName = kueue.LocalQueueName(name)
		objs.running = append(objs.running, run)
		objs.pending = append(objs.pending, queuedWorkload("wait-"+name, name, t0.Add(-10*time.Second)))
	}
	return objs
}

// queuedWorkload is a pending workload of 1 CPU in LocalQueue lq.
func queuedWorkload(name, lq string, created time.Time) *kueue.Workload {
	return utiltestingapi.MakeWorkload(name, "ns").Queue(kueue.LocalQueueName(lq)).
		Request(corev1.ResourceCPU, "1").Request(corev1.ResourceMemory, "64Mi").
		Creation(created).Obj()
}

// admitHead gives the head of ClusterQueue cq (pending workload wl) its
// quota reservation in the cache and returns the admitted workload.
func admitHead(env *testEnv, cq string, wl *kueue.Workload) *kueue.Workload {
	admitted := (&utiltestingapi.WorkloadWrapper{Workload: *wl.DeepCopy()}).ReserveQuotaAt(
		utiltestingapi.MakeAdmission(kueue.ClusterQueueReference(cq)).PodSets(utiltestingapi.MakePodSetAssignment(kueue.DefaultPodSetName).
			Assignment(corev1.ResourceCPU, "default", "1").Assignment(corev1.ResourceMemory, "default", "64Mi").Obj()).Obj(),
		env.clock.Now()).Obj()
	env.queues.DeleteWorkload(logr.Discard(), workload.Key(wl))
	env.cache.AddOrUpdateWorkload(logr.Discard(), admitted)
	return admitted
}

// arriveIn queues a new pending workload in LocalQueue lq one second later
// and tells the estimator's event handler; it returns the workload.
func arriveIn(t *testing.T, env *testEnv, e *Estimator, lq string) *kueue.Workload {
	t.Helper()
	env.clock.Step(time.Second)
	arrived := queuedWorkload("new-"+lq, lq, env.clock.Now())
	if err := env.queues.AddOrUpdateWorkload(logr.Discard(), arrived); err != nil {
		t.Fatal(err)
	}
	e.WorkloadEventHandler().OnAdd(arrived, false)
	return arrived
}

// publishedFor returns results holding a part for every ClusterQueue of
// cqs, computed at at from the snapshot as it is, changed by edit.
func publishedFor(at time.Time, cqs map[kueue.ClusterQueueReference]*schdcache.ClusterQueueSnapshot, edit func(map[kueue.ClusterQueueReference]*queueResults)) *Results {
	parts := make(map[kueue.ClusterQueueReference]*queueResults, len(cqs))
	for name, cqs := range cqs {
		parts[name] = &queueResults{Model: QueueModel{ClusterQueue: name, At: at}, HasModel: true,
			Root: rootOf(cqs), Generation: cqs.AllocatableResourceGeneration}
	}
	if edit != nil {
		edit(parts)
	}
	return published.Build[kueue.ClusterQueueReference, kueue.CohortReference, workload.Reference](at, parts)
}

func TestRecomputeSet(t *testing.T) {
	env := newTestEnv(t, cohortObjects())
	snap, err := env.cache.Snapshot(env.ctx)
	if err != nil {
		t.Fatal(err)
	}
	cqs := snap.ClusterQueues()
	const staleness = 10 * time.Second
	now := t0.Add(5 * time.Second)
	cases := map[string]struct {
		changed []kueue.ClusterQueueReference
		all     bool
		edit    func(map[kueue.ClusterQueueReference]*queueResults)
		want    map[kueue.ClusterQueueReference]recomputeCause
	}{
		"nothing changed":                         {},
		"an event in a ClusterQueue of no cohort": {changed: []kueue.ClusterQueueReference{"c"}, want: map[kueue.ClusterQueueReference]recomputeCause{"c": ownInputs}},
		"an event in a cohort member recomputes the cohort": {
			changed: []kueue.ClusterQueueReference{"a"}, want: map[kueue.ClusterQueueReference]recomputeCause{"a": ownInputs, "b": cohortInputs},
		},
		"everything": {all: true, want: map[kueue.ClusterQueueReference]recomputeCause{
			"a": ownInputs, "b": ownInputs, "c": ownInputs, "d": ownInputs}},
		"an event in a ClusterQueue gone": {changed: []kueue.ClusterQueueReference{"gone"}},
		"a quiet ClusterQueue at the maximum staleness": {
			edit: func(p map[kueue.ClusterQueueReference]*queueResults) { p["c"].Model.At = now.Add(-staleness) },
			want: map[kueue.ClusterQueueReference]recomputeCause{"c": ownInputs},
		},
		"a quiet cohort member at the maximum staleness": {
			edit: func(p map[kueue.ClusterQueueReference]*queueResults) { p["b"].Model.At = now.Add(-staleness) },
			want: map[kueue.ClusterQueueReference]recomputeCause{"a": cohortInputs, "b": ownInputs},
		},
		"a quiet ClusterQueue just under the maximum staleness": {
			edit: func(p map[kueue.ClusterQueueReference]*queueResults) {
				p["c"].Model.At = now.Add(-staleness + time.Millisecond)
			},
		},
		"a quiet ClusterQueue whose first P50 is overdue": {
			edit: func(p map[kueue.ClusterQueueReference]*queueResults) { p["d"].FirstDue = now },
			want: map[kueue.ClusterQueueReference]recomputeCause{"d": ownInputs},
		},
		"a quiet ClusterQueue whose first P50 is still to come": {
			edit: func(p map[kueue.ClusterQueueReference]*queueResults) { p["d"].FirstDue = now.Add(time.Millisecond) },
		},
		"a ClusterQueue whose AllocatableResourceGeneration moved": {
			edit: func(p map[kueue.ClusterQueueReference]*queueResults) { p["d"].Generation-- },
			want: map[kueue.ClusterQueueReference]recomputeCause{"d": ownInputs},
		},
		"a ClusterQueue that left the cohort recomputes it": {
			edit: func(p map[kueue.ClusterQueueReference]*queueResults) { p["c"].Root = "team" },
			want: map[kueue.ClusterQueueReference]recomputeCause{"a": cohortInputs, "b": cohortInputs, "c": ownInputs},
		},
		"a ClusterQueue with no results yet": {
			edit: func(p map[kueue.ClusterQueueReference]*queueResults) { delete(p, "d") },
			want: map[kueue.ClusterQueueReference]recomputeCause{"d": ownInputs},
		},
		"a cohort member that disappeared recomputes its cohort": {
			edit: func(p map[kueue.ClusterQueueReference]*queueResults) {
				p["gone"] = &queueResults{Model: QueueModel{ClusterQueue: "gone", At: t0}, HasModel: true, Root: "team"}
			},
			want: map[kueue.ClusterQueueReference]recomputeCause{"a": cohortInputs, "b": cohortInputs},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			changed := make(map[kueue.ClusterQueueReference]struct{})
			for _, cq := range tc.changed {
				changed[cq] = struct{}{}
			}
			got := published.RecomputeSet(now, placesOf(cqs), publishedFor(t0, cqs, tc.edit), changed, tc.all, staleness)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("recomputed ClusterQueues (-want +got):\n%s", diff)
			}
		})
	}
}

// samePart reports, per ClusterQueue, whether two results hold the very
// same part (the same value, not a recomputed equal one).
func samePart(a, b *Results) map[kueue.ClusterQueueReference]bool {
	out := make(map[kueue.ClusterQueueReference]bool)
	for cq := range b.ClusterQueues() {
		out[cq] = a.Part(cq) != nil && a.Part(cq) == b.Part(cq)
	}
	return out
}

func TestIncrementalRefreshRecomputesOnlyWhatChanged(t *testing.T) {
	objs := cohortObjects()
	env := newTestEnv(t, objs)
	e := env.estimator(t, WithPriorMeanService(time.Minute))
	e.markWarmed()
	handler := e.WorkloadEventHandler()
	e.Refresh(env.ctx)
	estimatesOf := allEstimates

	// An arrival in c, which is in no cohort: only c is recomputed.
	before := e.Results()
	env.clock.Step(time.Second)
	arrived := queuedWorkload("new-c", "c", env.clock.Now())
	if err := env.queues.AddOrUpdateWorkload(logr.Discard(), arrived); err != nil {
		t.Fatal(err)
	}
	handler.OnAdd(arrived, false)
	e.refresh(env.ctx, false)
	after := e.Results()
	if diff := cmp.Diff(map[kueue.ClusterQueueReference]bool{"a": true, "b": true, "c": false, "d": true}, samePart(before, after)); diff != "" {
		t.Errorf("after an arrival in c, the same parts (-want +got):\n%s", diff)
	}
	if est, ok := after.Workload(workload.Key(arrived)); !ok || !est.EstimatedAt.Equal(env.clock.Now()) {
		t.Errorf("the arrival's estimate = %+v, %v; want one made now", est, ok)
	}
	wantKept := estimatesOf(before)
	for key, est := range estimatesOf(after) {
		if est.ClusterQueue == "c" {
			delete(wantKept, key)
			continue
		}
		if diff := cmp.Diff(wantKept[key], est); diff != "" {
			t.Errorf("estimate of %s in an unchanged ClusterQueue changed (-before +after):\n%s", key, diff)
		}
		delete(wantKept, key)
	}
	for key, est := range wantKept {
		if est.ClusterQueue != "c" {
			t.Errorf("estimate of %s lost", key)
		}
	}
	e.mu.Lock()
	firstLine := trackedOf(e, workload.Key(arrived)).Stamp
	e.mu.Unlock()
	if firstLine == nil || !eventTime(firstLine.At).time().Equal(env.clock.Now()) {
		t.Fatalf("the arrival's first estimate is not in the ledger: %+v", firstLine)
	}

	// The head of a is admitted: a and b, its cohort, are recomputed.
	before = after
	env.clock.Step(time.Second)
	head := objs.pending[0]
	e.ObserveAdmission(admitHead(env, "a", head), env.clock.Now())
	e.refresh(env.ctx, false)
	after = e.Results()
	if diff := cmp.Diff(map[kueue.ClusterQueueReference]bool{"a": false, "b": false, "c": true, "d": true}, samePart(before, after)); diff != "" {
		t.Errorf("after an admission in a, the same parts (-want +got):\n%s", diff)
	}
	if _, ok := after.Workload(workload.Key(head)); ok {
		t.Errorf("the admitted workload still has an estimate")
	}

	// Nothing happened: every part is kept.
	before = after
	env.clock.Step(time.Second)
	e.refresh(env.ctx, false)
	after = e.Results()
	if diff := cmp.Diff(map[kueue.ClusterQueueReference]bool{"a": true, "b": true, "c": true, "d": true}, samePart(before, after)); diff != "" {
		t.Errorf("after nothing, the same parts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(estimatesOf(before), estimatesOf(after)); diff != "" {
		t.Errorf("after nothing, the estimates changed (-before +after):\n%s", diff)
	}

	// Quiet for the maximum staleness: everything is recomputed, and the
	// ledger keeps the first estimate.
	before = after
	env.clock.Step(refreshschedule.MaxStalenessFor(engine.DefaultRefreshPeriod))
	if !published.NeedsRefresh(e.dirty.Load(), env.clock.Now(), before, refreshschedule.MaxStalenessFor(engine.DefaultRefreshPeriod)) {
		t.Errorf("the refresh loop would not refresh quiet results as old as the maximum staleness")
	}
	e.refresh(env.ctx, false)
	after = e.Results()
	if diff := cmp.Diff(map[kueue.ClusterQueueReference]bool{"a": false, "b": false, "c": false, "d": false}, samePart(before, after)); diff != "" {
		t.Errorf("after the maximum staleness, the same parts (-want +got):\n%s", diff)
	}
	e.mu.Lock()
	line := trackedOf(e, workload.Key(arrived)).Stamp
	e.mu.Unlock()
	if line != firstLine {
		t.Errorf("the ledger's line of the arrival was replaced by a later estimate")
	}
}

func TestIncrementalRefreshFollowsClusterQueuesComingAndGoing(t *testing.T) {
	objs := cohortObjects()
	env := newTestEnv(t, objs)
	e := env.estimator(t, WithPriorMeanService(time.Minute))
	e.markWarmed()
	cqHandler := e.ClusterQueueEventHandler()
	e.Refresh(env.ctx)
	before := e.Results()

	// d goes, e comes with a pending workload.
	gone := objs.cqs[3]
	env.cache.DeleteClusterQueue(gone)
	env.queues.DeleteClusterQueue(logr.Discard(), gone)
	cqHandler.OnDelete(gone)
	added := cpuQueue("e", "2")
	if err := env.cache.AddClusterQueue(env.ctx, added); err != nil {
		t.Fatal(err)
	}
	if err := env.queues.AddClusterQueue(env.ctx, added); err != nil {
		t.Fatal(err)
	}
	if err := env.queues.AddLocalQueue(env.ctx, utiltestingapi.MakeLocalQueue("e", "ns").ClusterQueue("e").Obj()); err != nil {
		t.Fatal(err)
	}
	cqHandler.OnAdd(added, false)
	arrived := queuedWorkload("wait-e", "e", t0)
	if err := env.queues.AddOrUpdateWorkload(logr.Discard(), arrived); err != nil {
		t.Fatal(err)
	}
	e.WorkloadEventHandler().OnAdd(arrived, false)
	env.clock.Step(time.Second)
	e.refresh(env.ctx, false)
	after := e.Results()

	if diff := cmp.Diff(map[kueue.ClusterQueueReference]bool{"a": true, "b": true, "c": true, "e": false}, samePart(before, after)); diff != "" {
		t.Errorf("the same parts (-want +got):\n%s", diff)
	}
	if _, ok := after.Queue("d"); ok {
		t.Errorf("the deleted ClusterQueue d still has a model")
	}
	if est, ok := after.Workload("ns/wait-d"); ok {
		t.Errorf("a workload of the deleted ClusterQueue d still has an estimate: %+v", est)
	}
	want := map[workload.Reference]kueue.ClusterQueueReference{"ns/wait-a": "a", "ns/wait-b": "b", "ns/wait-c": "c", "ns/wait-e": "e"}
	got := make(map[workload.Reference]kueue.ClusterQueueReference)
	for key, est := range allEstimates(after) {
		if byKey, ok := after.Workload(key); !ok || byKey != est {
			t.Fatalf("workload %s: Workload gives %+v, %v; its ClusterQueue's part %+v", key, byKey, ok, est)
		}
		if in, ok := after.WorkloadIn(est.ClusterQueue, key); !ok || in != est {
			t.Fatalf("workload %s: WorkloadIn(%s) gives %+v, %v; its ClusterQueue's part %+v", key, est.ClusterQueue, in, ok, est)
		}
		got[key] = est.ClusterQueue
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("estimates by ClusterQueue (-want +got):\n%s", diff)
	}
	if got := after.PendingCount(); got != len(want) {
		t.Errorf("pending count %d, want %d", got, len(want))
	}
}

func TestArrivalListedAfterItsRefreshIsPublishedAtTheNext(t *testing.T) {
	cases := map[string]struct {
		// listed says whether the queue manager lists the arrival before
		// the second refresh.
		listed bool
		// wait is how long after the arrival the second refresh runs.
		wait        time.Duration
		wantPublish bool
		wantAgain   bool
	}{
		"listed by the next refresh":                           {listed: true, wait: time.Second, wantPublish: true},
		"still unlisted: its ClusterQueue is recomputed again": {wait: time.Second, wantAgain: true},
		"unlisted for the maximum staleness: forgotten":        {wait: refreshschedule.MaxStalenessFor(engine.DefaultRefreshPeriod)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := newTestEnv(t, cohortObjects())
			e := env.estimator(t, WithPriorMeanService(time.Minute))
			e.markWarmed()
			e.Refresh(env.ctx)

			// The estimator's handler hears of the arrival in c; the
			// refresh runs before Kueue's queue manager lists it.
			env.clock.Step(time.Second)
			arrived := queuedWorkload("new-c", "c", env.clock.Now())
			e.WorkloadEventHandler().OnAdd(arrived, false)
			e.refresh(env.ctx, false)
			if _, ok := e.Results().Workload(workload.Key(arrived)); ok {
				t.Fatal("published before the queue manager listed it")
			}
			if !e.dirty.Load() {
				t.Error("the refresh that missed the arrival left the estimator clean")
			}

			env.clock.Step(tc.wait)
			if tc.listed {
				if err := env.queues.AddOrUpdateWorkload(logr.Discard(), arrived); err != nil {
					t.Fatal(err)
				}
			}
			before := e.Results()
			e.refresh(env.ctx, false)
			if _, ok := e.Results().Workload(workload.Key(arrived)); ok != tc.wantPublish {
				t.Errorf("published at the second refresh = %v, want %v", ok, tc.wantPublish)
			}
			if tc.wait < refreshschedule.MaxStalenessFor(engine.DefaultRefreshPeriod) {
				if samePart(before, e.Results())["c"] {
					t.Error("the second refresh did not recompute c")
				}
			}
			e.mu.Lock()
			changed, _ := e.state.Changes.Take()
			_, again := changed["c"]
			_, tracked := e.state.Changes.Unlisted[workload.Key(arrived)]
			e.mu.Unlock()
			if again != tc.wantAgain || tracked != tc.wantAgain {
				t.Errorf("after the second refresh c is to be recomputed = %v and the arrival awaited = %v, want %v", again, tracked, tc.wantAgain)
			}
		})
	}
}

// allEstimates is every estimate r holds, by workload, read from each
// ClusterQueue's part.
func allEstimates(r *Results) map[workload.Reference]WorkloadEstimate {
	out := make(map[workload.Reference]WorkloadEstimate)
	for cq := range r.ClusterQueues() {
		q := r.Part(cq)
		if q == nil {
			continue
		}
		for name := range q.AllNames() {
			key := referenceOf(name)
			out[key], _ = q.Estimate(name)
		}
	}
	return out
}

// borrowingCohortObjects are ClusterQueues a (3 CPUs) and b (2 CPUs) of
// cohort "team", each with a running workload of 2 CPUs and a pending one
// of 1 CPU; b's borrowing limit is bLimit ("" for none).
func borrowingCohortObjects(bLimit string) envObjects {
	objs := envObjects{flavors: []*kueue.ResourceFlavor{utiltestingapi.MakeResourceFlavor("default").Obj()}}
	for _, q := range []struct{ name, cpu, limit string }{{"a", "3", ""}, {"b", "2", bLimit}} {
		cq := utiltestingapi.MakeClusterQueue(q.name).Cohort("team").ResourceGroup(
			*utiltestingapi.MakeFlavorQuotas("default").
				Resource(corev1.ResourceCPU, q.cpu, q.limit).
				Resource(corev1.ResourceMemory, "1Gi", q.limit).Obj()).Obj()
		objs.cqs = append(objs.cqs, cq)
		objs.lqs = append(objs.lqs, utiltestingapi.MakeLocalQueue(q.name, "ns").ClusterQueue(q.name).Obj())
		run := runningWorkload("run-"+q.name, q.name, "2", t0.Add(-time.Minute))
		run.Spec.QueueName = kueue.LocalQueueName(q.name)
		objs.running = append(objs.running, run)
		objs.pending = append(objs.pending, queuedWorkload("wait-"+q.name, q.name, t0.Add(-10*time.Second)))
	}
	return objs
}

func TestCohortMemberIsRecomputedOnlyWhenWhatItCanBorrowOrHasLentChanges(t *testing.T) {
	cases := map[string]struct {
		bLimit string
		// keptB: b's published part survives a's admission.
		keptB bool
	}{
		// a admits within its own quota: b, which may not borrow and
		// lends nothing, sees the same capacity.
		"a sibling that cannot borrow is kept": {bLimit: "0", keptB: true},
		// a's admission takes the quota b could have borrowed.
		"a sibling that could borrow the admitted quota is recomputed": {keptB: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := borrowingCohortObjects(tc.bLimit)
			env := newTestEnv(t, objs)
			e := env.estimator(t, WithPriorMeanService(time.Minute))
			e.markWarmed()
			e.Refresh(env.ctx)
			before := e.Results()

			env.clock.Step(time.Second)
			e.ObserveAdmission(admitHead(env, "a", objs.pending[0]), env.clock.Now())
			e.refresh(env.ctx, false)
			after := e.Results()
			want := map[kueue.ClusterQueueReference]bool{"a": false, "b": tc.keptB}
			if diff := cmp.Diff(want, samePart(before, after)); diff != "" {
				t.Errorf("after an admission in a, the same parts (-want +got):\n%s", diff)
			}
			if _, ok := after.Workload(workload.Key(objs.pending[1])); !ok {
				t.Errorf("b's pending workload has no estimate")
			}

			// A refresh of everything finds b's view as kept.
			if tc.keptB {
				snap, err := env.cache.Snapshot(env.ctx)
				if err != nil {
					t.Fatal(err)
				}
				now := env.clock.Now()
				if got := cohortViewOf(snap.ClusterQueues()["b"], queueSpec{}, now); !got.SameAs(after.Part("b").Cohort, now, after.Part("b").Model.At) {
					t.Errorf("b's cohort view now %+v, kept %+v", got, after.Part("b").Cohort)
				}
			}
		})
	}
}
