package estimator

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/features"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
)

// draGPU is the logical resource a DeviceClass mapping names in Kueue's
// Configuration (resources.deviceClassMappings).
const draGPU = corev1.ResourceName("example.com/gpu")

// draWorkload requests 500m and 256Mi in its container and its GPUs through
// a ResourceClaimTemplate, as Kueue's job integrations copy a pod template
// with spec.resourceClaims: the GPU is in no container request.
func draWorkload(name string, created time.Time) *kueue.Workload {
	wl := utiltestingapi.MakeWorkload(name, "ns").Queue("lq").
		Request(corev1.ResourceCPU, "500m").Request(corev1.ResourceMemory, "256Mi").
		Creation(created).Obj()
	spec := &wl.Spec.PodSets[0].Template.Spec
	spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: new("gpu")}}
	spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	return wl
}

// draDevices is what Kueue's workload controller computes from the
// ResourceClaimTemplates (dra.GetResourceRequestsForResourceClaimTemplates,
// per pod) and hands to the queue manager with
// workload.WithPreprocessedDRAResources.
func draDevices(gpus string) workload.InfoOption {
	return workload.WithPreprocessedDRAResources(map[kueue.PodSetReference]corev1.ResourceList{
		kueue.DefaultPodSetName: {draGPU: resource.MustParse(gpus)},
	}, nil)
}

// TestDRADemandReachesTheModel checks that GPUs requested through DRA, which
// Kueue adds to workload.Info.TotalRequests of pending workloads (queue
// manager) and to the admission's resource usage of running ones (scheduler
// cache), reach the estimator's partition and k_eff: the paper's Table 4
// quota, 4 GPU / 8 CPU / 8Gi, with 1 GPU / 500m / 256Mi workloads.
func TestDRADemandReachesTheModel(t *testing.T) {
	features.SetFeatureGateDuringTest(t, features.KueueDRAIntegration, true)
	cq := utiltestingapi.MakeClusterQueue("cq").ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").
		Resource(corev1.ResourceCPU, "8").Resource(corev1.ResourceMemory, "8Gi").Resource(draGPU, "4").Obj()).Obj()
	admission := utiltestingapi.MakeAdmission("cq").PodSets(utiltestingapi.MakePodSetAssignment(kueue.DefaultPodSetName).
		Assignment(corev1.ResourceCPU, "default", "500m").Assignment(corev1.ResourceMemory, "default", "256Mi").
		Assignment(draGPU, "default", "1").Obj()).Obj()
	// Kueue writes the devices into the admission's resource usage.
	running := utiltestingapi.MakeWorkload("r0", "ns").Queue("lq").ReserveQuotaAt(admission, t0.Add(-10*time.Second)).Obj()
	running.Spec = draWorkload("r0", t0).Spec

	cases := map[string]struct {
		// pendingOptions are given to the queue manager with every
		// pending workload; none means Kueue did not preprocess DRA.
		pendingOptions []workload.InfoOption
		fiveGPUs       workload.InfoOption
		// wantServers and wantBottleneck are the queue model's k_eff and
		// bottleneck resource; 0 skips the check.
		wantServers    int
		wantBottleneck string
		wantUnfeasible string
	}{
		"devices counted as the mapped resource": {
			pendingOptions: []workload.InfoOption{draDevices("1")},
			fiveGPUs:       draDevices("5"),
			wantServers:    4, wantBottleneck: string(draGPU),
			wantUnfeasible: "flavor default: example.com/gpu 5 > potential 4 (nominal 4, borrowable 0)",
		},
		// The control: without the preprocessing the pending demand has no
		// GPU and the five-GPU workload would look Quotable.
		"without DRA preprocessing the pending GPUs are invisible": {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := newTestEnv(t, envObjects{
				flavors: []*kueue.ResourceFlavor{utiltestingapi.MakeResourceFlavor("default").Obj()},
				cqs:     []*kueue.ClusterQueue{cq},
				lqs:     []*kueue.LocalQueue{utiltestingapi.MakeLocalQueue("lq", "ns").ClusterQueue("cq").Obj()},
				running: []*kueue.Workload{running},
			})
			for i, name := range []string{"p0", "p1"} {
				if err := env.queues.AddOrUpdateWorkload(logr.Discard(), draWorkload(name, t0.Add(time.Duration(i-5)*time.Second)), tc.pendingOptions...); err != nil {
					t.Fatal(err)
				}
			}
			var fiveOptions []workload.InfoOption
			if tc.fiveGPUs != nil {
				fiveOptions = append(fiveOptions, tc.fiveGPUs)
			}
			if err := env.queues.AddOrUpdateWorkload(logr.Discard(), draWorkload("five", t0.Add(-time.Second)), fiveOptions...); err != nil {
				t.Fatal(err)
			}
			e := env.estimator(t, WithPriorMeanService(20*time.Second))
			e.Refresh(env.ctx)
			model, ok := e.Results().Queue("cq")
			if !ok {
				t.Fatal("no queue model for cq")
			}
			if tc.wantServers != 0 && (model.EffectiveServers != tc.wantServers || string(model.BottleneckResource) != tc.wantBottleneck) {
				t.Errorf("k_eff = %d (%s/%s), want %d (%s)", model.EffectiveServers, model.BottleneckFlavor, model.BottleneckResource, tc.wantServers, tc.wantBottleneck)
			}
			five, ok := e.Results().Workload(workload.NewReference("ns", "five"))
			if !ok {
				t.Fatal("no estimate for the five-GPU workload")
			}
			wantAdm := Quotable
			if tc.wantUnfeasible != "" {
				wantAdm = Unfeasible
			}
			if five.Admissibility != wantAdm || five.Reason != tc.wantUnfeasible {
				t.Errorf("five GPUs: (%s, %q), want (%s, %q)", five.Admissibility, five.Reason, wantAdm, tc.wantUnfeasible)
			}
			for _, name := range []string{"p0", "p1"} {
				est, ok := e.Results().Workload(workload.NewReference("ns", name))
				if !ok || est.Admissibility != Quotable || !est.HasWait {
					t.Errorf("%s: %+v (found %t), want Quotable with a wait", name, est, ok)
				}
			}
		})
	}
}

