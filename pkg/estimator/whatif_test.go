package estimator

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/resources"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/convert"
)

// strictPaperObjects is paperObjects with a StrictFIFO ClusterQueue: two
// CPUs held by four running workloads of 500m, pending p0..p2 (500m) and
// huge (20 CPUs, Unfeasible), all of priority 0.
func strictPaperObjects() envObjects {
	objs := paperObjects()
	objs.cqs = []*kueue.ClusterQueue{utiltestingapi.MakeClusterQueue("cq").QueueingStrategy(kueue.StrictFIFO).
		ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, "2").Resource(corev1.ResourceMemory, "1Gi").Obj()).
		Obj()}
	return objs
}

func whatIfInfo(cpu string, priority int32) *workload.Info {
	return workload.NewInfo(utiltestingapi.MakeWorkload("what-if", "ns").Queue("lq").
		Request(corev1.ResourceCPU, cpu).Request(corev1.ResourceMemory, "64Mi").Priority(priority).Obj())
}

// whatIfShape is what TestWhatIf compares of an answer: everything but the
// waits, which the cases bound against the published estimates.
type whatIfShape struct {
	Admissibility      Admissibility
	Reason             string
	Method             Method
	HasWait            bool
	Position           int32
	EffectiveServers   int
	Unbounded          bool
	BottleneckFlavor   string
	BottleneckResource string
}

func shapeOf(w WhatIfEstimate) whatIfShape {
	return whatIfShape{
		Admissibility: w.Admissibility, Reason: w.Reason, Method: w.Method, HasWait: w.HasWait, Position: w.Position,
		EffectiveServers: w.EffectiveServers, Unbounded: w.Unbounded, BottleneckFlavor: w.BottleneckFlavor, BottleneckResource: w.BottleneckResource,
	}
}

