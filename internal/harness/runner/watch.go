package runner

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// watchWorkloads calls observe with every Workload of namespace ns: each
// one a List returns, then each one a watch from that List's resource
// version adds or modifies. When the server ends the watch (a loaded
// kube-apiserver closes a watcher that falls behind), it calls rewatched
// and lists and watches again, until ctx ends. It returns once the first
// List and watch are set up, with their error; observe runs on its own
// goroutine.
func watchWorkloads(ctx context.Context, cl client.WithWatch, ns string, observe func(*kueue.Workload, time.Time), rewatched func()) error {
	ready := make(chan error, 1)
	go func() {
		first := true
		for ctx.Err() == nil {
			var list kueue.WorkloadList
			err := cl.List(ctx, &list, client.InNamespace(ns))
			var w watch.Interface
			if err == nil {
				w, err = cl.Watch(ctx, &kueue.WorkloadList{}, &client.ListOptions{Namespace: ns, Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
			}
			if first {
				ready <- err
				first = false
			}
			if err != nil {
				if ctx.Err() == nil {
					time.Sleep(time.Second)
				}
				continue
			}
			now := time.Now()
			for i := range list.Items {
				observe(&list.Items[i], now)
			}
			for ev := range w.ResultChan() {
				if wl, ok := ev.Object.(*kueue.Workload); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) {
					observe(wl, time.Now())
				}
			}
			w.Stop()
			if ctx.Err() == nil {
				rewatched()
			}
		}
	}()
	if err := <-ready; err != nil {
		return fmt.Errorf("watching the Workloads of %s: %w", ns, err)
	}
	return nil
}
