package visibility

import (
	"fmt"
	"net/http"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	visibilityv1beta1 "sigs.k8s.io/kueue/apis/visibility/v1beta1"
	visibilityapi "sigs.k8s.io/kueue/apis/visibility/v1beta2"
	kueueclientset "sigs.k8s.io/kueue/client-go/clientset/versioned"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
)

// review asks about one pod of 500m CPU and 64Mi with a maximum execution
// time of 600 s (the shape of the pending workloads below).
func review(lq string, cpu string, priority *int32) *visibilityapi.WaitTimeReview {
	return &visibilityapi.WaitTimeReview{
		Spec: visibilityapi.WaitTimeReviewSpec{
			LocalQueueName: kueue.LocalQueueName(lq),
			PodSets: []visibilityapi.WaitTimeReviewPodSet{{
				Name: "main", Count: 1,
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("64Mi")},
			}},
			Priority:                    priority,
			MaximumExecutionTimeSeconds: ptr.To[int32](600),
		},
	}
}

var _ = ginkgo.Describe("What-if forecasts (WaitTimeReview)", func() {
	var (
		busy, ask *corev1.Namespace
		cq        *kueue.ClusterQueue
	)
	// A StrictFIFO ClusterQueue of 2 CPUs: seven workloads of 500m in one
	// namespace, four admitted and three pending; the reviews are asked in
	// another namespace, whose LocalQueue points to the same ClusterQueue
	// and holds no workload.
	ginkgo.BeforeEach(func() {
		rf := utiltestingapi.MakeResourceFlavor("default").Obj()
		gomega.Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, rf))).To(gomega.Succeed())
		busy = createNamespace("whatif-busy-")
		ask = createNamespace("whatif-ask-")
		cq = utiltestingapi.MakeClusterQueue("cq-whatif-" + ask.Name[len(ask.Name)-5:]).QueueingStrategy(kueue.StrictFIFO).
			ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").
				Resource(corev1.ResourceCPU, "2").Resource(corev1.ResourceMemory, "1Gi").Obj()).Obj()
		createAll(cq,
			utiltestingapi.MakeLocalQueue("lq", busy.Name).ClusterQueue(cq.Name).Obj(),
			utiltestingapi.MakeLocalQueue("lq", ask.Name).ClusterQueue(cq.Name).Obj())
		// envtest runs no namespace controller: delete the workloads, so
		// that the specs after these do not share the scheduler and the
		// estimator with them.
		ginkgo.DeferCleanup(func() {
			gomega.Expect(k8sClient.DeleteAllOf(ctx, &kueue.Workload{}, client.InNamespace(busy.Name))).To(gomega.Succeed())
			gomega.Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, cq))).To(gomega.Succeed())
		})
		for i := range 7 {
			createAll(utiltestingapi.MakeWorkload(fmt.Sprintf("small-%d", i), busy.Name).Queue("lq").
				Request(corev1.ResourceCPU, "500m").Request(corev1.ResourceMemory, "64Mi").
				MaximumExecutionTimeSeconds(600).Obj())
		}
		gomega.Eventually(func(g gomega.Gomega) {
			s, err := visibility.VisibilityV1beta2().ClusterQueues().GetPendingWorkloadsSummary(ctx, cq.Name, metav1.GetOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(s.Items).To(gomega.HaveLen(3))
			for _, item := range s.Items {
				g.Expect(item.WaitTimeEstimate).NotTo(gomega.BeNil())
				g.Expect(item.WaitTimeEstimate.ExpectedWaitMilliseconds).NotTo(gomega.BeNil())
			}
		}, timeout, interval).Should(gomega.Succeed())
	})

	ginkgo.It("answers as the published estimates do: behind the last pending workload of its priority and waiting at least as long, at the head with a higher priority, Unfeasible with the scheduler's reason", func() {
		ginkgo.By("a review of the pending workloads' shape and priority, compared with the same refresh's published estimates")
		gomega.Eventually(func(g gomega.Gomega) {
			got, err := visibility.VisibilityV1beta2().WaitTimeReviews(ask.Name).Create(ctx, review("lq", "500m", nil), metav1.CreateOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			s, err := visibility.VisibilityV1beta2().ClusterQueues().GetPendingWorkloadsSummary(ctx, cq.Name, metav1.GetOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(s.Items).To(gomega.HaveLen(3))
			last := s.Items[2].WaitTimeEstimate
			st := got.Status
			g.Expect(st.WaitTimeEstimate).NotTo(gomega.BeNil())
			// The same refresh: a refresh between the two requests moves
			// both, and the comparison is retried.
			g.Expect(st.WaitTimeEstimate.EstimatedAt.Equal(last.EstimatedAt)).To(gomega.BeTrue(),
				"the review (%v) and the summary (%v) come from different refreshes", st.WaitTimeEstimate.EstimatedAt, last.EstimatedAt)

			g.Expect(st.ClusterQueue).To(gomega.Equal(kueue.ClusterQueueReference(cq.Name)))
			g.Expect(st.Priority).To(gomega.Equal(int32(0)))
			g.Expect(st.PositionInClusterQueue).To(gomega.Equal(int32(3)))
			g.Expect(st.EffectiveServers).To(gomega.Equal(ptr.To[int32](4)))
			g.Expect(st.BottleneckFlavor).To(gomega.Equal(kueue.ResourceFlavorReference("default")))
			g.Expect(st.BottleneckResource).To(gomega.Equal(corev1.ResourceCPU))
			est := st.WaitTimeEstimate
			g.Expect(est.Admissibility).To(gomega.Equal(visibilityapi.AdmissibilityQuotable))
			g.Expect(est.Method).To(gomega.Equal(last.Method))
			g.Expect(est.ExpectedWaitMilliseconds).NotTo(gomega.BeNil())
			g.Expect(*est.ExpectedWaitMilliseconds).To(gomega.BeNumerically(">=", *last.ExpectedWaitMilliseconds))
			g.Expect(*est.P50WaitMilliseconds).To(gomega.BeNumerically(">=", *last.P50WaitMilliseconds))
			g.Expect(*est.P90WaitMilliseconds).To(gomega.BeNumerically(">=", *last.P90WaitMilliseconds))
			g.Expect(*est.P50WaitMilliseconds).To(gomega.BeNumerically("<=", *est.P90WaitMilliseconds))
			g.Expect(est.EstimatedAdmissionTime.Sub(est.EstimatedAt.Time)).To(
				gomega.BeNumerically("~", time.Duration(*est.ExpectedWaitMilliseconds)*time.Millisecond, time.Millisecond))
		}, timeout, interval).Should(gomega.Succeed())

		ginkgo.By("a higher priority goes to the head")
		got, err := visibility.VisibilityV1beta2().WaitTimeReviews(ask.Name).Create(ctx, review("lq", "500m", ptr.To[int32](100)), metav1.CreateOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(got.Status.PositionInClusterQueue).To(gomega.Equal(int32(0)))
		gomega.Expect(got.Status.Priority).To(gomega.Equal(int32(100)))

		ginkgo.By("20 CPUs are Unfeasible, with the reason the pending workloads get")
		got, err = visibility.VisibilityV1beta2().WaitTimeReviews(ask.Name).Create(ctx, review("lq", "20", nil), metav1.CreateOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(got.Status.WaitTimeEstimate).NotTo(gomega.BeNil())
		gomega.Expect(got.Status.WaitTimeEstimate.Admissibility).To(gomega.Equal(visibilityapi.AdmissibilityUnfeasible))
		gomega.Expect(got.Status.WaitTimeEstimate.Reason).To(gomega.Equal("flavor default: cpu 20 > potential 2 (nominal 2, borrowable 0)"))
		gomega.Expect(got.Status.WaitTimeEstimate.ExpectedWaitMilliseconds).To(gomega.BeNil())
		gomega.Expect(got.Status.WaitTimeEstimate.Method).To(gomega.Equal(visibilityapi.WaitTimeEstimationMethodNone))

		ginkgo.By("v1beta1 serves the same resource")
		old, err := visibility.VisibilityV1beta1().WaitTimeReviews(ask.Name).Create(ctx, &visibilityv1beta1.WaitTimeReview{
			Spec: visibilityv1beta1.WaitTimeReviewSpec{
				LocalQueueName: "lq",
				PodSets: []visibilityv1beta1.WaitTimeReviewPodSet{{Name: "main", Count: 1,
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}},
			},
		}, metav1.CreateOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(string(old.Status.ClusterQueue)).To(gomega.Equal(cq.Name))
		gomega.Expect(old.Status.PositionInClusterQueue).To(gomega.Equal(int32(3)))
		gomega.Expect(old.Status.WaitTimeEstimate).NotTo(gomega.BeNil())
		gomega.Expect(string(old.Status.WaitTimeEstimate.Admissibility)).To(gomega.Equal("Quotable"))
	})

	ginkgo.It("refuses a bad spec with 422 and the fields at fault", func() {
		cases := map[string]struct {
			review *visibilityapi.WaitTimeReview
			field  string
		}{
			"a negative request":    {review: review("lq", "-1", nil), field: "spec.podSets[0].requests[cpu]"},
			"no LocalQueue":         {review: review("", "1", nil), field: "spec.localQueueName"},
			"an unknown LocalQueue": {review: review("nope", "1", nil), field: "spec.localQueueName"},
			"no pod set": {review: func() *visibilityapi.WaitTimeReview {
				r := review("lq", "1", nil)
				r.Spec.PodSets = nil
				return r
			}(), field: "spec.podSets"},
			"a negative count": {review: func() *visibilityapi.WaitTimeReview {
				r := review("lq", "1", nil)
				r.Spec.PodSets[0].Count = -1
				return r
			}(), field: "spec.podSets[0].count"},
		}
		for name, tc := range cases {
			_, err := visibility.VisibilityV1beta2().WaitTimeReviews(ask.Name).Create(ctx, tc.review, metav1.CreateOptions{})
			gomega.Expect(apierrors.IsInvalid(err)).To(gomega.BeTrue(), "%s: got %v, want 422 Invalid", name, err)
			var status apierrors.APIStatus
			gomega.Expect(err).To(gomega.BeAssignableToTypeOf(&apierrors.StatusError{}))
			status = err.(*apierrors.StatusError)
			gomega.Expect(status.Status().Code).To(gomega.Equal(int32(http.StatusUnprocessableEntity)), name)
			gomega.Expect(status.Status().Details).NotTo(gomega.BeNil(), name)
			var fields []string
			for _, c := range status.Status().Details.Causes {
				fields = append(fields, c.Field)
			}
			gomega.Expect(fields).To(gomega.ContainElement(tc.field), "%s: causes %v", name, status.Status().Details.Causes)
		}
	})

	ginkgo.It("needs create on waittimereviews in the namespace: 403 without it", func() {
		bobCfg, err := cp.UserConfig("bob")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		bob, err := kueueclientset.NewForConfig(bobCfg)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		_, err = bob.VisibilityV1beta2().WaitTimeReviews(ask.Name).Create(ctx, review("lq", "500m", nil), metav1.CreateOptions{})
		gomega.Expect(apierrors.IsForbidden(err)).To(gomega.BeTrue(), "without a role: %v", err)

		createAll(
			&rbacv1.Role{
				ObjectMeta: metav1.ObjectMeta{Name: "wait-time-reviewer", Namespace: ask.Name},
				Rules: []rbacv1.PolicyRule{{
					APIGroups: []string{"visibility.kueue.x-k8s.io"},
					Resources: []string{"waittimereviews"},
					Verbs:     []string{"create"},
				}},
			},
			&rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "bob-wait-time-reviewer", Namespace: ask.Name},
				RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "wait-time-reviewer"},
				Subjects:   []rbacv1.Subject{{Kind: "User", Name: "bob", APIGroup: "rbac.authorization.k8s.io"}},
			},
		)
		gomega.Eventually(func(g gomega.Gomega) {
			got, err := bob.VisibilityV1beta2().WaitTimeReviews(ask.Name).Create(ctx, review("lq", "500m", nil), metav1.CreateOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(got.Status.WaitTimeEstimate).NotTo(gomega.BeNil())
		}, timeout, interval).Should(gomega.Succeed())
		_, err = bob.VisibilityV1beta2().WaitTimeReviews(busy.Name).Create(ctx, review("lq", "500m", nil), metav1.CreateOptions{})
		gomega.Expect(apierrors.IsForbidden(err)).To(gomega.BeTrue(), "another namespace: %v", err)
	})

	ginkgo.It("stores nothing and makes no API request of its own", func() {
		// The manager writes the ClusterQueue's and the LocalQueues' status
		// as the admissions settle (quota reserved, then admitted), on its
		// own schedule: the reviews start once those statuses show the
		// settled queue (four admitted, three pending; nothing in the
		// reviews' LocalQueue) and the writes have then stopped for
		// quietPeriod, so that what they count is the reviews' own.
		matching := func() map[string]int {
			return requests.CountsMatching("/namespaces/"+ask.Name+"/", "/clusterqueues/"+cq.Name)
		}
		const quietPeriod = 2 * time.Second
		var before map[string]int
		gomega.Eventually(func(g gomega.Gomega) {
			var got kueue.ClusterQueue
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(cq), &got)).To(gomega.Succeed())
			g.Expect([]int32{got.Status.ReservingWorkloads, got.Status.AdmittedWorkloads, got.Status.PendingWorkloads}).To(gomega.Equal([]int32{4, 4, 3}),
				"the ClusterQueue's reserving, admitted and pending workloads")
			var lq kueue.LocalQueue
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ask.Name, Name: "lq"}, &lq)).To(gomega.Succeed())
			g.Expect(apimeta.IsStatusConditionTrue(lq.Status.Conditions, kueue.LocalQueueActive)).To(gomega.BeTrue(), "the reviews' LocalQueue: %v", lq.Status.Conditions)
			first := matching()
			time.Sleep(quietPeriod)
			before = matching()
			g.Expect(before).To(gomega.Equal(first), "the manager still writes the ClusterQueue's or the LocalQueues' status")
		}, timeout, interval).Should(gomega.Succeed())
		gomega.Expect(before).NotTo(gomega.BeEmpty(), "the counter saw none of the namespace's and ClusterQueue's requests (their status writes): the check would prove nothing")
		for range 20 {
			_, err := visibility.VisibilityV1beta2().WaitTimeReviews(ask.Name).Create(ctx, review("lq", "500m", nil), metav1.CreateOptions{})
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
		}
		after := matching()
		gomega.Expect(after).To(gomega.Equal(before), "the manager's and the visibility server's requests about the namespace and the ClusterQueue")

		var workloads kueue.WorkloadList
		gomega.Expect(k8sClient.List(ctx, &workloads, client.InNamespace(ask.Name))).To(gomega.Succeed())
		gomega.Expect(workloads.Items).To(gomega.BeEmpty())
		// Nothing to read back: the resource serves create only.
		err := visibility.VisibilityV1beta2().RESTClient().Get().
			Namespace(ask.Name).Resource("waittimereviews").Do(ctx).Error()
		gomega.Expect(apierrors.IsMethodNotSupported(err)).To(gomega.BeTrue(), "GET waittimereviews: %v", err)
	})
})

