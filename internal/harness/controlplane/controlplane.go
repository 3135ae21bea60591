package controlplane

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueuev1beta1 "sigs.k8s.io/kueue/apis/kueue/v1beta1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	visibilityv1beta2 "sigs.k8s.io/kueue/apis/visibility/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	kueueconfig "sigs.k8s.io/kueue/pkg/config"
	"sigs.k8s.io/kueue/pkg/constants"
	"sigs.k8s.io/kueue/pkg/controller/admissionchecks/multikueue"
	"sigs.k8s.io/kueue/pkg/controller/core"
	"sigs.k8s.io/kueue/pkg/controller/core/indexer"
	"sigs.k8s.io/kueue/pkg/dra"
	"sigs.k8s.io/kueue/pkg/features"
	kueuemetrics "sigs.k8s.io/kueue/pkg/metrics"
	"sigs.k8s.io/kueue/pkg/resources"
	"sigs.k8s.io/kueue/pkg/scheduler"
	preemptexpectations "sigs.k8s.io/kueue/pkg/scheduler/preemption/expectations"
	"sigs.k8s.io/kueue/pkg/scheduler/waittime/estimator"
	"sigs.k8s.io/kueue/pkg/scheduler/waittimeconfig"
	utildra "sigs.k8s.io/kueue/pkg/util/dra"
	"sigs.k8s.io/kueue/pkg/visibility"
	"sigs.k8s.io/kueue/pkg/webhooks"
)

// Options configure a [ControlPlane].
type Options struct {
	// ProjectDir is the patched Kueue tree (its CRDs and webhook manifests).
	// Default: $PROJECT_DIR, else _output/kueue above the working directory.
	ProjectDir string
	// AssetsDir holds kube-apiserver and etcd. Default: $KUBEBUILDER_ASSETS.
	AssetsDir string
	// WaitTimeEstimation is the Configuration's waitTimeEstimation section
	// (nil: absent, every field defaulted). The estimator is configured
	// from the Configuration as the manager's is, by
	// waittimeconfig.EstimatorOptions, when the WaitTimeEstimation gate is
	// enabled.
	WaitTimeEstimation *configapi.WaitTimeEstimation
	// EstimatorOptions are passed to estimator.New after those the
	// Configuration maps to: what a Configuration does not hold, such as a
	// metrics reporter or an a-priori mean service time.
	EstimatorOptions []estimator.Option
	// RequeuingBatchPeriod is the inadmissible requeuer's batch period
	// (Kueue's default is 1s; its integration tests use 100ms).
	RequeuingBatchPeriod time.Duration
	// DeviceClassMappings go into the Configuration's
	// resources.deviceClassMappings: with the KueueDRAIntegration gate on,
	// Kueue counts the devices a workload's ResourceClaimTemplates request
	// from a mapped DeviceClass as the mapping's logical resource, which
	// ClusterQueues give quota on.
	DeviceClassMappings []configapi.DeviceClassMapping
	// AdmissionFairSharing is the Configuration's admissionFairSharing
	// (nil: off), given to the queue manager, the scheduler cache, the
	// scheduler and the controllers as cmd/kueue/main.go gives it, and to
	// the estimator through the Configuration.
	AdmissionFairSharing *configapi.AdmissionFairSharing
	// ReplicaEstimatorOptions, when not nil, start a second estimator as a
	// replica that does not schedule runs one: fed by the same informers and
	// cache, never told of cycles or admissions by a scheduler, configured
	// from the same Configuration and then by these options. It is
	// Kueue.Replica, for comparing what each replica publishes.
	ReplicaEstimatorOptions []estimator.Option
	// MetricsBindAddress is where the manager serves its metrics over plain
	// HTTP (host:port), with Kueue's metrics registered as cmd/kueue/main.go
	// registers them (the estimator's among them when the WaitTimeEstimation
	// gate is on). Empty: no metrics server.
	MetricsBindAddress string
	// Log is the logger of the manager.
	Log logr.Logger
	// WithoutKueue starts only kube-apiserver and etcd, with the
	// aggregation layer configured: no Kueue CRDs and no webhook
	// configurations, for a cluster that deploys Kueue from its manifests
	// (internal/harness/cluster). ProjectDir is not needed then, and StartKueue fails.
	WithoutKueue bool
}

