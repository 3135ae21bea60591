package dispatcheval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/admissionchecks/multikueue"
	utiltesting "sigs.k8s.io/kueue/pkg/util/testing"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/controlplane"
)

// The names every cluster shares, as MultiKueue needs: the LocalQueue of
// the jobs in each run's namespace, the manager's MultiKueue objects.
const (
	localQueue     = "lq"
	admissionCheck = "multikueue"
	flavor         = "default"
	// managerCPU is the manager ClusterQueue's quota: never the
	// bottleneck, so that the waits are the workers'.
	managerCPU = "1000"
)

// Clusters are a MultiKueue manager and its workers, each a control plane
// with the patched Kueue in process.
type Clusters struct {
	Dispatcher string
	Manager    *controlplane.ControlPlane
	Workers    map[string]*controlplane.ControlPlane
	stopped    map[string]bool
	mu         sync.Mutex
}

// workerWaitTimeEstimation is the workers' waitTimeEstimation section: a
// forecast after two observed completions, refreshed every 200 ms (as the
// MultiKueue integration suite runs them), so that a short run's workers
// answer from what they observed.
func workerWaitTimeEstimation() *configapi.WaitTimeEstimation {
	return &configapi.WaitTimeEstimation{MinServiceSamples: new(int32(2)), RefreshPeriod: &metav1.Duration{Duration: 200 * time.Millisecond}}
}

// StartClusters starts a manager running dispatcher (with setup, Kueue's
// MultiKueue defaults otherwise) and one worker per name, all at once, and
// connects them: a kubeconfig Secret and a MultiKueueCluster per worker, a
// MultiKueueConfig of all of them and its AdmissionCheck, Active.
func StartClusters(ctx context.Context, dispatcher string, workers []string, setup ...multikueue.SetupOption) (*Clusters, error) {
	c := &Clusters{Dispatcher: dispatcher, Workers: map[string]*controlplane.ControlPlane{}, stopped: map[string]bool{}}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	start := func(name string, opts ...controlplane.KueueOption) {
		wg.Go(func() {
			cp, err := controlplane.Start(controlplane.Options{WaitTimeEstimation: workerWaitTimeEstimation()})
			if err == nil {
				_, err = cp.StartKueue(ctx, opts...)
			}
			mu.Lock()
			defer mu.Unlock()
			if cp != nil {
				if name == "" {
					c.Manager = cp
				} else {
					c.Workers[name] = cp
				}
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("starting %q: %w", name, err))
			}
		})
	}
	start("", controlplane.WithMultiKueue(dispatcher, setup...))
	for _, w := range workers {
		start(w, controlplane.WithBatchJobs())
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	if err := c.connect(ctx, workers); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	return c, nil
}

func (c *Clusters) connect(ctx context.Context, workers []string) error {
	for _, name := range workers {
		kubeconfig, err := os.ReadFile(c.Workers[name].Kubeconfig)
		if err != nil {
			return err
		}
		for _, o := range []client.Object{
			utiltesting.MakeSecret(name+"-kubeconfig", controlplane.MultiKueueNamespace).Data(kueue.MultiKueueConfigSecretKey, kubeconfig).Obj(),
			utiltestingapi.MakeMultiKueueCluster(name).KubeConfig(kueue.SecretLocationType, name+"-kubeconfig").Obj(),
		} {
			if err := c.Manager.Client.Create(ctx, o); err != nil {
				return err
			}
		}
		if err := c.Workers[name].Client.Create(ctx, utiltestingapi.MakeResourceFlavor(flavor).Obj()); err != nil {
			return err
		}
	}
	ac := utiltestingapi.MakeAdmissionCheck(admissionCheck).ControllerName(kueue.MultiKueueControllerName).
		Parameters(kueue.SchemeGroupVersion.Group, "MultiKueueConfig", "workers").Obj()
	for _, o := range []client.Object{
		utiltestingapi.MakeMultiKueueConfig("workers").Clusters(workers...).Obj(),
		ac,
		utiltestingapi.MakeResourceFlavor(flavor).Obj(),
	} {
		if err := c.Manager.Client.Create(ctx, o); err != nil {
			return err
		}
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Manager.Client.Get(ctx, client.ObjectKeyFromObject(ac), ac); err != nil {
			return false, nil
		}
		return apimeta.IsStatusConditionTrue(ac.Status.Conditions, kueue.AdmissionCheckActive), nil
	})
}

// prepare creates a run's namespace on every cluster, a ClusterQueue of
// each worker's quota with the LocalQueue there, and on the manager a
// ClusterQueue with the MultiKueue admission check.
func (c *Clusters) prepare(ctx context.Context, namespace string, workers []Worker) error {
	cq := "cq-" + namespace
	for _, w := range workers {
		cl := c.Workers[w.Name].Client
		for _, o := range []client.Object{
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
			utiltestingapi.MakeClusterQueue(cq).ResourceGroup(*utiltestingapi.MakeFlavorQuotas(flavor).
				Resource(corev1.ResourceCPU, fmt.Sprintf("%dm", w.CPUMilli)).Obj()).Obj(),
			utiltestingapi.MakeLocalQueue(localQueue, namespace).ClusterQueue(cq).Obj(),
		} {
			if err := cl.Create(ctx, o); err != nil {
				return fmt.Errorf("worker %s: %w", w.Name, err)
			}
		}
	}
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		utiltestingapi.MakeClusterQueue(cq).AdmissionChecks(admissionCheck).
			ResourceGroup(*utiltestingapi.MakeFlavorQuotas(flavor).Resource(corev1.ResourceCPU, managerCPU).Obj()).Obj(),
		utiltestingapi.MakeLocalQueue(localQueue, namespace).ClusterQueue(cq).Obj(),
	} {
		if err := c.Manager.Client.Create(ctx, o); err != nil {
			return fmt.Errorf("manager: %w", err)
		}
	}
	// The queues are usable once each Kueue has them active.
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, cp := range append([]*controlplane.ControlPlane{c.Manager}, c.workerList(workers)...) {
			var q kueue.ClusterQueue
			if err := cp.Client.Get(ctx, client.ObjectKey{Name: cq}, &q); err != nil ||
				!apimeta.IsStatusConditionTrue(q.Status.Conditions, kueue.ClusterQueueActive) {
				return false, nil
			}
		}
		return true, nil
	})
}

func (c *Clusters) workerList(workers []Worker) []*controlplane.ControlPlane {
	var out []*controlplane.ControlPlane
	for _, w := range workers {
		out = append(out, c.Workers[w.Name])
	}
	return out
}

// StopWorker stops a worker's control plane (its Kueue at once, then its
// kube-apiserver and etcd), as a worker cluster that goes away.
func (c *Clusters) StopWorker(name string) error {
	if !c.markStopped(name) {
		return nil
	}
	return c.Workers[name].Stop()
}

// markStopped marks a control plane stopped ("" for the manager) and
// reports whether it was running.
func (c *Clusters) markStopped(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped[name] {
		return false
	}
	c.stopped[name] = true
	return true
}

// Stop stops every control plane still running (the manager's is
// stopped[""]).
func (c *Clusters) Stop() error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	stop := func(cp *controlplane.ControlPlane) {
		wg.Go(func() {
			err := cp.Stop()
			mu.Lock()
			defer mu.Unlock()
			errs = append(errs, err)
		})
	}
	if c.Manager != nil && c.markStopped("") {
		stop(c.Manager)
	}
	for name, cp := range c.Workers {
		if c.markStopped(name) {
			stop(cp)
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}