func TestWhatIf(t *testing.T) {
	published := func(t *testing.T, e *Estimator, name string) WorkloadEstimate {
		t.Helper()
		est, ok := e.Results().Workload(workload.NewReference("ns", name))
		if !ok {
			t.Fatalf("no published estimate for %s", name)
		}
		return est
	}
	cases := map[string]struct {
		info      *workload.Info
		noService bool
		// objects, when set, replaces strictPaperObjects.
		objects func() envObjects
		want    whatIfShape
		// check bounds the waits against the published estimates.
		check func(t *testing.T, e *Estimator, got WhatIfEstimate)
	}{
		"equal priority goes behind every pending workload and waits at least as long as the last": {
			info: whatIfInfo("500m", 0),
			want: whatIfShape{Admissibility: Quotable, Method: MethodAPriori, HasWait: true, Position: 4,
				EffectiveServers: 4, BottleneckFlavor: "default", BottleneckResource: "cpu"},
			check: func(t *testing.T, e *Estimator, got WhatIfEstimate) {
				last := published(t, e, "p2")
				if got.ExpectedWait < last.ExpectedWait || got.P50 < last.P50 {
					t.Errorf("what-if waits %v (P50 %v), less than the last pending workload's %v (P50 %v)", got.ExpectedWait, got.P50, last.ExpectedWait, last.P50)
				}
			},
		},
		"higher priority goes to the head and waits no longer than the head": {
			info: whatIfInfo("500m", 10),
			want: whatIfShape{Admissibility: Quotable, Method: MethodAPriori, HasWait: true, Position: 0,
				EffectiveServers: 4, BottleneckFlavor: "default", BottleneckResource: "cpu"},
			check: func(t *testing.T, e *Estimator, got WhatIfEstimate) {
				head := published(t, e, "p0")
				if got.ExpectedWait > head.ExpectedWait {
					t.Errorf("what-if at the head waits %v, more than the head's %v", got.ExpectedWait, head.ExpectedWait)
				}
			},
		},
		"unfeasible gets the scheduler's reason and no wait": {
			info: whatIfInfo("20", 0),
			want: whatIfShape{Admissibility: Unfeasible, Method: MethodNone, Position: 4,
				Reason: "flavor default: cpu 20 > potential 2 (nominal 2, borrowable 0)", BottleneckFlavor: "default", BottleneckResource: "cpu"},
			check: func(t *testing.T, e *Estimator, got WhatIfEstimate) {
				if huge := published(t, e, "huge"); got.Reason != huge.Reason {
					t.Errorf("reason %q differs from the published %q", got.Reason, huge.Reason)
				}
			},
		},
		"a demand that saturates at unlimited is unfeasible": {
			info: whatIfInfo("9223372036854775807", 0),
			want: whatIfShape{Admissibility: Unfeasible, Method: MethodNone, Position: 4,
				Reason: "flavor default: cpu overflowing int64 > potential 2 (nominal 2, borrowable 0)", BottleneckFlavor: "default", BottleneckResource: "cpu"},
		},
		"zero demand is quotable and unbounded by quota": {
			info: workload.NewInfo(utiltestingapi.MakeWorkload("what-if", "ns").Request(corev1.ResourceCPU, "0").Obj()),
			want: whatIfShape{Admissibility: Quotable, Method: MethodAPriori, HasWait: true, Position: 4, Unbounded: true},
		},
		"without service knowledge: admissibility, position and k_eff, no wait": {
			info:      whatIfInfo("500m", 0),
			noService: true,
			want: whatIfShape{Admissibility: Quotable, Method: MethodNone, Position: 4,
				EffectiveServers: 4, BottleneckFlavor: "default", BottleneckResource: "cpu"},
		},
		"without service knowledge, at the head of a full ClusterQueue: no wait": {
			info:      whatIfInfo("500m", 10),
			noService: true,
			want: whatIfShape{Admissibility: Quotable, Method: MethodNone, Position: 0,
				EffectiveServers: 4, BottleneckFlavor: "default", BottleneckResource: "cpu"},
		},
		"without service knowledge, at the head and fitting the free quota: Immediate": {
			info:      whatIfInfo("1", 10),
			noService: true,
			objects: func() envObjects {
				objs := strictPaperObjects()
				objs.running = objs.running[:2] // 1 CPU of 2 free
				return objs
			},
			want: whatIfShape{Admissibility: Quotable, Method: MethodImmediate, HasWait: true, Position: 0,
				EffectiveServers: 2, BottleneckFlavor: "default", BottleneckResource: "cpu"},
			check: func(t *testing.T, _ *Estimator, got WhatIfEstimate) {
				// No cycle or latency has been measured yet: admitted at once.
				if got.ExpectedWait != 0 || got.P90 != 0 {
					t.Errorf("waits %v (P90 %v), want 0 before any cycle or latency is measured", got.ExpectedWait, got.P90)
				}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objects := strictPaperObjects
			if tc.objects != nil {
				objects = tc.objects
			}
			env := newTestEnv(t, objects())
			var opts []Option
			if !tc.noService {
				opts = append(opts, WithPriorMeanService(20*time.Second))
			}
			e := env.estimator(t, opts...)
			e.Refresh(env.ctx)
			got, err := e.WhatIf("cq", tc.info)
			if err != nil {
				t.Fatalf("WhatIf: %v", err)
			}
			if diff := cmp.Diff(tc.want, shapeOf(got)); diff != "" {
				t.Errorf("what-if (-want,+got):\n%s", diff)
			}
			if !got.EstimatedAt.Equal(t0) || !got.EstimatedAdmission.Equal(t0.Add(got.ExpectedWait)) && got.HasWait {
				t.Errorf("estimated at %v, admission %v: want the refresh's time %v and that plus the wait", got.EstimatedAt, got.EstimatedAdmission, t0)
			}
			checkWaitsSane(t, got)
			if tc.check != nil {
				tc.check(t, e, got)
			}
		})
	}
}

// checkWaitsSane fails for a negative wait, P50 above P90, or waits given
// without HasWait.
func checkWaitsSane(t *testing.T, w WhatIfEstimate) {
	t.Helper()
	if w.ExpectedWait < 0 || w.P50 < 0 || w.P90 < 0 || w.P50 > w.P90 {
		t.Errorf("waits %v, P50 %v, P90 %v: want non-negative with P50 ≤ P90", w.ExpectedWait, w.P50, w.P90)
	}
	if !w.HasWait && (w.ExpectedWait != 0 || w.P50 != 0 || w.P90 != 0) {
		t.Errorf("waits given without HasWait: %+v", w)
	}
	if math.IsNaN(w.QueueUtilization) || math.IsInf(w.QueueUtilization, 0) {
		t.Errorf("utilization %v", w.QueueUtilization)
	}
}

// A what-if of the shape of the last pending workload, asked of the same
// state without that workload, is rolled exactly as that workload was: the
// same place among the quotable workloads, the same random numbers.
func TestWhatIfReproducesThePublishedEstimateOfTheSameWorkload(t *testing.T) {
	withP2 := newTestEnv(t, strictPaperObjects())
	e := withP2.estimator(t, WithPriorMeanService(20*time.Second))
	e.Refresh(withP2.ctx)
	want, ok := e.Results().Workload(workload.NewReference("ns", "p2"))
	if !ok || !want.HasWait {
		t.Fatalf("no published wait for p2: %+v", want)
	}

	objs := strictPaperObjects()
	objs.pending = append(objs.pending[:2], objs.pending[3:]...) // p0, p1, huge
	withoutP2 := newTestEnv(t, objs)
	e = withoutP2.estimator(t, WithPriorMeanService(20*time.Second))
	e.Refresh(withoutP2.ctx)
	got, err := e.WhatIf("cq", whatIfInfo("500m", 0))
	if err != nil {
		t.Fatalf("WhatIf: %v", err)
	}
	if got.Position != 3 {
		t.Errorf("position %d, want 3 (behind p0, p1 and huge)", got.Position)
	}
	// Published waits are kept in whole milliseconds.
	toMillis := cmp.Transformer("millis", func(d time.Duration) time.Duration { return d.Round(time.Millisecond) })
	if diff := cmp.Diff(want, got.WorkloadEstimate, toMillis, cmpopts.EquateApproxTime(time.Millisecond)); diff != "" {
		t.Errorf("what-if against the published estimate of p2 (-want,+got):\n%s", diff)
	}
}

