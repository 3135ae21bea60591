package estimator

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	utiltesting "sigs.k8s.io/kueue/pkg/util/testing"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
)

// p2AfterArrivals is p2's estimate in paperObjects (p0, p1, p2 pending at
// priority 0; a running workload of priority 100 shows that priority's
// demand; the 20 s prior) after 30 arrivals of 500m at the given priority,
// one every gap, and a refresh.
func p2AfterArrivals(t *testing.T, priority int32, gap time.Duration) WorkloadEstimate {
	t.Helper()
	objs := paperObjects()
	objs.pending = objs.pending[:3]
	objs.running[0].Spec.Priority = ptr.To[int32](100)
	env := newTestEnv(t, objs)
	e := env.estimator(t, WithPriorMeanService(20*time.Second))
	e.markWarmed()
	for i := range 30 {
		env.clock.Step(gap)
		w := pendingWorkload(fmt.Sprintf("arrival-%d", i), "500m", env.clock.Now())
		w.Spec.Priority = ptr.To(priority)
		e.WorkloadEventHandler().OnAdd(w, false)
	}
	e.Refresh(env.ctx)
	est, ok := e.Results().Workload(workload.Key(objs.pending[2]))
	if !ok || !est.HasWait {
		t.Fatalf("no wait for p2: %+v", est)
	}
	return est
}

// Higher-priority work that keeps arriving passes a low-priority workload:
// its forecast is longer than with the same arrivals at its own priority.
// One arrival every 10 s for five minutes: 0.1/s, half of the queue's
// service capacity (4 servers, 20 s each).
func TestLowPriorityForecastCountsHigherPriorityArrivals(t *testing.T) {
	same := p2AfterArrivals(t, 0, 10*time.Second).ExpectedWait
	higher := p2AfterArrivals(t, 100, 10*time.Second).ExpectedWait
	if higher < same*6/5 {
		t.Errorf("p2's expected wait is %v with higher-priority arrivals, %v with arrivals of its own priority: want at least 20%% longer", higher, same)
	}
}

// A burst of higher-priority arrivals five times the queue's capacity
// (one a second against 0.2/s), measured for 30 s, is extrapolated for
// about 30 s more: the low-priority workload waits for the burst, not until
// the horizon (a week), as it did when the rate was extrapolated for the
// whole horizon.
func TestHigherPriorityBurstIsExtrapolatedForAsLongAsItWasMeasured(t *testing.T) {
	est := p2AfterArrivals(t, 100, time.Second)
	// The 30 pending burst workloads alone hold it back 30·20/4 = 150 s;
	// about 30 more arrive in the next 30 s, another 150 s.
	if est.BeyondHorizon || est.ExpectedWait < 150*time.Second || est.ExpectedWait > 20*time.Minute {
		t.Errorf("p2 after a 30 s burst: expected wait %v (beyond the horizon: %v); want 150 s to 20 min", est.ExpectedWait, est.BeyondHorizon)
	}
}

// The warm start splits the arrivals it lists by priority over the same
// window as the ClusterQueue's arrival rate.
func TestWarmStartSeedsArrivalRatesByPriority(t *testing.T) {
	objs := paperObjects()
	var listed kueue.WorkloadList
	for i := range 20 {
		w := pendingWorkload(fmt.Sprintf("old-%d", i), "500m", t0.Add(-time.Duration(200-10*i)*time.Second))
		if i%4 == 0 {
			w.Spec.Priority = ptr.To[int32](100)
		}
		listed.Items = append(listed.Items, *w)
	}
	env := newTestEnv(t, objs)
	e := env.estimator(t)
	reader := utiltesting.NewClientBuilder().WithLists(&listed, &kueue.ClusterQueueList{Items: []kueue.ClusterQueue{*objs.cqs[0]}}).Build()
	if err := e.WarmStart(env.ctx, reader); err != nil {
		t.Fatalf("WarmStart: %v", err)
	}
	e.mu.Lock()
	v := e.statsFor("cq").View()
	e.mu.Unlock()
	if !v.HasArrivals {
		t.Fatal("no arrival rate after the warm start")
	}
	// 15 of the 20 arrivals are of priority 0, 5 of priority 100, over
	// one window: the rates split the queue's rate in that proportion.
	want := map[int32]float64{0: v.ArrivalRate * 15 / 20, 100: v.ArrivalRate * 5 / 20}
	if diff := cmp.Diff(want, v.PriorityRates, cmpopts.EquateApprox(0.05, 0)); diff != "" {
		t.Errorf("arrival rates by priority (-want,+got):\n%s", diff)
	}
}

