package multikueue

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	visibilityapi "sigs.k8s.io/kueue/apis/visibility/v1beta2"
	kueueclientset "sigs.k8s.io/kueue/client-go/clientset/versioned"
	utiltesting "sigs.k8s.io/kueue/pkg/util/testing"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
	testingjob "sigs.k8s.io/kueue/pkg/util/testingjobs/job"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/controlplane"
)

// The namespace and the LocalQueue of the jobs, the same on every cluster
// as MultiKueue needs.
const (
	namespace = "team"
	queue     = "lq"
)

// workerQuota is each worker's ClusterQueue CPU quota: a 6-CPU pod fits only
// the slow worker's.
var workerQuota = map[string]string{"fast": "4", "slow": "8"}

// workerClient returns the administrator's client of a worker.
func workerClient(name string) client.Client {
	return map[string]*controlplane.ControlPlane{"fast": fast, "slow": slow}[name].Client
}

// workloadSightings records the names of the Workloads created in
// namespace on each worker, from a watch started before the jobs are
// submitted: MultiKueue copies a workload to every worker it is nominated
// to, so a name never seen on a worker is a workload never nominated there,
// even for a moment.
type workloadSightings struct {
	mu   sync.Mutex
	seen map[string][]string // worker -> workload names
	stop []func()
}

func watchWorkerWorkloads() *workloadSightings {
	ginkgo.GinkgoHelper()
	s := &workloadSightings{seen: map[string][]string{}}
	for _, name := range []string{"fast", "slow"} {
		cp := map[string]*controlplane.ControlPlane{"fast": fast, "slow": slow}[name]
		cs, err := kueueclientset.NewForConfig(cp.Config)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		w, err := cs.KueueV1beta2().Workloads(namespace).Watch(ctx, metav1.ListOptions{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		s.stop = append(s.stop, w.Stop)
		go func() {
			for ev := range w.ResultChan() {
				if wl, ok := ev.Object.(*kueue.Workload); ok && ev.Type == watch.Added {
					s.mu.Lock()
					s.seen[name] = append(s.seen[name], wl.Name)
					s.mu.Unlock()
				}
			}
		}()
	}
	return s
}

func (s *workloadSightings) sawOn(worker, workload string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.seen[worker], workload)
}

func (s *workloadSightings) close() {
	for _, stop := range s.stop {
		stop()
	}
}

// submit creates a Job of one pod of cpu on the manager and returns the
// name of the Workload Kueue creates for it there.
func submit(name, cpu string) string {
	ginkgo.GinkgoHelper()
	job := testingjob.MakeJob(name, namespace).Queue(queue).Request(corev1.ResourceCPU, cpu).Obj()
	gomega.Expect(manager.Client.Create(ctx, job)).To(gomega.Succeed())
	var wlName string
	gomega.Eventually(func(g gomega.Gomega) {
		var wls kueue.WorkloadList
		g.Expect(manager.Client.List(ctx, &wls, client.InNamespace(namespace))).To(gomega.Succeed())
		for _, wl := range wls.Items {
			if owner := metav1.GetControllerOf(&wl); owner != nil && owner.Kind == "Job" && owner.Name == name {
				wlName = wl.Name
			}
		}
		g.Expect(wlName).NotTo(gomega.BeEmpty())
	}, timeout, interval).Should(gomega.Succeed())
	return wlName
}

// nominations polls the manager's Workload until check passes, recording
// every distinct status.nominatedClusterNames and clusterName it saw.
func nominations(wlName string, check func(g gomega.Gomega, wl *kueue.Workload)) (seen [][]string) {
	ginkgo.GinkgoHelper()
	gomega.Eventually(func(g gomega.Gomega) {
		var wl kueue.Workload
		g.Expect(manager.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: wlName}, &wl)).To(gomega.Succeed())
		if n := wl.Status.NominatedClusterNames; len(n) > 0 && (len(seen) == 0 || !slices.Equal(seen[len(seen)-1], n)) {
			seen = append(seen, slices.Clone(n))
		}
		check(g, &wl)
	}, timeout, interval/5).Should(gomega.Succeed())
	return seen
}