func TestWhatIfErrors(t *testing.T) {
	cases := map[string]struct {
		cq      kueue.ClusterQueueReference
		info    *workload.Info
		refresh bool
		wantErr error
	}{
		"unknown ClusterQueue":     {cq: "nope", info: whatIfInfo("1", 0), refresh: true, wantErr: ErrUnknownClusterQueue},
		"before the first refresh": {cq: "cq", info: whatIfInfo("1", 0), wantErr: ErrUnknownClusterQueue},
		"no workload":              {cq: "cq", refresh: true, wantErr: ErrInvalidWhatIf},
		// Kueue's workload.NewInfo drops negative requests; an Info built
		// otherwise may still carry one.
		"negative request": {cq: "cq", refresh: true, wantErr: ErrInvalidWhatIf, info: &workload.Info{
			Obj:           utiltestingapi.MakeWorkload("w", "ns").Obj(),
			TotalRequests: []workload.PodSetResources{{Name: "main", Count: 1, Requests: resources.NewRequestsFromMap(map[corev1.ResourceName]int64{corev1.ResourceCPU: -1000})}},
		}},
		"no pod set": {cq: "cq", info: workload.NewInfo(utiltestingapi.MakeWorkload("w", "ns").PodSets().Obj()), refresh: true, wantErr: ErrInvalidWhatIf},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := newTestEnv(t, strictPaperObjects())
			e := env.estimator(t, WithPriorMeanService(20*time.Second))
			if tc.refresh {
				e.Refresh(env.ctx)
			}
			_, err := e.WhatIf(tc.cq, tc.info)
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("WhatIf error %v, want %v", err, tc.wantErr)
			}
		})
	}
	var nilEstimator *Estimator
	if _, err := nilEstimator.WhatIf("cq", whatIfInfo("1", 0)); !errors.Is(err, ErrUnknownClusterQueue) {
		t.Errorf("nil estimator: error %v, want %v", err, ErrUnknownClusterQueue)
	}
}

// With ρ_eff ≥ 1 the what-if says the queue is unstable and its figures
// stay finite and within the horizon.
func TestWhatIfOnAnUnstableQueue(t *testing.T) {
	env := newTestEnv(t, strictPaperObjects())
	e := env.estimator(t, WithPriorMeanService(20*time.Second), WithHorizon(time.Hour))
	e.Refresh(env.ctx)
	part := *e.Results().Part("cq")
	part.Model.HasRates, part.Model.Stable, part.Model.Utilization = true, false, 1.5
	got := e.whatIf(&part, convert.WorkloadDemand(whatIfInfo("500m", 0)), 0, 0)
	if !got.QueueHasRates || got.QueueStable || got.QueueUtilization != 1.5 {
		t.Errorf("queue model in the answer: rates %v, stable %v, ρ %v; want the unstable model", got.QueueHasRates, got.QueueStable, got.QueueUtilization)
	}
	if !got.HasWait || got.P90 > time.Hour {
		t.Errorf("got %+v, want a wait within the horizon", got)
	}
	checkWaitsSane(t, got)
}

// WhatIf reads only published, immutable state: run it against refreshes
// under the race detector.
func TestWhatIfConcurrentWithRefreshes(t *testing.T) {
	env := newTestEnv(t, strictPaperObjects())
	e := env.estimator(t, WithPriorMeanService(20*time.Second))
	e.Refresh(env.ctx)
	ctx, cancel := context.WithCancel(env.ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 50 && ctx.Err() == nil; i++ {
			env.clock.Step(time.Second)
			e.Refresh(ctx)
		}
	}()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				got, err := e.WhatIf("cq", whatIfInfo("500m", 0))
				if err != nil {
					t.Errorf("WhatIf: %v", err)
					return
				}
				checkWaitsSane(t, got)
			}
		}()
	}
	wg.Wait()
	if n := e.Panics(); n != 0 {
		t.Errorf("%d panics recovered", n)
	}
}
