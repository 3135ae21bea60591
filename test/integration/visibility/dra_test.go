package visibility

import (
	"fmt"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	visibilityapi "sigs.k8s.io/kueue/apis/visibility/v1beta2"
	utiltesting "sigs.k8s.io/kueue/pkg/util/testing"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
)

// gpuDeviceClass is the DeviceClass the suite's Kueue Configuration maps to
// the logical resource example.com/gpu, the const gpu
// (resources.deviceClassMappings, see suite_test.go).
const gpuDeviceClass = "gpu.example.com"

// withClaims gives the workload's pod template the resource claims a job
// integration copies from its pod template: one PodResourceClaim per
// template name, each consumed by the container.
func withClaims(wl *kueue.Workload, templates ...string) *kueue.Workload {
	spec := &wl.Spec.PodSets[0].Template.Spec
	for i, tmpl := range templates {
		name := fmt.Sprintf("gpu-%d", i)
		spec.ResourceClaims = append(spec.ResourceClaims, corev1.PodResourceClaim{Name: name, ResourceClaimTemplateName: new(tmpl)})
		spec.Containers[0].Resources.Claims = append(spec.Containers[0].Resources.Claims, corev1.ResourceClaim{Name: name})
	}
	return wl
}

var _ = ginkgo.Describe("GPUs through DRA", func() {
	ginkgo.It("counts ResourceClaimTemplate devices as the mapped GPU resource: GPU bottleneck with k_eff 4, five GPUs Unfeasible", func() {
		ginkgo.By("the kube-apiserver serves resource.k8s.io/v1 by default")
		resources, err := visibility.Discovery().ServerResourcesForGroupVersion(resourcev1.SchemeGroupVersion.String())
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		served := map[string]bool{}
		for _, r := range resources.APIResources {
			served[r.Name] = true
		}
		gomega.Expect(served).To(gomega.HaveKey("deviceclasses"))
		gomega.Expect(served).To(gomega.HaveKey("resourceclaimtemplates"))

		dc := utiltesting.MakeDeviceClass(gpuDeviceClass).Obj()
		gomega.Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, dc))).To(gomega.Succeed())
		ginkgo.DeferCleanup(func() {
			gomega.Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, dc))).To(gomega.Succeed())
		})
		gomega.Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, utiltestingapi.MakeResourceFlavor("default").Obj()))).To(gomega.Succeed())
		ns := createNamespace("dra-")
		// The paper's Table 4 quota: 4 GPU / 8 CPU / 8Gi.
		cq := utiltestingapi.MakeClusterQueue("cq-dra").
			ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").
				Resource(corev1.ResourceCPU, "8").Resource(corev1.ResourceMemory, "8Gi").Resource(gpu, "4").Obj()).Obj()
		lq := utiltestingapi.MakeLocalQueue("lq", ns.Name).ClusterQueue(cq.Name).Obj()
		createAll(cq, lq,
			utiltesting.MakeResourceClaimTemplate("one-gpu", ns.Name).DeviceRequest("gpu", gpuDeviceClass, 1).Obj(),
			utiltesting.MakeResourceClaimTemplate("five-gpus", ns.Name).DeviceRequest("gpu", gpuDeviceClass, 5).Obj(),
		)

		// Six 1-GPU / 500m / 256Mi workloads: four fill the GPU quota, two
		// wait. Five GPUs, as one request for five devices or as five
		// one-device claims, exceed the quota for good.
		for i := range 6 {
			createAll(withClaims(utiltestingapi.MakeWorkload(fmt.Sprintf("gpu-%d", i), ns.Name).Queue(kueue.LocalQueueName(lq.Name)).
				Request(corev1.ResourceCPU, "500m").Request(corev1.ResourceMemory, "256Mi").
				MaximumExecutionTimeSeconds(600).Obj(), "one-gpu"))
		}
		createAll(
			withClaims(utiltestingapi.MakeWorkload("five-devices", ns.Name).Queue(kueue.LocalQueueName(lq.Name)).
				Request(corev1.ResourceCPU, "500m").Obj(), "five-gpus"),
			withClaims(utiltestingapi.MakeWorkload("five-claims", ns.Name).Queue(kueue.LocalQueueName(lq.Name)).
				Request(corev1.ResourceCPU, "500m").Obj(), "one-gpu", "one-gpu", "one-gpu", "one-gpu", "one-gpu"),
		)

		const fiveReason = "flavor default: example.com/gpu 5 > potential 4 (nominal 4, borrowable 0)"
		// Which four of the six are admitted depends on the order the
		// workload controller resolves their claims in.
		waiting := map[string]bool{}
		gomega.Eventually(func(g gomega.Gomega) {
			s, err := visibility.VisibilityV1beta2().ClusterQueues().GetPendingWorkloadsSummary(ctx, cq.Name, metav1.GetOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(s.Items).To(gomega.HaveLen(4))
			g.Expect(s.QueueModel).NotTo(gomega.BeNil())
			// Eq. 3: min(4/1, 8/0.5, 8Gi/256Mi) = 4, bound by the GPU.
			g.Expect(s.QueueModel.EffectiveServers).To(gomega.Equal(int32(4)))
			g.Expect(s.QueueModel.BottleneckResource).To(gomega.Equal(gpu))
			g.Expect(string(s.QueueModel.BottleneckFlavor)).To(gomega.Equal("default"))
			g.Expect(s.QueueModel.UnfeasiblePendingWorkloads).To(gomega.Equal(int32(2)))
			clear(waiting)
			for _, item := range s.Items {
				est := item.WaitTimeEstimate
				g.Expect(est).NotTo(gomega.BeNil(), "no estimate for %s", item.Name)
				switch item.Name {
				case "five-devices", "five-claims":
					g.Expect(est.Admissibility).To(gomega.Equal(visibilityapi.AdmissibilityUnfeasible))
					g.Expect(est.Reason).To(gomega.Equal(fiveReason))
					g.Expect(est.ExpectedWaitMilliseconds).To(gomega.BeNil())
				default:
					waiting[item.Name] = true
					g.Expect(est.Admissibility).To(gomega.Equal(visibilityapi.AdmissibilityQuotable), item.Name)
					g.Expect(est.ExpectedWaitMilliseconds).NotTo(gomega.BeNil(), "no wait for %s", item.Name)
					g.Expect(*est.ExpectedWaitMilliseconds).To(gomega.BeNumerically(">", 0))
					g.Expect(est.EstimatedAdmissionTime).NotTo(gomega.BeNil())
				}
			}
			g.Expect(waiting).To(gomega.HaveLen(2))
		}, timeout, interval).Should(gomega.Succeed())

		ginkgo.By("the admitted workloads hold one GPU each through DRA, and the ClusterQueue all four")
		for i := range 6 {
			name := fmt.Sprintf("gpu-%d", i)
			if waiting[name] {
				continue
			}
			var wl kueue.Workload
			gomega.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: name}, &wl)).To(gomega.Succeed())
			gomega.Expect(apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved)).To(gomega.BeTrue(), name)
			gomega.Expect(wl.Status.Admission.PodSetAssignments).To(gomega.HaveLen(1))
			psa := wl.Status.Admission.PodSetAssignments[0]
			gomega.Expect(psa.Flavors).To(gomega.HaveKeyWithValue(gpu, kueue.ResourceFlavorReference("default")))
			usage := map[corev1.ResourceName]string{}
			for r, q := range psa.ResourceUsage {
				usage[r] = q.String()
			}
			gomega.Expect(usage).To(gomega.Equal(map[corev1.ResourceName]string{gpu: "1", corev1.ResourceCPU: "500m", corev1.ResourceMemory: "256Mi"}))
			// The pod template keeps asking through the claim, not a
			// container request.
			gomega.Expect(wl.Spec.PodSets[0].Template.Spec.Containers[0].Resources.Requests).NotTo(gomega.HaveKey(gpu))
		}
		gomega.Eventually(func(g gomega.Gomega) {
			var got kueue.ClusterQueue
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(cq), &got)).To(gomega.Succeed())
			g.Expect(got.Status.FlavorsReservation).To(gomega.HaveLen(1))
			var reserved []string
			for _, r := range got.Status.FlavorsReservation[0].Resources {
				if r.Name == gpu {
					reserved = append(reserved, r.Total.String())
				}
			}
			g.Expect(reserved).To(gomega.Equal([]string{"4"}))
		}, timeout, interval).Should(gomega.Succeed())

		ginkgo.By("the scheduler's own classification sees the DRA devices too")
		gomega.Eventually(func(g gomega.Gomega) {
			var wl kueue.Workload
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: "five-devices"}, &wl)).To(gomega.Succeed())
			cond := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
			g.Expect(cond).NotTo(gomega.BeNil())
			g.Expect(cond.Message).To(gomega.HaveSuffix("Wait time estimation: the workload is Unfeasible: " + fiveReason))
		}, timeout, interval).Should(gomega.Succeed())
	})
})
