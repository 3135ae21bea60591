package controlplane

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/util/sets"
	ctrl "sigs.k8s.io/controller-runtime"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/constants"
	"sigs.k8s.io/kueue/pkg/controller/admissionchecks/multikueue"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	workloadjob "sigs.k8s.io/kueue/pkg/controller/jobs/job"
	"sigs.k8s.io/kueue/pkg/controller/workloaddispatcher"
)

// MultiKueueNamespace is where a manager started WithMultiKueue reads its
// MultiKueueClusters' kubeconfig Secrets (Kueue's configuration namespace).
const MultiKueueNamespace = visibilityNamespace

// WithBatchJobs runs Kueue's batch/v1 Job integration: its webhook (which
// suspends a queued Job and, on a MultiKueue manager, hands it to MultiKueue
// with spec.managedBy) and its reconciler, which creates the Job's Workload.
// Without it, the Job webhooks that Kueue's manifests register fail every
// Job.
func WithBatchJobs() KueueOption {
	return func(o *kueueOptions) { o.batchJobs = true }
}

// WithMultiKueue makes the Kueue a MultiKueue manager: Kueue's MultiKueue
// controllers (MultiKueueClusters, their AdmissionChecks, the workloads'
// copies on the workers) with the batch/v1 Job adapter and the dispatcher
// dispatcherName (Kueue's AllAtOnce or Incremental, or the wait-time
// dispatcher), with the options given. The MultiKueueClusters'
// kubeconfig Secrets go in MultiKueueNamespace. It implies WithBatchJobs.
func WithMultiKueue(dispatcherName string, opts ...multikueue.SetupOption) KueueOption {
	return func(o *kueueOptions) {
		o.batchJobs = true
		o.multiKueue = &multiKueueOptions{dispatcherName: dispatcherName, setup: opts}
	}
}

type multiKueueOptions struct {
	dispatcherName string
	setup          []multikueue.SetupOption
}

// setupBatchJobs sets up the batch/v1 Job webhook and reconciler as
// cmd/kueue/main.go does for an enabled integration.
func setupBatchJobs(ctx context.Context, mgr ctrl.Manager, queues *qcache.Manager, cache *schdcache.Cache) error {
	if err := workloadjob.SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return fmt.Errorf("controlplane: Job indexes: %w", err)
	}
	opts := []jobframework.Option{jobframework.WithQueues(queues), jobframework.WithCache(cache)}
	if err := workloadjob.SetupWebhook(mgr, opts...); err != nil {
		return fmt.Errorf("controlplane: Job webhook: %w", err)
	}
	r, err := workloadjob.NewReconciler(ctx, mgr.GetClient(), mgr.GetFieldIndexer(), mgr.GetEventRecorder(constants.JobControllerName), opts...)
	if err != nil {
		return fmt.Errorf("controlplane: Job reconciler: %w", err)
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("controlplane: Job reconciler: %w", err)
	}
	return nil
}

// setupMultiKueue sets up the MultiKueue manager as cmd/kueue/main.go does.
func setupMultiKueue(ctx context.Context, mgr ctrl.Manager, o *multiKueueOptions) error {
	if err := multikueue.SetupIndexer(ctx, mgr.GetFieldIndexer(), MultiKueueNamespace); err != nil {
		return fmt.Errorf("controlplane: MultiKueue indexes: %w", err)
	}
	adapters, err := jobframework.GetMultiKueueAdapters(sets.New("batch/job"))
	if err != nil {
		return fmt.Errorf("controlplane: MultiKueue adapters: %w", err)
	}
	opts := append([]multikueue.SetupOption{
		multikueue.WithAdapters(adapters),
		multikueue.WithDispatcherName(o.dispatcherName),
	}, o.setup...)
	if err := multikueue.SetupControllers(mgr, MultiKueueNamespace, opts...); err != nil {
		return fmt.Errorf("controlplane: MultiKueue controllers: %w", err)
	}
	configuration := &configapi.Configuration{MultiKueue: &configapi.MultiKueue{DispatcherName: &o.dispatcherName}}
	mgr.GetScheme().Default(configuration)
	if failed, err := workloaddispatcher.SetupControllers(mgr, configuration, nil); err != nil {
		return fmt.Errorf("controlplane: MultiKueue dispatcher %s: %w", failed, err)
	}
	return nil
}
