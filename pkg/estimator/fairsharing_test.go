package estimator

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	utilqueue "sigs.k8s.io/kueue/pkg/util/queue"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"
)

// afsObjects is a 2-CPU ClusterQueue under admission fair sharing, full
// with four 500m workloads of LocalQueue heavy, with three 500m workloads
// of heavy pending ahead of one of LocalQueue light (created last).
func afsObjects() envObjects {
	cq := utiltestingapi.MakeClusterQueue("cq").
		ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, "2").Resource(corev1.ResourceMemory, "1Gi").Obj()).
		AdmissionMode(kueue.UsageBasedAdmissionFairSharing).Obj()
	objs := envObjects{
		flavors: []*kueue.ResourceFlavor{utiltestingapi.MakeResourceFlavor("default").Obj()},
		cqs:     []*kueue.ClusterQueue{cq},
		lqs: []*kueue.LocalQueue{
			utiltestingapi.MakeLocalQueue("heavy", "ns").ClusterQueue("cq").Obj(),
			utiltestingapi.MakeLocalQueue("light", "ns").ClusterQueue("cq").Obj(),
		},
	}
	for i := range 4 {
		w := runningWorkload("r"+string(rune('0'+i)), "cq", "500m", t0.Add(-time.Duration(10+i)*time.Second))
		w.Spec.QueueName = "heavy"
		objs.running = append(objs.running, w)
	}
	for i := range 3 {
		w := pendingWorkload("h"+string(rune('0'+i)), "500m", t0.Add(-time.Duration(5-i)*time.Second))
		w.Spec.QueueName = "heavy"
		objs.pending = append(objs.pending, w)
	}
	light := pendingWorkload("l0", "500m", t0.Add(-time.Second))
	light.Spec.QueueName = "light"
	objs.pending = append(objs.pending, light)
	return objs
}

// TestRollOrdersByAdmissionFairSharingUsage: with the LocalQueues' usage
// given (WithAdmissionFairSharingUsage) and heavy's consumed resources in
// Kueue's ledger, the light LocalQueue's workload, last in the queue's
// FIFO order, is forecast to start before heavy's, as Kueue orders it;
// with the ordering only flagged it waits behind them.
func TestRollOrdersByAdmissionFairSharingUsage(t *testing.T) {
	tests := map[string]struct {
		opts []Option
		// lightFirst: l0's P50 is below h0's.
		lightFirst bool
	}{
		"admission fair sharing rolled": {
			opts:       []Option{WithAdmissionFairSharing(true), WithAdmissionFairSharingUsage(10*time.Minute, 5*time.Minute, nil)},
			lightFirst: true,
		},
		"admission fair sharing only flagged": {
			opts: []Option{WithAdmissionFairSharing(true)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			objs := afsObjects()
			env := newTestEnv(t, objs)
			env.queues.AfsUsageLedger.SetForTest("ns/heavy", corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")}, t0.Add(-time.Minute))
			e := env.estimator(t, append([]Option{WithPriorMeanService(60 * time.Second)}, tc.opts...)...)
			e.markWarmed()
			cqHandler, lqHandler := e.ClusterQueueEventHandler(), e.LocalQueueEventHandler()
			for _, cq := range objs.cqs {
				cqHandler.OnAdd(cq, true)
			}
			for _, lq := range objs.lqs {
				lqHandler.OnAdd(lq, true)
			}
			e.Refresh(env.ctx)
			light, ok := e.Results().Workload(workload.NewReference("ns", "l0"))
			if !ok {
				t.Fatal("no estimate of l0")
			}
			heavy, ok := e.Results().Workload(workload.NewReference("ns", "h0"))
			if !ok {
				t.Fatal("no estimate of h0")
			}
			if !light.HasWait || !heavy.HasWait {
				t.Fatalf("l0 has a wait %v, h0 %v; want both", light.HasWait, heavy.HasWait)
			}
			if got := light.P50 < heavy.P50; got != tc.lightFirst {
				t.Errorf("l0's P50 %v below h0's %v = %v, want %v", light.P50, heavy.P50, got, tc.lightFirst)
			}
		})
	}
}

// TestLocalQueueWeightsComeFromTheInformer: the LocalQueue handler keeps
// each LocalQueue's spec.fairSharing.weight (1 when unset) and forgets a
// deleted one, whose workloads then count at weight 1, as Kueue counts a
// missing LocalQueue.
func TestLocalQueueWeightsComeFromTheInformer(t *testing.T) {
	env := newTestEnv(t, afsObjects())
	e := env.estimator(t)
	h := e.LocalQueueEventHandler()
	weighted := utiltestingapi.MakeLocalQueue("heavy", "ns").ClusterQueue("cq").FairSharing(&kueue.FairSharing{Weight: ptr.To(resource.MustParse("2"))}).Obj()
	plain := utiltestingapi.MakeLocalQueue("light", "ns").ClusterQueue("cq").Obj()
	h.OnAdd(weighted, true)
	h.OnAdd(plain, true)
	got := e.admissionFairSharingOf(t0, []utilqueue.LocalQueueReference{"ns/heavy", "ns/light", "ns/unknown"})
	for i, want := range []float64{2, 1, 1} {
		if got.LocalQueues[i].Weight != want {
			t.Errorf("weight of LocalQueue %d = %v, want %v", i, got.LocalQueues[i].Weight, want)
		}
	}
	h.OnDelete(weighted)
	if w := e.admissionFairSharingOf(t0, []utilqueue.LocalQueueReference{"ns/heavy"}).LocalQueues[0].Weight; w != 1 {
		t.Errorf("weight of a deleted LocalQueue = %v, want 1", w)
	}
}