// dispatched returns the manager's visibility record of the workload wlName
// in the team's LocalQueue (localqueues/dispatchedworkloads, through the
// manager's kube-apiserver), or nil when it lists none.
func dispatched(g gomega.Gomega, wlName string) *visibilityapi.DispatchedWorkload {
	cs, err := kueueclientset.NewForConfig(manager.Config)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	summary, err := cs.VisibilityV1beta2().LocalQueues(namespace).GetDispatchedWorkloadsSummary(ctx, queue, metav1.GetOptions{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	for i := range summary.Items {
		if summary.Items[i].Name == wlName {
			return &summary.Items[i]
		}
	}
	return nil
}

// ask sends a worker the WaitTimeReview of a job of one pod of cpu in the
// team's LocalQueue.
func ask(cp *controlplane.ControlPlane, cpu string) (*visibilityapi.WaitTimeReview, error) {
	cs, err := kueueclientset.NewForConfig(cp.Config)
	if err != nil {
		return nil, err
	}
	return cs.VisibilityV1beta2().WaitTimeReviews(namespace).Create(ctx, &visibilityapi.WaitTimeReview{
		Spec: visibilityapi.WaitTimeReviewSpec{
			LocalQueueName: queue,
			PodSets: []visibilityapi.WaitTimeReviewPodSet{{Name: "main", Count: 1,
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}},
		},
	}, metav1.CreateOptions{})
}

func askOne(cp *controlplane.ControlPlane, cpu string) error {
	_, err := ask(cp, cpu)
	return err
}

// forecastP50 asks a worker how long a job of one pod of cpu would wait in
// the team's LocalQueue and returns its median wait in milliseconds.
func forecastP50(g gomega.Gomega, cp *controlplane.ControlPlane, cpu string) int64 {
	review, err := ask(cp, cpu)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	est := review.Status.WaitTimeEstimate
	g.Expect(est).NotTo(gomega.BeNil())
	g.Expect(est.P50WaitMilliseconds).NotTo(gomega.BeNil(), "%+v", *est)
	return *est.P50WaitMilliseconds
}

// expectOnly fails unless every nomination seen is exactly want (MultiKueue
// clears the nominations once a worker admits the workload, so a poll may
// see none).
func expectOnly(seen [][]string, want ...string) {
	ginkgo.GinkgoHelper()
	for _, n := range seen {
		gomega.Expect(n).To(gomega.Equal(want))
	}
}

// silence unregisters a worker's visibility API group, so that the
// WaitTimeReviews sent to it fail: the worker does not answer. It returns a
// function that registers the group again and waits until the worker
// answers.
func silence(cp *controlplane.ControlPlane) (restore func()) {
	ginkgo.GinkgoHelper()
	var saved []*unstructured.Unstructured
	for _, version := range []string{"v1beta1", "v1beta2"} {
		svc := &unstructured.Unstructured{}
		svc.SetAPIVersion("apiregistration.k8s.io/v1")
		svc.SetKind("APIService")
		gomega.Expect(cp.Client.Get(ctx, client.ObjectKey{Name: version + ".visibility.kueue.x-k8s.io"}, svc)).To(gomega.Succeed())
		gomega.Expect(cp.Client.Delete(ctx, svc)).To(gomega.Succeed())
		saved = append(saved, svc)
	}
	gomega.Eventually(func() error { return askOne(cp, "1") }, timeout, interval).Should(gomega.HaveOccurred())
	return func() {
		ginkgo.GinkgoHelper()
		for _, svc := range saved {
			again := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": svc.GetAPIVersion(), "kind": svc.GetKind(),
				"metadata": map[string]any{"name": svc.GetName()},
				"spec":     svc.Object["spec"],
			}}
			gomega.Expect(cp.Client.Create(ctx, again)).To(gomega.Succeed())
		}
		gomega.Eventually(func(g gomega.Gomega) { forecastP50(g, cp, "1") }, timeout, interval).Should(gomega.Succeed())
	}
}