// ControlPlane is a running kube-apiserver and etcd with Kueue's CRDs.
type ControlPlane struct {
	// Config is an administrator's REST config.
	Config *rest.Config
	// Client is an administrator's client with Kueue's types.
	Client client.Client
	// Scheme holds the core and Kueue types.
	Scheme *runtime.Scheme
	// Kubeconfig is the path of an administrator's kubeconfig file.
	Kubeconfig string
	// Dir is a private directory removed by Stop.
	Dir string

	opts  Options
	env   *envtest.Environment
	certs frontProxyCerts
	kueue *Kueue
}

// Kueue is a running in-process Kueue manager.
type Kueue struct {
	Queues    *qcache.Manager
	Cache     *schdcache.Cache
	Estimator *estimator.Estimator
	// Replica is the estimator of Options.ReplicaEstimatorOptions, if any.
	Replica *estimator.Estimator
	// VisibilityPort is where the visibility server listens (0 until
	// ServeVisibility).
	VisibilityPort int
	// Dispatches is what the wait-time MultiKueue dispatcher records of its
	// rounds, served as localqueues/dispatchedworkloads: set on a manager
	// of WithMultiKueue with that dispatcher and the gate on, as
	// cmd/kueue/main.go sets it.
	Dispatches *multikueue.WaitTimeDispatches
	cancel     context.CancelFunc
	done       chan error
	proxy      *countingProxy // the visibility server's, when requests are counted
}

// Start runs kube-apiserver and etcd, configured as an aggregating front
// proxy, and installs Kueue's CRDs and webhook configuration.
func Start(opts Options) (*ControlPlane, error) {
	if opts.ProjectDir == "" {
		opts.ProjectDir = os.Getenv("PROJECT_DIR")
	}
	if opts.ProjectDir == "" && !opts.WithoutKueue {
		return nil, errors.New("controlplane: no patched Kueue tree: set PROJECT_DIR (make patch creates _output/kueue)")
	}
	if opts.AssetsDir == "" {
		opts.AssetsDir = os.Getenv("KUBEBUILDER_ASSETS")
	}
	if opts.AssetsDir == "" {
		return nil, errors.New("controlplane: no control-plane binaries: set KUBEBUILDER_ASSETS (make envtest builds them into bin/k8s/)")
	}
	if opts.RequeuingBatchPeriod == 0 {
		opts.RequeuingBatchPeriod = 100 * time.Millisecond
	}
	if opts.Log.GetSink() == nil {
		opts.Log = logr.Discard()
	}
	dir, err := os.MkdirTemp("", "kueue-waittime-controlplane-")
	if err != nil {
		return nil, err
	}
	certs, err := writeFrontProxyCerts(dir)
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, kueue.AddToScheme, kueuev1beta1.AddToScheme, configapi.AddToScheme, visibilityv1beta2.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, errors.Join(err, os.RemoveAll(dir))
		}
	}
	env := &envtest.Environment{
		Scheme:                  scheme,
		BinaryAssetsDirectory:   opts.AssetsDir,
		ControlPlaneStopTimeout: 90 * time.Second,
	}
	if !opts.WithoutKueue {
		env.CRDDirectoryPaths = []string{filepath.Join(opts.ProjectDir, "config", "components", "crd", "_output")}
		env.ErrorIfCRDPathMissing = true
		env.WebhookInstallOptions = envtest.WebhookInstallOptions{
			Paths: []string{filepath.Join(opts.ProjectDir, "config", "components", "webhook")},
		}
	}
	// A certificate directory of our own, rather than envtest's temporary
	// one, keeps the serving certificate and the ServiceAccount signing key
	// across RestartAPIServer: clients and issued tokens stay valid.
	apiServer := env.ControlPlane.GetAPIServer()
	apiServer.CertDir = filepath.Join(dir, "kube-apiserver")
	if err := os.MkdirAll(apiServer.CertDir, 0o700); err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	args := apiServer.Configure()
	args.Set("requestheader-client-ca-file", certs.caFile)
	args.Set("requestheader-allowed-names", frontProxyClientName)
	args.Set("requestheader-username-headers", "X-Remote-User")
	args.Set("requestheader-group-headers", "X-Remote-Group")
	args.Set("requestheader-extra-headers-prefix", "X-Remote-Extra-")
	args.Set("proxy-client-cert-file", certs.clientCertFile)
	args.Set("proxy-client-key-file", certs.clientKeyFile)
	cfg, err := env.Start()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("controlplane: starting kube-apiserver and etcd: %w", err), os.RemoveAll(dir))
	}
	cp := &ControlPlane{Config: cfg, Scheme: scheme, Dir: dir, opts: opts, env: env, certs: certs}
	if cp.Client, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	admin, err := env.AddUser(envtest.User{Name: "kueue-waittime-admin", Groups: []string{"system:masters"}}, cfg)
	if err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	cp.Kubeconfig = filepath.Join(dir, "admin.kubeconfig")
	if err := os.WriteFile(cp.Kubeconfig, kubeconfig, 0o600); err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	return cp, nil
}