// Running and pending workloads draw the service times of their own
// priority once it has engine.BootstrapServiceBelow completions: with batch work
// (priority 0) taking 40 s and urgent work (priority 100) 5 s, the ninth
// pending batch workload waits for two rounds of 40 s batch work after the
// running ones end (about 30 + 80 s), not for the pooled law's mix of 5 and
// 40 s that a ClusterQueue of one priority would use.
func TestBatchWorkloadsWaitForBatchServiceTimes(t *testing.T) {
	wait := func(t *testing.T, urgentPriority int32) (time.Duration, statsView) {
		objs := paperObjects()
		objs.pending = objs.pending[:3] // p0, p1, p2 at priority 0
		for i := 3; i < 9; i++ {
			objs.pending = append(objs.pending, pendingWorkload(fmt.Sprintf("p%d", i), "500m", t0.Add(-time.Duration(5-i)*time.Second)))
		}
		for i := range 2 * engine.BootstrapServiceBelow {
			priority, service := int32(0), 40*time.Second
			if i%2 == 1 {
				priority, service = urgentPriority, 5*time.Second
			}
			admitted := t0.Add(-time.Duration(3000-20*i) * time.Second)
			w := runningWorkload(fmt.Sprintf("done-%d", i), "cq", "500m", admitted)
			w.Spec.Priority = ptr.To(priority)
			w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{
				Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "ByTest", LastTransitionTime: metav1.NewTime(admitted.Add(service)),
			})
			objs.finished = append(objs.finished, w)
		}
		env := newTestEnv(t, objs)
		e := env.estimator(t)
		var listed kueue.WorkloadList
		for _, w := range append(append(objs.running, objs.pending...), objs.finished...) {
			listed.Items = append(listed.Items, *w.DeepCopy())
		}
		reader := utiltesting.NewClientBuilder().WithLists(&listed, &kueue.ClusterQueueList{Items: []kueue.ClusterQueue{*objs.cqs[0]}}).Build()
		if err := e.WarmStart(env.ctx, reader); err != nil {
			t.Fatalf("WarmStart: %v", err)
		}
		e.Refresh(env.ctx)
		e.mu.Lock()
		v := e.statsFor("cq").View()
		e.mu.Unlock()
		est, ok := e.Results().Workload(workload.Key(objs.pending[8]))
		if !ok || !est.HasWait || est.Method != MethodForecast {
			t.Fatalf("no forecast for p8: %+v", est)
		}
		return est.ExpectedWait, v
	}
	pooled, v := wait(t, 0)
	if len(v.PriorityService) != 0 {
		t.Errorf("one priority: per-priority samples %v, want none", v.PriorityService)
	}
	own, v := wait(t, 100)
	if got := len(v.PriorityService[0]) + len(v.PriorityService[100]); got != 2*engine.BootstrapServiceBelow {
		t.Errorf("two priorities: %d values in their samples, want %d", got, 2*engine.BootstrapServiceBelow)
	}
	if own < 90*time.Second || own > 130*time.Second || pooled > own*4/5 {
		t.Errorf("p8 waits %v with its priority's service times, %v with the pooled ones; want 90–130 s and the pooled wait at most 4/5 of it", own, pooled)
	}
}
