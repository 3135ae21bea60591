// Package smoke proves the whole chain: the patched Kueue tree builds inside
// this module's workspace, and its controllers and scheduler admit a workload
// on a real kube-apiserver and etcd (envtest).
package smoke

import (
	"context"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	config "sigs.k8s.io/kueue/apis/config/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/constants"
	"sigs.k8s.io/kueue/pkg/controller/core"
	"sigs.k8s.io/kueue/pkg/controller/core/indexer"
	"sigs.k8s.io/kueue/pkg/scheduler"
	preemptexpectations "sigs.k8s.io/kueue/pkg/scheduler/preemption/expectations"
	"sigs.k8s.io/kueue/pkg/webhooks"
	"sigs.k8s.io/kueue/test/integration/framework"
	"sigs.k8s.io/kueue/test/util"
)

var (
	cfg       *rest.Config
	k8sClient client.Client
	ctx       context.Context
	fwk       *framework.Framework
)

func TestSmoke(t *testing.T) {
	util.RunSuite(t, "kueue-waittime Smoke Suite")
}

var _ = ginkgo.BeforeSuite(func() {
	fwk = &framework.Framework{WebhookPath: util.WebhookPath}
	cfg = fwk.Init()
	ctx, k8sClient = fwk.SetupClient(cfg)
	fwk.StartManager(ctx, cfg, managerAndSchedulerSetup)
})

var _ = ginkgo.AfterSuite(func() {
	fwk.Teardown()
})

func managerAndSchedulerSetup(ctx context.Context, mgr manager.Manager) {
	gomega.Expect(indexer.Setup(ctx, mgr.GetFieldIndexer())).To(gomega.Succeed())

	cCache := schdcache.New(mgr.GetClient())
	preemptionExpectations := preemptexpectations.New()
	queues := util.NewManagerForIntegrationTests(ctx, mgr.GetClient(), cCache,
		qcache.WithPreemptionExpectations(preemptionExpectations),
	)

	configuration := &config.Configuration{}
	mgr.GetScheme().Default(configuration)

	failedCtrl, err := core.SetupControllers(mgr, queues, cCache, configuration,
		core.SetupControllersOpts{PreemptionExpectations: preemptionExpectations})
	gomega.Expect(err).ToNot(gomega.HaveOccurred(), "controller", failedCtrl)

	failedWebhook, err := webhooks.Setup(mgr, nil)
	gomega.Expect(err).ToNot(gomega.HaveOccurred(), "webhook", failedWebhook)

	sched := scheduler.New(queues, cCache, mgr.GetClient(),
		mgr.GetEventRecorder(constants.AdmissionName),
		scheduler.WithPreemptionExpectations(preemptionExpectations),
	)
	gomega.Expect(sched.Start(ctx)).To(gomega.Succeed())
}