// draAdmission is the admission Kueue writes for a draWorkload with gpus
// GPUs: the devices are in its resource usage.
func draAdmission(gpus string) *kueue.Admission {
	return utiltestingapi.MakeAdmission("cq").PodSets(utiltestingapi.MakePodSetAssignment(kueue.DefaultPodSetName).
		Assignment(corev1.ResourceCPU, "default", "500m").Assignment(corev1.ResourceMemory, "default", "256Mi").
		Assignment(draGPU, "default", gpus).Obj()).Obj()
}

// TestDRAWorkloadsDrawTheirShapesServiceLaw is
// TestRunningWorkloadsDrawTheirShapesServiceLaw with GPUs claimed through
// DRA, whose shapes differ only in the devices (in the admission's usage
// of running workloads, in the preprocessed requests of pending ones): on
// 4 GPUs held by four running 1-GPU workloads, a pending 2-GPU one waits
// for two to end. Completions of 1-GPU workloads took 1 s, of 2-GPU ones
// 100 s: matched to their shape, the running workloads end within seconds.
// The same times from one shape are one law.
func TestDRAWorkloadsDrawTheirShapesServiceLaw(t *testing.T) {
	features.SetFeatureGateDuringTest(t, features.KueueDRAIntegration, true)
	cq := utiltestingapi.MakeClusterQueue("cq").ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").
		Resource(corev1.ResourceCPU, "8").Resource(corev1.ResourceMemory, "8Gi").Resource(draGPU, "4").Obj()).Obj()
	cases := map[string]struct {
		gpus   []string
		within [2]float64
	}{
		"a law per shape":                   {gpus: []string{"1", "2"}, within: [2]float64{0, 5}},
		"one shape, the same service times": {gpus: []string{"1"}, within: [2]float64{10, 1000}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := envObjects{
				flavors: []*kueue.ResourceFlavor{utiltestingapi.MakeResourceFlavor("default").Obj()},
				cqs:     []*kueue.ClusterQueue{cq},
				lqs:     []*kueue.LocalQueue{utiltestingapi.MakeLocalQueue("lq", "ns").ClusterQueue("cq").Obj()},
			}
			for i := range 4 {
				name := fmt.Sprintf("r%d", i)
				running := utiltestingapi.MakeWorkload(name, "ns").Queue("lq").ReserveQuotaAt(draAdmission("1"), t0.Add(-10*time.Second)).Obj()
				running.Spec = draWorkload(name, t0).Spec
				objs.running = append(objs.running, running)
			}
			env := newTestEnv(t, objs)
			if err := env.queues.AddOrUpdateWorkload(logr.Discard(), draWorkload("big", t0.Add(-time.Second)), draDevices("2")); err != nil {
				t.Fatal(err)
			}
			e := env.estimator(t)
			e.markWarmed()
			completeInTurn(env, e, 2*engine.BootstrapServiceBelow, func(i int, at time.Time) (*kueue.Workload, *kueue.Workload) {
				w := draWorkload(fmt.Sprintf("w-%d", i), at)
				admitted := w.DeepCopy()
				admitted.Status.Admission = draAdmission(tc.gpus[i%len(tc.gpus)])
				return w, admitted
			}, []time.Duration{time.Second, 100 * time.Second})
			e.Refresh(env.ctx)
			est, ok := e.Results().Workload(workload.NewReference("ns", "big"))
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
