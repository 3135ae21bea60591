package convert

import (
	"testing"

	"github.com/go-logr/logr"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	utiltesting "sigs.k8s.io/kueue/pkg/util/testing"
)

// snapshotObjects are what snapshotOf puts in Kueue's scheduler cache.
type snapshotObjects struct {
	flavors []*kueue.ResourceFlavor
	cqs     []*kueue.ClusterQueue
	running []*kueue.Workload
}

// snapshotOf returns the snapshot of a Kueue scheduler cache holding objs.
func snapshotOf(t *testing.T, objs snapshotObjects) *schdcache.Snapshot {
	t.Helper()
	cache := schdcache.New(utiltesting.NewClientBuilder().Build())
	for _, rf := range objs.flavors {
		cache.AddOrUpdateResourceFlavor(logr.Discard(), rf)
	}
	for _, cq := range objs.cqs {
		if err := cache.AddClusterQueue(t.Context(), cq); err != nil {
			t.Fatalf("adding cluster queue to cache: %v", err)
		}
	}
	for _, w := range objs.running {
		cache.AddOrUpdateWorkload(logr.Discard(), w)
	}
	snap, err := cache.Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return snap
}
