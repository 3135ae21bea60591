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

	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
)

// bigAfterAdmissions is the estimate of "big", a pending 1 CPU workload at
// the head of paperObjects' queue (2 CPU, four 500m running, BestEffortFIFO),
// after 40 workloads of the given CPU arrived and were admitted, one every
// 5 s, and a refresh.
func bigAfterAdmissions(t *testing.T, cpu string) WorkloadEstimate {
	t.Helper()
	objs := paperObjects()
	objs.pending = []*kueue.Workload{pendingWorkload("big", "1", t0.Add(-time.Second))}
	env := newTestEnv(t, objs)
	e := env.estimator(t, WithPriorMeanService(20*time.Second))
	e.markWarmed()
	h := e.WorkloadEventHandler()
	for i := range 40 {
		env.clock.Step(5 * time.Second)
		w := pendingWorkload(fmt.Sprintf("arrival-%d", i), cpu, env.clock.Now())
		h.OnAdd(w, false)
		h.OnUpdate(w, admittedWith(w, cpu))
	}
	e.Refresh(env.ctx)
	est, ok := e.Results().Workload(workload.Key(objs.pending[0]))
	if !ok || !est.HasWait {
		t.Fatalf("no wait for big: %+v", est)
	}
	return est
}

// Small workloads that keep arriving pass a large pending one in a
// BestEffortFIFO queue: measured from their admissions, they make its
// forecast longer than arrivals of its own shape, which pass nobody.
func TestLargePendingWorkloadCountsTheSmallerArrivalsThatPassIt(t *testing.T) {
	own := bigAfterAdmissions(t, "1").ExpectedWait
	smaller := bigAfterAdmissions(t, "500m").ExpectedWait
	if smaller < own*6/5 {
		t.Errorf("big's expected wait is %v with 500m arrivals, %v with arrivals of its own 1 CPU: want at least 20%% longer", smaller, own)
	}
}

// admittedWith is a copy of pendingWorkload w admitted to ClusterQueue cq
// with cpu and 64Mi of flavor default as its usage.
func admittedWith(w *kueue.Workload, cpu string) *kueue.Workload {
	admitted := w.DeepCopy()
	admitted.Status.Admission = utiltestingapi.MakeAdmission("cq").PodSets(
		utiltestingapi.MakePodSetAssignment(kueue.DefaultPodSetName).
			Assignment(corev1.ResourceCPU, "default", cpu).
			Assignment(corev1.ResourceMemory, "default", "64Mi").Obj()).Obj()
	return admitted
}

// completeInTurn makes n workloads arrive, be admitted to ClusterQueue cq
// and complete one after the other through e's event handler: the i-th,
// created at, is admit(i, at)'s pair (pending, admitted) and runs the
// given seconds, in turn.
func completeInTurn(env *testEnv, e *Estimator, n int, admit func(i int, at time.Time) (pending, admitted *kueue.Workload), seconds []time.Duration) {
	h := e.WorkloadEventHandler()
	for i := range n {
		service := seconds[i%len(seconds)]
		env.clock.Step(time.Second)
		w, admitted := admit(i, env.clock.Now())
		h.OnAdd(w, false)
		h.OnUpdate(w, admitted)
		env.clock.Step(service)
		done := admitted.DeepCopy()
		done.Status.Conditions = append(done.Status.Conditions, metav1.Condition{
			Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "ByTest", LastTransitionTime: metav1.NewTime(env.clock.Now()),
		})
		h.OnUpdate(admitted, done)
	}
}

// cpuInTurn admits pendingWorkloads of the given CPUs, in turn, for
// completeInTurn.
func cpuInTurn(cpus []string) func(i int, at time.Time) (*kueue.Workload, *kueue.Workload) {
	return func(i int, at time.Time) (*kueue.Workload, *kueue.Workload) {
		cpu := cpus[i%len(cpus)]
		w := pendingWorkload(fmt.Sprintf("w-%d", i), cpu, at)
		return w, admittedWith(w, cpu)
	}
}

