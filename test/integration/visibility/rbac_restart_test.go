package visibility

import (
	"fmt"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	kueueclientset "sigs.k8s.io/kueue/client-go/clientset/versioned"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload/finish"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/controlplane"
)

var _ = ginkgo.Describe("Access and restarts", func() {
	ginkgo.BeforeEach(func() {
		rf := utiltestingapi.MakeResourceFlavor("default").Obj()
		gomega.Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, rf))).To(gomega.Succeed())
	})

	ginkgo.It("lets a user allowed one namespace's LocalQueue see its estimates and refuses the ClusterQueue endpoint", func() {
		ns := createNamespace("rbac-")
		other := createNamespace("rbac-other-")
		cq := utiltestingapi.MakeClusterQueue("cq-rbac").
			ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, "1").Obj()).Obj()
		lq := utiltestingapi.MakeLocalQueue("lq", ns.Name).ClusterQueue(cq.Name).Obj()
		otherLQ := utiltestingapi.MakeLocalQueue("lq", other.Name).ClusterQueue(cq.Name).Obj()
		createAll(cq, lq, otherLQ)
		for i := range 3 {
			createAll(utiltestingapi.MakeWorkload(fmt.Sprintf("w%d", i), ns.Name).Queue("lq").
				Request(corev1.ResourceCPU, "1").MaximumExecutionTimeSeconds(300).Obj())
		}
		createAll(
			&rbacv1.Role{
				ObjectMeta: metav1.ObjectMeta{Name: "pending-reader", Namespace: ns.Name},
				Rules: []rbacv1.PolicyRule{{
					APIGroups: []string{"visibility.kueue.x-k8s.io"},
					Resources: []string{"localqueues/pendingworkloads"},
					Verbs:     []string{"get"},
				}},
			},
			&rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "alice-pending-reader", Namespace: ns.Name},
				RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "pending-reader"},
				Subjects:   []rbacv1.Subject{{Kind: "User", Name: "alice", APIGroup: "rbac.authorization.k8s.io"}},
			},
		)
		aliceCfg, err := cp.UserConfig("alice")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		alice, err := kueueclientset.NewForConfig(aliceCfg)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())

		gomega.Eventually(func(g gomega.Gomega) {
			s, err := alice.VisibilityV1beta2().LocalQueues(ns.Name).GetPendingWorkloadsSummary(ctx, lq.Name, metav1.GetOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(s.Items).To(gomega.HaveLen(2))
			for _, item := range s.Items {
				g.Expect(item.WaitTimeEstimate).NotTo(gomega.BeNil())
				g.Expect(item.WaitTimeEstimate.ExpectedWaitMilliseconds).NotTo(gomega.BeNil())
			}
		}, timeout, interval).Should(gomega.Succeed())

		_, err = alice.VisibilityV1beta2().ClusterQueues().GetPendingWorkloadsSummary(ctx, cq.Name, metav1.GetOptions{})
		gomega.Expect(apierrors.IsForbidden(err)).To(gomega.BeTrue(), "ClusterQueue endpoint: %v", err)
		_, err = alice.VisibilityV1beta2().LocalQueues(other.Name).GetPendingWorkloadsSummary(ctx, otherLQ.Name, metav1.GetOptions{})
		gomega.Expect(apierrors.IsForbidden(err)).To(gomega.BeTrue(), "another namespace: %v", err)
	})

	ginkgo.It("recovers its statistics from cached objects after a restart, without persistence", func() {
		ns := createNamespace("restart-")
		cq := utiltestingapi.MakeClusterQueue("cq-restart").
			ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, "1").Obj()).Obj()
		lq := utiltestingapi.MakeLocalQueue("lq", ns.Name).ClusterQueue(cq.Name).Obj()
		createAll(cq, lq)

		// Run three workloads to completion, one after the other, so the
		// ClusterQueue has a service-time history.
		for i := range 3 {
			wl := utiltestingapi.MakeWorkload(fmt.Sprintf("done-%d", i), ns.Name).Queue("lq").Request(corev1.ResourceCPU, "1").Obj()
			createAll(wl)
			gomega.Eventually(func(g gomega.Gomega) {
				g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(wl), wl)).To(gomega.Succeed())
				g.Expect(apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved)).To(gomega.BeTrue())
			}, timeout, interval).Should(gomega.Succeed())
			gomega.Expect(finish.Finish(ctx, k8sClient, wl, "Succeeded", "finished by the test", clock.RealClock{})).To(gomega.Succeed())
		}
		createAll(
			utiltestingapi.MakeWorkload("running", ns.Name).Queue("lq").Request(corev1.ResourceCPU, "1").Obj(),
			utiltestingapi.MakeWorkload("waiting", ns.Name).Queue("lq").Request(corev1.ResourceCPU, "1").Obj(),
		)
		modelHasRates := func(g gomega.Gomega) {
			s, err := visibility.VisibilityV1beta2().ClusterQueues().GetPendingWorkloadsSummary(ctx, cq.Name, metav1.GetOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(s.QueueModel).NotTo(gomega.BeNil())
			g.Expect(s.QueueModel.MeanServiceMilliseconds).NotTo(gomega.BeNil(), "no measured service time")
			g.Expect(s.QueueModel.ArrivalsPerHourMilli).NotTo(gomega.BeNil(), "no measured arrival rate")
			g.Expect(s.Items).To(gomega.HaveLen(1))
		}
		// Before the restart, the minimum of observed completions is not met
		// in this short history, but rates are measured.
		gomega.Eventually(modelHasRates, timeout, interval).Should(gomega.Succeed())

		ginkgo.By("restarting Kueue")
		gomega.Expect(cp.StopKueue()).To(gomega.Succeed())
		var err error
		kueueRuntime, err = cp.StartKueue(ctx, controlplane.WithRequestCounter(requests))
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Eventually(modelHasRates, timeout, interval).Should(gomega.Succeed())
	})
})
