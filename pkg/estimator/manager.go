package estimator

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/manager"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// SetupWithManager wires the estimator into a controller-runtime manager:
// its event handlers on the manager's shared Workload, ClusterQueue and
// LocalQueue informers (no new watch: Kueue's controllers already hold them), and its
// refresh loop as a runnable that first warm-starts from the manager's
// cache unless [WithWarmStart] named another reader.
func (e *Estimator) SetupWithManager(ctx context.Context, mgr manager.Manager) error {
	if e.opts.warmStartFrom == nil {
		e.opts.warmStartFrom = mgr.GetCache()
	}
	wlInformer, err := mgr.GetCache().GetInformer(ctx, &kueue.Workload{})
	if err != nil {
		return fmt.Errorf("estimator: getting the Workload informer: %w", err)
	}
	if _, err := wlInformer.AddEventHandler(e.WorkloadEventHandler()); err != nil {
		return fmt.Errorf("estimator: registering the Workload event handler: %w", err)
	}
	cqInformer, err := mgr.GetCache().GetInformer(ctx, &kueue.ClusterQueue{})
	if err != nil {
		return fmt.Errorf("estimator: getting the ClusterQueue informer: %w", err)
	}
	if _, err := cqInformer.AddEventHandler(e.ClusterQueueEventHandler()); err != nil {
		return fmt.Errorf("estimator: registering the ClusterQueue event handler: %w", err)
	}
	lqInformer, err := mgr.GetCache().GetInformer(ctx, &kueue.LocalQueue{})
	if err != nil {
		return fmt.Errorf("estimator: getting the LocalQueue informer: %w", err)
	}
	if _, err := lqInformer.AddEventHandler(e.LocalQueueEventHandler()); err != nil {
		return fmt.Errorf("estimator: registering the LocalQueue event handler: %w", err)
	}
	if err := mgr.Add(e); err != nil {
		return fmt.Errorf("estimator: adding the refresh loop to the manager: %w", err)
	}
	return nil
}