// UserConfig returns the REST config of a user with the given groups, for
// RBAC tests: it authenticates as that user and holds no permissions beyond
// what RBAC objects grant.
func (cp *ControlPlane) UserConfig(name string, groups ...string) (*rest.Config, error) {
	u, err := cp.env.AddUser(envtest.User{Name: name, Groups: groups}, cp.Config)
	if err != nil {
		return nil, err
	}
	return u.Config(), nil
}

// StartKueue starts Kueue's controllers, webhooks and scheduler in process,
// with the wait time estimator when the WaitTimeEstimation gate is enabled,
// and its visibility server behind the kube-apiserver's aggregation layer.
// It returns once the webhooks and the visibility API answer.
func (cp *ControlPlane) StartKueue(ctx context.Context, opts ...KueueOption) (*Kueue, error) {
	if cp.kueue != nil {
		return nil, errors.New("controlplane: Kueue is already running")
	}
	if cp.opts.WithoutKueue {
		return nil, errors.New("controlplane: started WithoutKueue: Kueue's CRDs and webhooks are not installed")
	}
	var ko kueueOptions
	for _, opt := range opts {
		opt(&ko)
	}
	wio := &cp.env.WebhookInstallOptions
	metricsAddress := "0"
	if cp.opts.MetricsBindAddress != "" {
		metricsAddress = cp.opts.MetricsBindAddress
		registerKueueMetrics()
	}
	mgr, err := ctrl.NewManager(ko.restConfig(cp.Config), manager.Options{
		Scheme:  cp.Scheme,
		Logger:  cp.opts.Log,
		Metrics: metricsserver.Options{BindAddress: metricsAddress},
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: wio.LocalServingHost, Port: wio.LocalServingPort, CertDir: wio.LocalServingCertDir,
		}),
		Controller: crconfig.Controller{SkipNameValidation: new(true)},
	})
	if err != nil {
		return nil, fmt.Errorf("controlplane: creating the manager: %w", err)
	}
	kctx, cancel := context.WithCancel(ctx)
	k := &Kueue{cancel: cancel, done: make(chan error, 1)}
	fail := func(err error) (*Kueue, error) {
		cancel()
		return nil, err
	}
	if err := indexer.Setup(kctx, mgr.GetFieldIndexer()); err != nil {
		return fail(err)
	}
	configuration := &configapi.Configuration{WaitTimeEstimation: cp.opts.WaitTimeEstimation.DeepCopy()}
	if len(cp.opts.DeviceClassMappings) > 0 {
		configuration.Resources = &configapi.Resources{DeviceClassMappings: cp.opts.DeviceClassMappings}
	}
	configuration.AdmissionFairSharing = cp.opts.AdmissionFairSharing.DeepCopy()
	mgr.GetScheme().Default(configuration)
	if errs := validateResources(configuration, mgr.GetScheme()); len(errs) > 0 {
		return fail(fmt.Errorf("controlplane: invalid Kueue configuration: %w", errs.ToAggregate()))
	}
	// As cmd/kueue/main.go: one resource formatter for the cache, the
	// queues, the controllers and the scheduler; with KueueDRAIntegration,
	// the DRA mapper from the configuration and the cache of
	// DeviceClass-backed extended resources.
	resourceFormatter := resources.NewResourceFormatter()
	var draMapper *dra.ResourceMapper
	var draBackedResources *dra.ExtendedResourceCache
	if features.Enabled(features.KueueDRAIntegration) {
		draMapper = dra.NewResourceMapper()
		draBackedResources = dra.NewExtendedResourceCache()
		if configuration.Resources != nil && len(configuration.Resources.DeviceClassMappings) > 0 {
			if err := draMapper.PopulateFromConfiguration(configuration.Resources.DeviceClassMappings); err != nil {
				return fail(fmt.Errorf("controlplane: DRA mapper: %w", err))
			}
			for _, name := range draMapper.CounterBasedResourceNames() {
				resourceFormatter.RegisterBinaryFormattedResource(name)
			}
			for _, name := range draMapper.CapacityBasedResourceNames() {
				resourceFormatter.RegisterBinaryFormattedResource(name)
			}
		}
	}
	cacheOptions := []schdcache.Option{schdcache.WithResourceFormatter(resourceFormatter)}
	if configuration.AdmissionFairSharing != nil {
		cacheOptions = append(cacheOptions, schdcache.WithAdmissionFairSharing(configuration.AdmissionFairSharing))
	}
	k.Cache = schdcache.New(mgr.GetClient(), cacheOptions...)
	requeuer := qcache.NewRequeuer(qcache.WithBatchPeriod(cp.opts.RequeuingBatchPeriod))
	if err := mgr.Add(requeuer); err != nil {
		return fail(err)
	}
	preemptionExpectations := preemptexpectations.New()
	queueOptions := []qcache.Option{
		qcache.WithResourceFormatter(resourceFormatter),
		qcache.WithPreemptionExpectations(preemptionExpectations),
	}
	if draBackedResources != nil {
		queueOptions = append(queueOptions, qcache.WithDRABackedResources(draBackedResources))
	}
	if configuration.AdmissionFairSharing != nil {
		queueOptions = append(queueOptions, qcache.WithAdmissionFairSharing(configuration.AdmissionFairSharing))
	}
	k.Queues = qcache.NewManager(mgr.GetClient(), k.Cache, requeuer, queueOptions...)
	resourceSliceAPIAvailable := utildra.CheckResourceSliceAPIAvailable(mgr)
	if resourceSliceAPIAvailable {
		if err := core.SetupResourceSliceIndexer(kctx, mgr.GetFieldIndexer()); err != nil {
			return fail(err)
		}
	}
	if failed, err := core.SetupControllers(mgr, k.Queues, k.Cache, configuration, core.SetupControllersOpts{
		PreemptionExpectations:    preemptionExpectations,
		DRAMapper:                 draMapper,
		DRABackedResources:        draBackedResources,
		ResourceFormatter:         resourceFormatter,
		ResourceSliceAPIAvailable: resourceSliceAPIAvailable,
	}); err != nil {
		return fail(fmt.Errorf("controlplane: controller %s: %w", failed, err))
	}
	if failed, err := webhooks.Setup(mgr, nil); err != nil {
		return fail(fmt.Errorf("controlplane: webhook %s: %w", failed, err))
	}
	if ko.batchJobs {
		if err := setupBatchJobs(kctx, mgr, k.Queues, k.Cache); err != nil {
			return fail(err)
		}
	}
	if ko.multiKueue != nil {
		if ko.multiKueue.dispatcherName == configapi.MultiKueueDispatcherModeWaitTime && features.Enabled(features.WaitTimeEstimation) {
			k.Dispatches = multikueue.NewWaitTimeDispatches()
			ko.multiKueue.setup = append(ko.multiKueue.setup, multikueue.WithWaitTimeDispatches(k.Dispatches))
		}
		if err := setupMultiKueue(kctx, mgr, ko.multiKueue); err != nil {
			return fail(err)
		}
	}
	schedOpts := []scheduler.Option{
		scheduler.WithPreemptionExpectations(preemptionExpectations),
		scheduler.WithResourceFormatter(resourceFormatter),
		scheduler.WithAdmissionFairSharing(configuration.AdmissionFairSharing),
	}
	if features.Enabled(features.WaitTimeEstimation) {
		fromConfiguration := waittimeconfig.EstimatorOptions(configuration)
		estOpts := append(slices.Clone(fromConfiguration), estimator.WithLogger(cp.opts.Log.WithName("wait-time-estimator")))
		estOpts = append(estOpts, cp.opts.EstimatorOptions...)
		if k.Estimator, err = estimator.New(k.Cache, k.Queues, estOpts...); err != nil {
			return fail(err)
		}
		if err := k.Estimator.SetupWithManager(kctx, mgr); err != nil {
			return fail(err)
		}
		schedOpts = append(schedOpts, scheduler.WithWaitTimeEstimator(k.Estimator))
		if cp.opts.ReplicaEstimatorOptions != nil {
			replicaOpts := append(slices.Clone(fromConfiguration), estimator.WithLogger(cp.opts.Log.WithName("wait-time-estimator-replica")))
			replicaOpts = append(replicaOpts, cp.opts.ReplicaEstimatorOptions...)
			if k.Replica, err = estimator.New(k.Cache, k.Queues, replicaOpts...); err != nil {
				return fail(err)
			}
			if err := k.Replica.SetupWithManager(kctx, mgr); err != nil {
				return fail(err)
			}
		}
	}
	sched := scheduler.New(k.Queues, k.Cache, mgr.GetClient(), mgr.GetEventRecorder(constants.AdmissionName), schedOpts...)
	if err := mgr.Add(sched); err != nil {
		return fail(err)
	}
	go func() { k.done <- mgr.Start(kctx) }()
	go k.Queues.CleanUpOnContext(kctx)
	go k.Cache.CleanUpOnContext(kctx)

	if err := waitForTLS(kctx, fmt.Sprintf("%s:%d", wio.LocalServingHost, wio.LocalServingPort)); err != nil {
		return fail(fmt.Errorf("controlplane: webhook server: %w", err))
	}
	// The visibility server's clients: the REST config of its generic API
	// server, and a kubeconfig for delegated authentication and
	// authorization; with a request counter, both are counted.
	visibilityConfig, visibilityKubeconfig := cp.Config, cp.Kubeconfig
	if ko.counter != nil {
		visibilityConfig = rest.CopyConfig(cp.Config)
		visibilityConfig.Wrap(func(rt http.RoundTripper) http.RoundTripper { return ko.counter.wrapSource(visibilitySource, rt) })
		if k.proxy, err = ko.counter.startProxy(cp.Config, visibilitySource); err != nil {
			return fail(err)
		}
		visibilityKubeconfig = filepath.Join(cp.Dir, "visibility-counted.kubeconfig")
		if err := k.proxy.kubeconfig(visibilityKubeconfig); err != nil {
			return fail(errors.Join(err, k.proxy.stop()))
		}
	}
	if err := cp.serveVisibility(kctx, k, configuration, visibilityConfig, visibilityKubeconfig); err != nil {
		return fail(errors.Join(err, k.proxy.stop()))
	}
	cp.kueue = k
	return k, nil
}

