// Package visibility tests wait time estimates end to end: the patched Kueue
// runs in process on a real kube-apiserver and etcd, and the tests read the
// visibility API the way users do, through the kube-apiserver's aggregation
// layer with an ordinary client.
package visibility

import (
	"context"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueueclientset "sigs.k8s.io/kueue/client-go/clientset/versioned"
	"sigs.k8s.io/kueue/pkg/features"
	"sigs.k8s.io/kueue/pkg/scheduler/waittime/estimator"

	"github.com/kueue-waittime/kueue-waittime/test/controlplane"
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
)

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
		EstimatorOptions: []estimator.Option{estimator.WithMinServiceSamples(2), estimator.WithRefreshPeriod(200 * time.Millisecond)},
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
