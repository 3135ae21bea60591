package smoke

import (
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/features"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
	"sigs.k8s.io/kueue/test/util"
)

var _ = ginkgo.Describe("The patched Kueue", func() {
	ginkgo.It("registers the WaitTimeEstimation gate as alpha and off by default", func() {
		spec, ok := utilfeature.DefaultMutableFeatureGate.GetAll()[features.WaitTimeEstimation]
		gomega.Expect(ok).To(gomega.BeTrue(), "gate %s is not registered", features.WaitTimeEstimation)
		gomega.Expect(spec.Default).To(gomega.BeFalse())
		gomega.Expect(spec.PreRelease).To(gomega.Equal(featuregate.Alpha))
		gomega.Expect(features.Enabled(features.WaitTimeEstimation)).To(gomega.BeFalse())
	})

	ginkgo.It("admits a workload that fits the ClusterQueue's quota and holds back one that does not", func() {
		ns := util.CreateNamespaceFromPrefixWithLog(ctx, k8sClient, "smoke-")
		rf := utiltestingapi.MakeResourceFlavor("default").Obj()
		util.MustCreate(ctx, k8sClient, rf)
		cq := utiltestingapi.MakeClusterQueue("cq-smoke").
			ResourceGroup(*utiltestingapi.MakeFlavorQuotas(rf.Name).
				Resource(corev1.ResourceCPU, "2").
				Resource(corev1.ResourceMemory, "1Gi").Obj()).
			Obj()
		util.MustCreate(ctx, k8sClient, cq)
		lq := utiltestingapi.MakeLocalQueue("lq-smoke", ns.Name).ClusterQueue(cq.Name).Obj()
		util.MustCreate(ctx, k8sClient, lq)
		ginkgo.DeferCleanup(func() {
			gomega.Expect(util.DeleteNamespace(ctx, k8sClient, ns)).To(gomega.Succeed())
			util.ExpectObjectToBeDeleted(ctx, k8sClient, cq, true)
			util.ExpectObjectToBeDeleted(ctx, k8sClient, rf, true)
		})

		fits := utiltestingapi.MakeWorkload("fits", ns.Name).Queue(kueue.LocalQueueName(lq.Name)).
			Request(corev1.ResourceCPU, "500m").Request(corev1.ResourceMemory, "64Mi").Obj()
		tooBig := utiltestingapi.MakeWorkload("too-big", ns.Name).Queue(kueue.LocalQueueName(lq.Name)).
			Request(corev1.ResourceCPU, "20").Obj()
		util.MustCreate(ctx, k8sClient, fits)
		util.MustCreate(ctx, k8sClient, tooBig)

		util.ExpectWorkloadsToHaveQuotaReservation(ctx, k8sClient, cq.Name, fits)
		util.ExpectWorkloadsToBePending(ctx, k8sClient, tooBig)
	})
})