// StopKueue stops the in-process Kueue and waits for its manager to return.
func (cp *ControlPlane) StopKueue() error {
	k := cp.kueue
	if k == nil {
		return nil
	}
	cp.kueue = nil
	k.cancel()
	select {
	case err := <-k.done:
		return errors.Join(err, k.proxy.stop())
	case <-time.After(time.Minute):
		return errors.Join(errors.New("controlplane: the manager did not stop within a minute"), k.proxy.stop())
	}
}

// RestartAPIServer kills kube-apiserver (SIGKILL, as a crash or a node
// failure does) and starts it again on the same port, with the same
// certificates and the same etcd: what its clients see of an API server
// restart. (A graceful stop waits about a minute for open watches.)
func (cp *ControlPlane) RestartAPIServer() error {
	api := cp.env.ControlPlane.GetAPIServer()
	pids, err := pidsWithArgument("--cert-dir=" + api.CertDir)
	if err != nil {
		return err
	}
	if len(pids) != 1 {
		return fmt.Errorf("controlplane: %d kube-apiserver processes with --cert-dir=%s, want 1", len(pids), api.CertDir)
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		return fmt.Errorf("controlplane: killing kube-apiserver: %w", err)
	}
	// Stop reaps the killed process (it signals an exited one no more).
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, err := os.Stat(fmt.Sprintf("/proc/%d/cmdline", pids[0]))
		if err != nil {
			return true, nil
		}
		state, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pids[0]))
		return err == nil && strings.Contains(string(state), ") Z "), nil
	}); err != nil {
		return fmt.Errorf("controlplane: kube-apiserver did not die: %w", err)
	}
	if err := api.Stop(); err != nil {
		return fmt.Errorf("controlplane: after killing kube-apiserver: %w", err)
	}
	if err := api.Start(); err != nil {
		return fmt.Errorf("controlplane: starting kube-apiserver again: %w", err)
	}
	return nil
}