// serviceByShapeAfterCompletions is what the roll takes of the ClusterQueue
// of paperObjects after completeInTurn: the service samples of its demand
// shapes, by CPU per pod, and their priorities.
func serviceByShapeAfterCompletions(t *testing.T, n int, cpus []string, seconds []time.Duration) (means map[int64]float64, priorities []int32) {
	t.Helper()
	env := newTestEnv(t, paperObjects())
	e := env.estimator(t)
	e.markWarmed()
	completeInTurn(env, e, n, cpuInTurn(cpus), seconds)
	e.mu.Lock()
	v := e.state.Stats.Shared().View(e.statsFor("cq"))
	e.mu.Unlock()
	means = make(map[int64]float64)
	for _, sh := range v.ShapeService {
		sum := 0.0
		for _, x := range sh.Sample {
			sum += x
		}
		means[sh.Demand.PodSets[0].Requests["cpu"]] = sum / float64(len(sh.Sample))
		priorities = append(priorities, sh.Priority)
	}
	return means, priorities
}

// TestServiceSamplePerDemandShape: completions are sampled per demand
// shape, keyed as admissions are, and the roll gets the shapes' samples
// where their priority has seen more than one shape.
func TestServiceSamplePerDemandShape(t *testing.T) {
	cases := map[string]struct {
		n       int
		cpus    []string
		seconds []time.Duration
		want    map[int64]float64
	}{
		"two shapes": {
			n: 2 * engine.BootstrapServiceBelow, cpus: []string{"500m", "1"}, seconds: []time.Duration{2 * time.Second, 3 * time.Second},
			want: map[int64]float64{500: 2, 1000: 3},
		},
		"a few completions of each": {
			n: 3, cpus: []string{"1", "500m"}, seconds: []time.Duration{3 * time.Second, 2 * time.Second, 4 * time.Second},
			want: map[int64]float64{500: 2, 1000: 3.5},
		},
		"one shape: its priority's sample is its own": {
			n: 2 * engine.BootstrapServiceBelow, cpus: []string{"500m"}, seconds: []time.Duration{2 * time.Second, 3 * time.Second},
			want: map[int64]float64{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			means, priorities := serviceByShapeAfterCompletions(t, tc.n, tc.cpus, tc.seconds)
			if diff := cmp.Diff(tc.want, means, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("mean service by CPU per pod, seconds (-want,+got):\n%s", diff)
			}
			for _, p := range priorities {
				if p != 0 {
					t.Errorf("a shape sample of priority %d, want 0", p)
				}
			}
		})
	}
}

// TestRunningWorkloadsDrawTheirShapesServiceLaw: a 1-CPU workload waits at
// the head of paperObjects' queue (2 CPU, four 500m running) for two of
// the running workloads to end. Completions of 500m workloads took 1 s,
// of 1-CPU ones 100 s: the running workloads, matched to their shape's
// sample from the Kueue objects themselves (their pod sets against the
// admissions' usage), end within seconds, and the wait is short. The same
// service times in a ClusterQueue of one shape are one law, from which
// the running workloads are as likely to run 100 s.
func TestRunningWorkloadsDrawTheirShapesServiceLaw(t *testing.T) {
	cases := map[string]struct {
		cpus []string
		// within bounds big's expected wait, seconds.
		within [2]float64
	}{
		"a law per shape":                   {cpus: []string{"500m", "1"}, within: [2]float64{0, 5}},
		"one shape, the same service times": {cpus: []string{"500m"}, within: [2]float64{10, 1000}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := paperObjects()
			objs.pending = []*kueue.Workload{pendingWorkload("big", "1", t0.Add(-time.Second))}
			env := newTestEnv(t, objs)
			e := env.estimator(t)
			e.markWarmed()
			completeInTurn(env, e, 2*engine.BootstrapServiceBelow, cpuInTurn(tc.cpus), []time.Duration{time.Second, 100 * time.Second})
			e.Refresh(env.ctx)
			est, ok := e.Results().Workload(workload.Key(objs.pending[0]))
			if !ok || !est.HasWait {
				t.Fatalf("no wait for big: %+v", est)
			}
			t.Logf("big's expected wait %v, P90 %v", est.ExpectedWait, est.P90)
			if w := est.ExpectedWait.Seconds(); w < tc.within[0] || w > tc.within[1] {
				t.Errorf("big's expected wait %.1fs, want within [%v, %v] s", w, tc.within[0], tc.within[1])
			}
		})
	}
}
