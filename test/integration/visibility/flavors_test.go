package visibility

import (
	"fmt"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	visibilityapi "sigs.k8s.io/kueue/apis/visibility/v1beta2"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
)

const gpu = corev1.ResourceName("example.com/gpu")

var _ = ginkgo.Describe("Several flavors and resource groups", func() {
	ginkgo.It("names the GPU as the bottleneck and tries every flavor before calling a workload Unfeasible", func() {
		for _, name := range []string{"on-demand", "spot", "gpu-a", "gpu-b"} {
			gomega.Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, utiltestingapi.MakeResourceFlavor(name).Obj()))).To(gomega.Succeed())
		}
		ns := createNamespace("flavors-")
		cq := utiltestingapi.MakeClusterQueue("cq-flavors").
			ResourceGroup(
				*utiltestingapi.MakeFlavorQuotas("on-demand").Resource(corev1.ResourceCPU, "4").Resource(corev1.ResourceMemory, "8Gi").Obj(),
				*utiltestingapi.MakeFlavorQuotas("spot").Resource(corev1.ResourceCPU, "4").Resource(corev1.ResourceMemory, "8Gi").Obj(),
			).
			ResourceGroup(
				*utiltestingapi.MakeFlavorQuotas("gpu-a").Resource(gpu, "2").Obj(),
				*utiltestingapi.MakeFlavorQuotas("gpu-b").Resource(gpu, "2").Obj(),
			).Obj()
		lq := utiltestingapi.MakeLocalQueue("lq", ns.Name).ClusterQueue(cq.Name).Obj()
		createAll(cq, lq)

		// Four one-GPU workloads fill both GPU flavors; two more wait. A
		// three-GPU workload fits neither flavor of the GPU group.
		for i := range 6 {
			createAll(utiltestingapi.MakeWorkload(fmt.Sprintf("gpu-%d", i), ns.Name).Queue(kueue.LocalQueueName(lq.Name)).
				Request(corev1.ResourceCPU, "500m").Request(corev1.ResourceMemory, "256Mi").Request(gpu, "1").
				MaximumExecutionTimeSeconds(600).Obj())
		}
		createAll(utiltestingapi.MakeWorkload("three-gpus", ns.Name).Queue(kueue.LocalQueueName(lq.Name)).
			Request(corev1.ResourceCPU, "500m").Request(gpu, "3").Obj())

		gomega.Eventually(func(g gomega.Gomega) {
			s, err := visibility.VisibilityV1beta2().ClusterQueues().GetPendingWorkloadsSummary(ctx, cq.Name, metav1.GetOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(s.Items).To(gomega.HaveLen(3))
			g.Expect(s.QueueModel).NotTo(gomega.BeNil())
			// k_eff by the paper's Eq. 3: the best flavor of the GPU group
			// holds 2 one-GPU workloads; CPU and memory would allow 8.
			g.Expect(s.QueueModel.EffectiveServers).To(gomega.Equal(int32(2)))
			g.Expect(s.QueueModel.BottleneckResource).To(gomega.Equal(gpu))
			g.Expect(string(s.QueueModel.BottleneckFlavor)).To(gomega.Equal("gpu-a"))
			byName := map[string]*visibilityapi.WaitTimeEstimate{}
			for i := range s.Items {
				byName[s.Items[i].Name] = s.Items[i].WaitTimeEstimate
			}
			g.Expect(byName["three-gpus"]).NotTo(gomega.BeNil())
			g.Expect(byName["three-gpus"].Admissibility).To(gomega.Equal(visibilityapi.AdmissibilityUnfeasible))
			g.Expect(byName["three-gpus"].Reason).To(gomega.Equal(
				"flavor gpu-a: example.com/gpu 3 > potential 2 (nominal 2, borrowable 0); flavor gpu-b: example.com/gpu 3 > potential 2 (nominal 2, borrowable 0)"))
			// Which two one-GPU workloads wait depends on the scheduler's
			// pace: created within one second, they tie on creation time.
			for name, est := range byName {
				if name == "three-gpus" {
					continue
				}
				g.Expect(name).To(gomega.HavePrefix("gpu-"))
				g.Expect(est).NotTo(gomega.BeNil(), name)
				g.Expect(est.Admissibility).To(gomega.Equal(visibilityapi.AdmissibilityQuotable), name)
				g.Expect(est.ExpectedWaitMilliseconds).NotTo(gomega.BeNil(), name)
			}
		}, timeout, interval).Should(gomega.Succeed())
	})
})