// pidsWithArgument lists the processes one of whose arguments is arg.
func pidsWithArgument(arg string) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		for _, a := range strings.Split(string(cmdline), "\x00") {
			if a == arg {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids, nil
}

// Stop stops Kueue, then the control plane, and removes Dir.
func (cp *ControlPlane) Stop() error {
	errs := []error{cp.StopKueue()}
	if cp.env != nil {
		errs = append(errs, cp.env.Stop())
	}
	errs = append(errs, os.RemoveAll(cp.Dir))
	return errors.Join(errs...)
}

// visibilityService is where the APIServices point; an ExternalName Service
// sends the aggregator to the in-process server on localhost.
const (
	visibilityNamespace = "kueue-system"
	visibilityService   = "visibility-server"
)

// visibilitySource prefixes the request counts of the visibility server.
const visibilitySource = "visibility: "

func (cp *ControlPlane) serveVisibility(ctx context.Context, k *Kueue, configuration *configapi.Configuration, restConfig *rest.Config, kubeconfig string) error {
	port, err := FreePort()
	if err != nil {
		return err
	}
	k.VisibilityPort = port
	enable, bind := true, int32(port)
	cfg := configuration.DeepCopy()
	cfg.InternalCertManagement = &configapi.InternalCertManagement{Enable: &enable}
	cfg.VisibilityServer = &configapi.VisibilityServerConfiguration{BindPort: &bind, BindAddress: new("127.0.0.1")}
	certDir, err := os.MkdirTemp(cp.Dir, "visibility-")
	if err != nil {
		return err
	}
	opts := []visibility.ServerOption{visibility.WithCertDir(certDir), visibility.WithDelegatedAuthKubeconfig(kubeconfig)}
	if k.Estimator != nil {
		opts = append(opts, visibility.WithWaitTimeEstimates(k.Estimator), visibility.WithWaitTimeReviews(k.Estimator))
	}
	if k.Dispatches != nil {
		opts = append(opts, visibility.WithDispatchedWorkloads(k.Dispatches))
	}
	serverErr := make(chan error, 1)
	go func() {
		serverErr <- visibility.CreateAndStartVisibilityServer(ctx, k.Queues, cfg, restConfig, nil, opts...)
	}()
	if err := cp.registerVisibilityAPI(ctx, port); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-serverErr:
			return false, fmt.Errorf("controlplane: visibility server stopped: %w", err)
		default:
		}
		for _, version := range []string{"v1beta1", "v1beta2"} {
			var svc unstructured.Unstructured
			svc.SetAPIVersion("apiregistration.k8s.io/v1")
			svc.SetKind("APIService")
			if err := cp.Client.Get(ctx, client.ObjectKey{Name: version + ".visibility.kueue.x-k8s.io"}, &svc); err != nil {
				return false, nil
			}
			conds, _, _ := unstructured.NestedSlice(svc.Object, "status", "conditions")
			available := false
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == "Available" && m["status"] == "True" {
					available = true
				}
			}
			if !available {
				return false, nil
			}
		}
		return true, nil
	})
}

