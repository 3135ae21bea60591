// Package visibility tests wait time estimates end to end: the patched Kueue
// runs in process on a real kube-apiserver and etcd, and the tests read the
// visibility API the way users do, through the kube-apiserver's aggregation
// layer with an ordinary client.
package visibility

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	kueueclientset "sigs.k8s.io/kueue/client-go/clientset/versioned"
	"sigs.k8s.io/kueue/pkg/features"
	"sigs.k8s.io/kueue/pkg/scheduler/waittime/estimator"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/controlplane"
)

var (
	ctx          context.Context
	cp           *controlplane.ControlPlane
	kueueRuntime *controlplane.Kueue
	k8sClient    client.Client
	visibility   kueueclientset.Interface
	// requests counts the API requests of the Kueue under test (its
	// manager's and its visibility server's), across restarts.
	requests = &controlplane.RequestCounter{}
	// ledger counts the admissions the estimator's prediction ledger
	// recorded.
	ledger = &ledgerReporter{scored: map[kueue.ClusterQueueReference]int{}, unscored: map[kueue.ClusterQueueReference]int{}}
)

// ledgerReporter is the estimator's metrics reporter in this suite: it
// counts, per ClusterQueue, the admissions the prediction ledger recorded,
// scored or not, so that a spec can tell when the ledger has seen the
// admissions it waits for (the published queue model follows a refresh
// later).
type ledgerReporter struct {
	mu       sync.Mutex
	scored   map[kueue.ClusterQueueReference]int
	unscored map[kueue.ClusterQueueReference]int
}

func (r *ledgerReporter) ReportScore(s estimator.Score) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scored[s.ClusterQueue]++
}

func (r *ledgerReporter) ReportUnscored(cq kueue.ClusterQueueReference, reason estimator.UnscoredReason) {
	if reason != estimator.AdmittedBeforeEstimate {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.unscored[cq]++
}

// admissions is how many admissions into cq the ledger recorded, and how
// many of them it scored.
func (r *ledgerReporter) admissions(cq kueue.ClusterQueueReference) (recorded, scored int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.scored[cq] + r.unscored[cq], r.scored[cq]
}

func (*ledgerReporter) ReportQueueModel(estimator.QueueModel)       {}
func (*ledgerReporter) ClearQueueModel(kueue.ClusterQueueReference) {}
func (*ledgerReporter) ReportRefresh(estimator.RefreshReport)       {}

func TestVisibility(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "Wait Time Estimation Visibility Suite")
}

var _ = ginkgo.BeforeSuite(func() {
	ctx = context.Background()
	gomega.Expect(utilfeatureSet(features.WaitTimeEstimation, true)).To(gomega.Succeed())
	// Beta and on by default in v0.19; set here so that dra_test.go does
	// not rest on that default.
	gomega.Expect(utilfeatureSet(features.KueueDRAIntegration, true)).To(gomega.Succeed())
	var err error
	cp, err = controlplane.Start(controlplane.Options{
		// Short histories are enough in these tests.
		WaitTimeEstimation: &configapi.WaitTimeEstimation{MinServiceSamples: new(int32(2)), RefreshPeriod: &metav1.Duration{Duration: 200 * time.Millisecond}},
		EstimatorOptions:   []estimator.Option{estimator.WithMetricsReporter(ledger)},
		// GPUs through DRA (dra_test.go): devices of the DeviceClass count
		// as the logical resource example.com/gpu.
		DeviceClassMappings: []configapi.DeviceClassMapping{{Name: gpu, DeviceClassNames: []corev1.ResourceName{gpuDeviceClass}}},
	})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	k8sClient = cp.Client
	kueueRuntime, err = cp.StartKueue(ctx, controlplane.WithRequestCounter(requests))
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	visibility, err = kueueclientset.NewForConfig(cp.Config)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
})

var _ = ginkgo.AfterSuite(func() {
	if cp != nil {
		gomega.Expect(cp.Stop()).To(gomega.Succeed())
	}
})
