package visibility

import (
	"fmt"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
)

var _ = ginkgo.Describe("Pending workloads through the aggregation layer", func() {
	ginkgo.It("lists pending workloads of a full ClusterQueue in order", func() {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "partition-"}}
		gomega.Expect(k8sClient.Create(ctx, ns)).To(gomega.Succeed())
		rf := utiltestingapi.MakeResourceFlavor("default").Obj()
		gomega.Expect(k8sClient.Create(ctx, rf)).To(gomega.Succeed())
		cq := utiltestingapi.MakeClusterQueue("cq-partition").
			ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").
				Resource(corev1.ResourceCPU, "2").Resource(corev1.ResourceMemory, "1Gi").Obj()).Obj()
		gomega.Expect(k8sClient.Create(ctx, cq)).To(gomega.Succeed())
		lq := utiltestingapi.MakeLocalQueue("lq", ns.Name).ClusterQueue(cq.Name).Obj()
		gomega.Expect(k8sClient.Create(ctx, lq)).To(gomega.Succeed())

		var names []string
		for i := range 7 {
			wl := utiltestingapi.MakeWorkload(fmt.Sprintf("small-%d", i), ns.Name).Queue(kueue.LocalQueueName(lq.Name)).
				Request(corev1.ResourceCPU, "500m").Request(corev1.ResourceMemory, "64Mi").Obj()
			gomega.Expect(k8sClient.Create(ctx, wl)).To(gomega.Succeed())
			names = append(names, wl.Name)
		}
		huge := utiltestingapi.MakeWorkload("huge", ns.Name).Queue(kueue.LocalQueueName(lq.Name)).
			Request(corev1.ResourceCPU, "20").Obj()
		gomega.Expect(k8sClient.Create(ctx, huge)).To(gomega.Succeed())

		gomega.Eventually(func(g gomega.Gomega) {
			summary, err := visibility.VisibilityV1beta2().ClusterQueues().GetPendingWorkloadsSummary(ctx, cq.Name, metav1.GetOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(summary.Items).To(gomega.HaveLen(4))
		}, 30*time.Second, 200*time.Millisecond).Should(gomega.Succeed())
	})
})