func (cp *ControlPlane) registerVisibilityAPI(ctx context.Context, port int) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: visibilityNamespace}}
	if err := cp.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: visibilityService, Namespace: visibilityNamespace},
		Spec: corev1.ServiceSpec{
			Type:         corev1.ServiceTypeExternalName,
			ExternalName: "localhost",
			Ports:        []corev1.ServicePort{{Name: "https", Port: int32(port)}},
		},
	}
	if err := cp.Client.Create(ctx, svc); apierrors.IsAlreadyExists(err) {
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var old corev1.Service
			if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(svc), &old); err != nil {
				return err
			}
			old.Spec.Ports = svc.Spec.Ports
			return cp.Client.Update(ctx, &old)
		}); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	for _, version := range []string{"v1beta1", "v1beta2"} {
		apiService := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiregistration.k8s.io/v1",
			"kind":       "APIService",
			"metadata":   map[string]any{"name": version + ".visibility.kueue.x-k8s.io"},
			"spec": map[string]any{
				"group":                 "visibility.kueue.x-k8s.io",
				"version":               version,
				"groupPriorityMinimum":  int64(100),
				"versionPriority":       int64(100),
				"insecureSkipTLSVerify": true,
				"service": map[string]any{
					"name": visibilityService, "namespace": visibilityNamespace, "port": int64(port),
				},
			},
		}}
		// The aggregator writes the APIService's status concurrently:
		// retry on conflicts.
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var existing unstructured.Unstructured
			existing.SetGroupVersionKind(apiService.GroupVersionKind())
			err := cp.Client.Get(ctx, client.ObjectKey{Name: apiService.GetName()}, &existing)
			switch {
			case apierrors.IsNotFound(err):
				return cp.Client.Create(ctx, apiService.DeepCopy())
			case err != nil:
				return err
			}
			existing.Object["spec"] = apiService.Object["spec"]
			return cp.Client.Update(ctx, &existing)
		}); err != nil {
			return err
		}
	}
	return nil
}

// FreePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitForTLS(ctx context.Context, addr string) error {
	dialer := &net.Dialer{Timeout: time.Second}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		conn, err := tls.DialWithDialer(dialer, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			return false, nil
		}
		return true, conn.Close()
	})
}

// validateResources is Kueue's validation of the Configuration
// (pkg/config.Validate, which the manager runs when it loads its config
// file), kept to the resources section, the one Options set: the rest is
// defaults, and the integrations list names job frameworks this in-process
// manager does not register.
func validateResources(c *configapi.Configuration, scheme *runtime.Scheme) field.ErrorList {
	var out field.ErrorList
	for _, err := range kueueconfig.Validate(c, scheme) {
		if strings.HasPrefix(err.Field, "resources.") || err.Field == "resources" {
			out = append(out, err)
		}
	}
	return out
}

// registerKueueMetrics registers Kueue's metrics in controller-runtime's
// registry once per process (registering twice panics), with the feature
// gates as they are then.
var registerKueueMetrics = sync.OnceFunc(kueuemetrics.Register)
