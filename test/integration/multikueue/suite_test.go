// Package multikueue tests the MultiKueue wait-time dispatcher
// (kueue.x-k8s.io/multikueue-dispatcher-wait-time) on three control planes,
// as Kueue's own MultiKueue integration tests run them: a manager and two
// workers, each a real kube-apiserver and etcd with the patched Kueue in
// process. Each worker runs Kueue's scheduler with the wait time estimator
// and serves WaitTimeReview through its aggregation layer; the manager runs
// Kueue's MultiKueue controllers with the wait-time dispatcher, which asks
// the workers through the MultiKueueClusters' kubeconfigs. Jobs go through
// Kueue's batch/v1 Job integration on every cluster.
package multikueue

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/admissionchecks/multikueue"
	"sigs.k8s.io/kueue/pkg/features"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/controlplane"
)

const (
	timeout  = 90 * time.Second
	interval = 100 * time.Millisecond
	// dispatcherTimeout bounds each WaitTimeReview the dispatcher sends and
	// the age of the forecast in its answer: as long as a loaded machine
	// may take to answer one (a worker that does not answer fails at once:
	// see silence), so that no answering worker is taken as silent.
	dispatcherTimeout = 30 * time.Second
	// dispatcherRound is how long the dispatcher's nominations stand before
	// it asks again (5 minutes outside these tests).
	dispatcherRound = 8 * time.Second
)

var (
	ctx              context.Context
	manager          *controlplane.ControlPlane
	fast, slow       *controlplane.ControlPlane
	workerKubeconfig = map[string][]byte{}
)

func TestMultiKueue(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "MultiKueue Wait-Time Dispatcher Suite")
}

var _ = ginkgo.BeforeSuite(func() {
	ctx = context.Background()
	gomega.Expect(utilfeature.DefaultMutableFeatureGate.Set(fmt.Sprintf("%s=true", features.WaitTimeEstimation))).To(gomega.Succeed())
	opts := controlplane.Options{
		WaitTimeEstimation: &configapi.WaitTimeEstimation{MinServiceSamples: new(int32(2)), RefreshPeriod: &metav1.Duration{Duration: 200 * time.Millisecond}},
	}
	// The three control planes start at once; each Kueue after its own
	// kube-apiserver.
	var wg sync.WaitGroup
	start := func(cp **controlplane.ControlPlane, kueueOpts ...controlplane.KueueOption) {
		wg.Go(func() {
			defer ginkgo.GinkgoRecover()
			var err error
			o := opts
			if cp == &manager {
				// The manager's MultiKueue and dispatcher logs, shown when
				// a spec fails.
				o.Log = funcr.New(func(prefix, args string) { fmt.Fprintln(ginkgo.GinkgoWriter, prefix, args) }, funcr.Options{Verbosity: 3})
			}
			*cp, err = controlplane.Start(o)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			_, err = (*cp).StartKueue(ctx, kueueOpts...)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
		})
	}
	start(&manager, controlplane.WithMultiKueue(configapi.MultiKueueDispatcherModeWaitTime,
		multikueue.WithWaitTimeDispatcherTimeout(dispatcherTimeout),
		multikueue.WithWaitTimeDispatcherRound(dispatcherRound),
		multikueue.WithEventsBatchPeriod(100*time.Millisecond)))
	start(&fast, controlplane.WithBatchJobs())
	start(&slow, controlplane.WithBatchJobs())
	wg.Wait()
	for name, cp := range map[string]*controlplane.ControlPlane{"fast": fast, "slow": slow} {
		kubeconfig, err := os.ReadFile(cp.Kubeconfig)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		workerKubeconfig[name] = kubeconfig
	}
})

var _ = ginkgo.AfterSuite(func() {
	var wg sync.WaitGroup
	for _, cp := range []*controlplane.ControlPlane{manager, fast, slow} {
		if cp != nil {
			wg.Go(func() {
				defer ginkgo.GinkgoRecover()
				gomega.Expect(cp.Stop()).To(gomega.Succeed())
			})
		}
	}
	wg.Wait()
})