var _ = ginkgo.Describe("What-if forecasts before any service time is known", func() {
	ginkgo.It("answers Immediate at the head of an idle ClusterQueue while the job fits its free quota, and no wait once it does not", func() {
		rf := utiltestingapi.MakeResourceFlavor("default").Obj()
		gomega.Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, rf))).To(gomega.Succeed())
		ns := createNamespace("whatif-idle-")
		cq := utiltestingapi.MakeClusterQueue("cq-idle-" + ns.Name[len(ns.Name)-5:]).
			ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, "2").Resource(corev1.ResourceMemory, "1Gi").Obj()).Obj()
		createAll(cq, utiltestingapi.MakeLocalQueue("lq", ns.Name).ClusterQueue(cq.Name).Obj())
		ginkgo.DeferCleanup(func() {
			gomega.Expect(k8sClient.DeleteAllOf(ctx, &kueue.Workload{}, client.InNamespace(ns.Name))).To(gomega.Succeed())
			gomega.Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, cq))).To(gomega.Succeed())
		})
		// No workload has finished, none gives a maximum execution time and
		// the suite configures no prior: nothing is known of service times.
		oneCPU := func() *visibilityapi.WaitTimeReview {
			r := review("lq", "1", nil)
			r.Spec.MaximumExecutionTimeSeconds = nil
			return r
		}

		ginkgo.By("one CPU of two free: Immediate, with the time to admission")
		gomega.Eventually(func(g gomega.Gomega) {
			got, err := visibility.VisibilityV1beta2().WaitTimeReviews(ns.Name).Create(ctx, oneCPU(), metav1.CreateOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			est := got.Status.WaitTimeEstimate
			g.Expect(est).NotTo(gomega.BeNil())
			g.Expect(got.Status.PositionInClusterQueue).To(gomega.Equal(int32(0)))
			g.Expect(est.Method).To(gomega.Equal(visibilityapi.WaitTimeEstimationMethodImmediate), "status %+v, estimate %+v", got.Status, *est)
			g.Expect(est.P50WaitMilliseconds).NotTo(gomega.BeNil())
			g.Expect(est.P90WaitMilliseconds).NotTo(gomega.BeNil())
			g.Expect(*est.P50WaitMilliseconds).To(gomega.BeNumerically("<=", *est.P90WaitMilliseconds))
			// A cycle and an admission latency, not a service time.
			g.Expect(*est.P90WaitMilliseconds).To(gomega.BeNumerically("<", 10_000))
		}, timeout, interval).Should(gomega.Succeed())

		ginkgo.By("two one-CPU workloads admitted (nothing runs them, so they hold the quota): no wait")
		for i := range 2 {
			createAll(utiltestingapi.MakeWorkload(fmt.Sprintf("hold-%d", i), ns.Name).Queue("lq").
				Request(corev1.ResourceCPU, "1").Request(corev1.ResourceMemory, "64Mi").Obj())
		}
		gomega.Eventually(func(g gomega.Gomega) {
			got, err := visibility.VisibilityV1beta2().WaitTimeReviews(ns.Name).Create(ctx, oneCPU(), metav1.CreateOptions{})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			est := got.Status.WaitTimeEstimate
			g.Expect(est).NotTo(gomega.BeNil())
			g.Expect(est.Admissibility).To(gomega.Equal(visibilityapi.AdmissibilityQuotable))
			g.Expect(est.Method).To(gomega.Equal(visibilityapi.WaitTimeEstimationMethodNone))
			g.Expect(est.P50WaitMilliseconds).To(gomega.BeNil())
		}, timeout, interval).Should(gomega.Succeed())
	})
})