var _ = ginkgo.Describe("The wait-time dispatcher", ginkgo.Ordered, func() {
	var sightings *workloadSightings

	ginkgo.BeforeAll(func() {
		ginkgo.By("on each worker: a ClusterQueue and the team's LocalQueue; the fast worker's quota a quarter used, the slow worker's full with as many workloads pending")
		for _, name := range []string{"fast", "slow"} {
			c := workerClient(name)
			cq := utiltestingapi.MakeClusterQueue("cq").
				ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, workerQuota[name]).Obj()).Obj()
			for _, o := range []client.Object{
				utiltestingapi.MakeResourceFlavor("default").Obj(),
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
				cq,
				utiltestingapi.MakeLocalQueue(queue, namespace).ClusterQueue("cq").Obj(),
			} {
				gomega.Expect(c.Create(ctx, o)).To(gomega.Succeed())
			}
		}
		// One-CPU workloads of at most 10 minutes (nothing runs their pods,
		// so the admitted ones hold their quota): on the fast worker one,
		// admitted; on the slow worker 16, 8 admitted and 8 pending. The
		// estimators know no completion: their forecasts take the
		// workloads' maximum execution time as the mean service time (a
		// worker that knows nothing gives a wait only for a job that would
		// be at the head and fits its free quota: method Immediate).
		for name, load := range map[string]struct{ workloads, admitted int }{"fast": {1, 1}, "slow": {16, 8}} {
			c := workerClient(name)
			for i := range load.workloads {
				gomega.Expect(c.Create(ctx, utiltestingapi.MakeWorkload(fmt.Sprintf("load-%d", i), namespace).Queue(queue).
					Request(corev1.ResourceCPU, "1").MaximumExecutionTimeSeconds(600).Obj())).To(gomega.Succeed())
			}
			gomega.Eventually(func(g gomega.Gomega) {
				var wls kueue.WorkloadList
				g.Expect(c.List(ctx, &wls, client.InNamespace(namespace))).To(gomega.Succeed())
				admitted := 0
				for _, wl := range wls.Items {
					if apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) {
						admitted++
					}
				}
				g.Expect(admitted).To(gomega.Equal(load.admitted), name)
			}, timeout, interval).Should(gomega.Succeed())
		}

		ginkgo.By("the premise: asked about a one-CPU job, the fast worker forecasts a shorter median wait than the slow one")
		gomega.Eventually(func(g gomega.Gomega) {
			fastP50, slowP50 := forecastP50(g, fast, "1"), forecastP50(g, slow, "1")
			g.Expect(fastP50).To(gomega.BeNumerically("<", slowP50))
		}, timeout, interval).Should(gomega.Succeed())

		ginkgo.By("on the manager: a ClusterQueue with a MultiKueue admission check over both workers")
		for _, name := range []string{"fast", "slow"} {
			gomega.Expect(manager.Client.Create(ctx, utiltesting.MakeSecret(name+"-kubeconfig", controlplane.MultiKueueNamespace).
				Data(kueue.MultiKueueConfigSecretKey, workerKubeconfig[name]).Obj())).To(gomega.Succeed())
			gomega.Expect(manager.Client.Create(ctx, utiltestingapi.MakeMultiKueueCluster(name).
				KubeConfig(kueue.SecretLocationType, name+"-kubeconfig").Obj())).To(gomega.Succeed())
		}
		ac := utiltestingapi.MakeAdmissionCheck("multikueue").ControllerName(kueue.MultiKueueControllerName).
			Parameters(kueue.SchemeGroupVersion.Group, "MultiKueueConfig", "workers").Obj()
		for _, o := range []client.Object{
			utiltestingapi.MakeMultiKueueConfig("workers").Clusters("fast", "slow").Obj(),
			ac,
			utiltestingapi.MakeResourceFlavor("default").Obj(),
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
			utiltestingapi.MakeClusterQueue("cq").AdmissionChecks("multikueue").
				ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, "100").Obj()).Obj(),
			utiltestingapi.MakeLocalQueue(queue, namespace).ClusterQueue("cq").Obj(),
		} {
			gomega.Expect(manager.Client.Create(ctx, o)).To(gomega.Succeed())
		}
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(manager.Client.Get(ctx, client.ObjectKeyFromObject(ac), ac)).To(gomega.Succeed())
			g.Expect(apimeta.IsStatusConditionTrue(ac.Status.Conditions, kueue.AdmissionCheckActive)).To(gomega.BeTrue(), "%v", ac.Status.Conditions)
		}, timeout, interval).Should(gomega.Succeed())

		sightings = watchWorkerWorkloads()
		ginkgo.DeferCleanup(sightings.close)
	})

	ginkgo.It("nominates the worker with the shorter forecast wait, only that one, and the workload is admitted there", func() {
		wl := submit("short", "1")
		seen := nominations(wl, func(g gomega.Gomega, wl *kueue.Workload) {
			g.Expect(wl.Status.ClusterName).To(gomega.Equal(new("fast")), "status %+v", wl.Status)
		})
		expectOnly(seen, "fast")
		gomega.Eventually(func() bool { return sightings.sawOn("fast", wl) }, timeout, interval).Should(gomega.BeTrue())
		gomega.Expect(sightings.sawOn("slow", wl)).To(gomega.BeFalse(), "the workload was copied to the slow worker")

		ginkgo.By("admitted on a worker, the workload leaves the manager's dispatchedworkloads")
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(dispatched(g, wl)).To(gomega.BeNil())
		}, timeout, interval).Should(gomega.Succeed())
	})

	ginkgo.It("never nominates a worker where the workload is Unfeasible: a 6-CPU job goes to the slow worker, the only one it fits", func() {
		wl := submit("wide", "6")
		seen := nominations(wl, func(g gomega.Gomega, wl *kueue.Workload) {
			g.Expect(wl.Status.NominatedClusterNames).To(gomega.Equal([]string{"slow"}))
			// Pending behind the slow worker's queue.
			var remote kueue.Workload
			g.Expect(slow.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: wl.Name}, &remote)).To(gomega.Succeed())
		})
		expectOnly(seen, "slow")
		gomega.Expect(sightings.sawOn("fast", wl)).To(gomega.BeFalse(), "the workload was copied to the fast worker, where it is Unfeasible")

		ginkgo.By("the manager's visibility API shows the chosen worker and every worker's answer")
		gomega.Eventually(func(g gomega.Gomega) {
			d := dispatched(g, wl)
			g.Expect(d).NotTo(gomega.BeNil())
			g.Expect(d.NominatedClusterNames).To(gomega.Equal([]string{"slow"}))
			g.Expect(d.Basis).To(gomega.Equal("ExpectedWait"))
			g.Expect(d.Workers).To(gomega.HaveLen(2))
			answers := map[string]visibilityapi.DispatchWorkerAnswer{}
			for _, a := range d.Workers {
				answers[a.Name] = a
			}
			fastAnswer, slowAnswer := answers["fast"], answers["slow"]
			g.Expect(fastAnswer.Nominated).To(gomega.BeFalse())
			g.Expect(fastAnswer.WaitTimeEstimate).NotTo(gomega.BeNil(), "%+v", fastAnswer)
			g.Expect(fastAnswer.WaitTimeEstimate.Admissibility).To(gomega.Equal(visibilityapi.AdmissibilityUnfeasible))
			g.Expect(slowAnswer.Nominated).To(gomega.BeTrue())
			g.Expect(slowAnswer.WaitTimeEstimate).NotTo(gomega.BeNil(), "%+v", slowAnswer)
			g.Expect(slowAnswer.WaitTimeEstimate.Admissibility).To(gomega.Equal(visibilityapi.AdmissibilityQuotable))
			g.Expect(slowAnswer.AnsweredAt).NotTo(gomega.BeNil())
		}, timeout, interval).Should(gomega.Succeed())
	})

	ginkgo.It("falls back to Incremental's nominations for the workers that do not answer, after those that answer and never to an Unfeasible one", func() {
		ginkgo.By("the slow worker does not answer, the fast one answers Unfeasible for a 6-CPU job: the slow worker alone is nominated")
		restoreSlow := silence(slow)
		wl := submit("wide-slow-silent", "6")
		seen := nominations(wl, func(g gomega.Gomega, wl *kueue.Workload) {
			g.Expect(wl.Status.NominatedClusterNames).To(gomega.Equal([]string{"slow"}))
		})
		expectOnly(seen, "slow")
		gomega.Expect(sightings.sawOn("fast", wl)).To(gomega.BeFalse(), "the workload was copied to the fast worker, where it is Unfeasible")

		ginkgo.By("the fast worker does not answer, the slow one does: a one-CPU job goes to the slow worker, the one that answers")
		restoreSlow()
		restoreFast := silence(fast)
		wl = submit("fast-silent", "1")
		seen = nominations(wl, func(g gomega.Gomega, wl *kueue.Workload) {
			g.Expect(wl.Status.NominatedClusterNames).To(gomega.Equal([]string{"slow"}))
		})
		expectOnly(seen, "slow")
		gomega.Expect(sightings.sawOn("fast", wl)).To(gomega.BeFalse())

		ginkgo.By("neither worker answers: both are nominated, as the Incremental dispatcher's first round nominates up to three by name, and the fast one admits it")
		restoreSlow = silence(slow)
		wl = submit("none-answer", "1")
		seen = nominations(wl, func(g gomega.Gomega, wl *kueue.Workload) {
			g.Expect(wl.Status.ClusterName).To(gomega.Equal(new("fast")), "status %+v", wl.Status)
		})
		expectOnly(seen, "fast", "slow")
		// Copied to both: nominated to both.
		gomega.Eventually(func() bool { return sightings.sawOn("fast", wl) && sightings.sawOn("slow", wl) }, timeout, interval).Should(gomega.BeTrue())

		restoreFast()
		restoreSlow()
	})

	ginkgo.It("asks again after a round and adds the next fastest worker while the workload is not admitted", func() {
		// Two CPUs: Quotable on both workers, not free on either, the fast
		// worker's queue the shorter.
		//
		// The round is timed between polls that bracket both changes, so
		// that however late a loaded machine runs a poll, the time measured
		// is no shorter than the one between them: the fast worker was
		// nominated after the check of the poll before the last that saw
		// no nomination (the last one read the Workload at some moment
		// after that check), and the slow one added before the check of
		// the poll that saw it. (If no poll saw the Workload without a
		// nomination, the submission is the earliest it can have been
		// nominated.)
		earliest := time.Now()
		wl := submit("two-cpus", "2")
		var polled []time.Time // when each poll's check ran
		var nominatedAfter time.Time
		seen := nominations(wl, func(g gomega.Gomega, wl *kueue.Workload) {
			polled = append(polled, time.Now())
			if len(wl.Status.NominatedClusterNames) == 0 {
				nominatedAfter = earliest
				if n := len(polled); n >= 2 {
					nominatedAfter = polled[n-2]
				}
			}
			g.Expect(wl.Status.NominatedClusterNames).To(gomega.Equal([]string{"fast", "slow"}))
		})
		if nominatedAfter.IsZero() {
			nominatedAfter = earliest
		}
		gomega.Expect(seen).To(gomega.Equal([][]string{{"fast"}, {"fast", "slow"}}))
		gomega.Expect(polled[len(polled)-1].Sub(nominatedAfter)).To(gomega.BeNumerically(">=", dispatcherRound-time.Second),
			"the slow worker was added before the fast worker's round was over")
	})
})
