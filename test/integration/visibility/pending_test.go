package visibility

import (
	"fmt"
	"math"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	visibilityapi "sigs.k8s.io/kueue/apis/visibility/v1beta2"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload/finish"
)

const (
	timeout  = 60 * time.Second
	interval = 200 * time.Millisecond
)

func createNamespace(prefix string) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}
	gomega.Expect(k8sClient.Create(ctx, ns)).To(gomega.Succeed())
	ginkgo.DeferCleanup(func() {
		gomega.Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, ns))).To(gomega.Succeed())
	})
	return ns
}

func createAll(objs ...client.Object) {
	ginkgo.GinkgoHelper()
	for _, o := range objs {
		gomega.Expect(k8sClient.Create(ctx, o)).To(gomega.Succeed())
	}
}

var _ = ginkgo.Describe("Wait time estimates through the aggregation layer", func() {
	ginkgo.BeforeEach(func() {
		rf := utiltestingapi.MakeResourceFlavor("default").Obj()
		gomega.Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, rf))).To(gomega.Succeed())
	})

	ginkgo.It("partitions the paper's experiment: Quotable with ordered finite ETAs, and an Unfeasible 20-CPU workload with its reason", func() {
		ns := createNamespace("partition-")
		cq := utiltestingapi.MakeClusterQueue("cq-partition").
			ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").
				Resource(corev1.ResourceCPU, "2").Resource(corev1.ResourceMemory, "1Gi").Obj()).Obj()
		lq := utiltestingapi.MakeLocalQueue("lq", ns.Name).ClusterQueue(cq.Name).Obj()
		createAll(cq, lq)

		// Four running workloads fill the quota; each declares a maximum
		// execution time, which gives the a-priori service law before any
		// completion is observed.
		for i := range 7 {
			wl := utiltestingapi.MakeWorkload(fmt.Sprintf("small-%d", i), ns.Name).Queue(kueue.LocalQueueName(lq.Name)).
				Request(corev1.ResourceCPU, "500m").Request(corev1.ResourceMemory, "64Mi").
				MaximumExecutionTimeSeconds(600).Obj()
			createAll(wl)
		}
		createAll(utiltestingapi.MakeWorkload("huge", ns.Name).Queue(kueue.LocalQueueName(lq.Name)).
			Request(corev1.ResourceCPU, "20").MaximumExecutionTimeSeconds(600).Obj())

		var summary *visibilityapi.PendingWorkloadsSummary
		gomega.Eventually(func(g gomega.Gomega) {
			var err error
			summary, err = visibility.VisibilityV1beta2().ClusterQueues().GetPendingWorkloadsSummary(ctx, cq.Name, metav1.GetOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(summary.Items).To(gomega.HaveLen(4))
			for _, item := range summary.Items {
				g.Expect(item.WaitTimeEstimate).NotTo(gomega.BeNil(), "no estimate for %s", item.Name)
				if item.Name != "huge" {
					g.Expect(item.WaitTimeEstimate.ExpectedWaitMilliseconds).NotTo(gomega.BeNil(), "no wait for %s", item.Name)
				}
			}
			g.Expect(summary.QueueModel).NotTo(gomega.BeNil())
		}, timeout, interval).Should(gomega.Succeed())

		var last int64 = -1
		for _, item := range summary.Items {
			est := item.WaitTimeEstimate
			if item.Name == "huge" {
				gomega.Expect(est.Admissibility).To(gomega.Equal(visibilityapi.AdmissibilityUnfeasible))
				gomega.Expect(est.Reason).To(gomega.Equal("flavor default: cpu 20 > potential 2 (nominal 2, borrowable 0)"))
				gomega.Expect(est.ExpectedWaitMilliseconds).To(gomega.BeNil())
				gomega.Expect(est.Method).To(gomega.Equal(visibilityapi.WaitTimeEstimationMethodNone))
				continue
			}
			gomega.Expect(est.Admissibility).To(gomega.Equal(visibilityapi.AdmissibilityQuotable))
			gomega.Expect(est.Method).To(gomega.Equal(visibilityapi.WaitTimeEstimationMethodAPriori))
			gomega.Expect(*est.ExpectedWaitMilliseconds).To(gomega.BeNumerically(">", 0))
			gomega.Expect(*est.ExpectedWaitMilliseconds).To(gomega.BeNumerically(">=", last), "ETAs must not decrease with queue position")
			gomega.Expect(*est.P50WaitMilliseconds).To(gomega.BeNumerically("<=", *est.P90WaitMilliseconds))
			gomega.Expect(est.EstimatedAdmissionTime).NotTo(gomega.BeNil())
			last = *est.ExpectedWaitMilliseconds
		}
		gomega.Expect(summary.QueueModel.EffectiveServers).To(gomega.Equal(int32(4)))
		gomega.Expect(string(summary.QueueModel.BottleneckResource)).To(gomega.Equal("cpu"))
		gomega.Expect(summary.QueueModel.UnfeasiblePendingWorkloads).To(gomega.Equal(int32(1)))

		ginkgo.By("the classification rides on the QuotaReserved condition the scheduler already writes")
		gomega.Eventually(func(g gomega.Gomega) {
			var wl kueue.Workload
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: "huge"}, &wl)).To(gomega.Succeed())
			cond := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
			g.Expect(cond).NotTo(gomega.BeNil())
			g.Expect(cond.Message).To(gomega.HaveSuffix("Wait time estimation: the workload is Unfeasible: flavor default: cpu 20 > potential 2 (nominal 2, borrowable 0)"))
		}, timeout, interval).Should(gomega.Succeed())

		ginkgo.By("the LocalQueue endpoint serves the same estimates")
		lqSummary, err := visibility.VisibilityV1beta2().LocalQueues(ns.Name).GetPendingWorkloadsSummary(ctx, lq.Name, metav1.GetOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(lqSummary.Items).To(gomega.HaveLen(4))
		gomega.Expect(lqSummary.Items[3].WaitTimeEstimate).NotTo(gomega.BeNil())

		ginkgo.By("a workload admitted after its estimate was published is scored, and the queue model says how the estimates fared")
		// The pending list is live, the queue model the last refresh's: on
		// a slow machine the scheduler admits one of the first four only
		// after an estimate of it was published, and the summary may show
		// the queue model from before that score. Count from the ledger
		// once it has recorded all four admissions.
		var scoredBefore int
		gomega.Eventually(func(g gomega.Gomega) {
			recorded, scored := ledger.admissions(kueue.ClusterQueueReference(cq.Name))
			g.Expect(recorded).To(gomega.Equal(4), "the admissions of the four running workloads")
			scoredBefore = scored
		}, timeout, interval).Should(gomega.Succeed())
		var wls kueue.WorkloadList
		gomega.Expect(k8sClient.List(ctx, &wls, client.InNamespace(ns.Name))).To(gomega.Succeed())
		finished := 0
		for i := range wls.Items {
			wl := &wls.Items[i]
			if apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) && finished < 2 {
				gomega.Expect(finish.Finish(ctx, k8sClient, wl, "Succeeded", "finished by the test", clock.RealClock{})).To(gomega.Succeed())
				finished++
			}
		}
		gomega.Expect(finished).To(gomega.Equal(2))
		gomega.Eventually(func(g gomega.Gomega) {
			s, err := visibility.VisibilityV1beta2().ClusterQueues().GetPendingWorkloadsSummary(ctx, cq.Name, metav1.GetOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(s.QueueModel).NotTo(gomega.BeNil())
			g.Expect(s.QueueModel.Accuracy).NotTo(gomega.BeNil())
			g.Expect(s.QueueModel.Accuracy.ScoredWorkloads).To(gomega.Equal(int64(scoredBefore+2)), "the two workloads admitted into the freed quota")
			g.Expect(s.QueueModel.Accuracy.P90CoverageMilli).To(gomega.BeNumerically(">=", 0))
			g.Expect(s.QueueModel.Accuracy.P90CoverageMilli).To(gomega.BeNumerically("<=", 1000))
			// The calibration acts after 20 scored workloads of this
			// ClusterQueue, or, until then, of all ClusterQueues pooled,
			// which the suite's other specs (in random order) may reach:
			// the API carries the adjustment the estimator applies, and
			// none while it does not act.
			model, ok := kueueRuntime.Estimator.Results().Queue(kueue.ClusterQueueReference(cq.Name))
			g.Expect(ok).To(gomega.BeTrue())
			g.Expect(model.ScoredWorkloads).To(gomega.BeNumerically("<", 20), "too few of its own for its calibrators to act")
			if model.Calibrated {
				g.Expect(s.QueueModel.Accuracy.P90AdjustmentMilli).To(gomega.HaveValue(gomega.Equal(int64(math.Round(model.P90Adjustment*1000)))), "the pooled calibration's factor")
			} else {
				g.Expect(s.QueueModel.Accuracy.P90AdjustmentMilli).To(gomega.BeNil(), "no calibration acts before 20 scores")
			}
		}, timeout, interval).Should(gomega.Succeed())
	})

	ginkgo.It("turns a workload within nominal plus borrowable Unfeasible when the borrowing limit drops to zero, without a restart", func() {
		ns := createNamespace("borrowing-")
		lender := utiltestingapi.MakeClusterQueue("cq-lender").Cohort("borrowing").
			ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, "4").Obj()).Obj()
		borrower := utiltestingapi.MakeClusterQueue("cq-borrower").Cohort("borrowing").
			ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, "2").Obj()).Obj()
		lq := utiltestingapi.MakeLocalQueue("lq", ns.Name).ClusterQueue(borrower.Name).Obj()
		createAll(lender, borrower, lq)
		// The lender is fully used, so the 5-CPU workload waits; it is
		// Quotable: 5 <= 2 nominal + 4 borrowable.
		lendq := utiltestingapi.MakeLocalQueue("lend", ns.Name).ClusterQueue(lender.Name).Obj()
		createAll(lendq, utiltestingapi.MakeWorkload("lender-full", ns.Name).Queue("lend").Request(corev1.ResourceCPU, "4").Obj())
		gomega.Eventually(func(g gomega.Gomega) {
			var wl kueue.Workload
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: "lender-full"}, &wl)).To(gomega.Succeed())
			g.Expect(apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved)).To(gomega.BeTrue())
		}, timeout, interval).Should(gomega.Succeed())
		createAll(utiltestingapi.MakeWorkload("five", ns.Name).Queue(kueue.LocalQueueName(lq.Name)).Request(corev1.ResourceCPU, "5").Obj())

		admissibility := func(g gomega.Gomega) (string, string) {
			s, err := visibility.VisibilityV1beta2().LocalQueues(ns.Name).GetPendingWorkloadsSummary(ctx, lq.Name, metav1.GetOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(s.Items).To(gomega.HaveLen(1))
			g.Expect(s.Items[0].WaitTimeEstimate).NotTo(gomega.BeNil())
			return string(s.Items[0].WaitTimeEstimate.Admissibility), s.Items[0].WaitTimeEstimate.Reason
		}
		gomega.Eventually(func(g gomega.Gomega) {
			adm, _ := admissibility(g)
			g.Expect(adm).To(gomega.Equal("Quotable"))
		}, timeout, interval).Should(gomega.Succeed())

		ginkgo.By("setting the borrowing limit to zero")
		gomega.Eventually(func(g gomega.Gomega) {
			var cq kueue.ClusterQueue
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(borrower), &cq)).To(gomega.Succeed())
			zero := resourceQuantity("0")
			cq.Spec.ResourceGroups[0].Flavors[0].Resources[0].BorrowingLimit = &zero
			g.Expect(k8sClient.Update(ctx, &cq)).To(gomega.Succeed())
		}, timeout, interval).Should(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			adm, reason := admissibility(g)
			g.Expect(adm).To(gomega.Equal("Unfeasible"))
			g.Expect(reason).To(gomega.Equal("flavor default: cpu 5 > potential 2 (nominal 2, borrowable 0)"))
		}, timeout, interval).Should(gomega.Succeed())
	})
})
