package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/cluster"
)

// The cluster every test of this package shares, and its first manager.
var (
	cl      *cluster.Cluster
	manager *cluster.Manager
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

// draGPU is the logical resource Kueue counts the cluster's DRA GPUs as.
const draGPU = "example.com/gpu"

// mapDRAGPUs maps the cluster's DRA DeviceClass to draGPU in the
// Configuration (resources.deviceClassMappings), as an operator of a
// cluster with DRA devices does: the manifests map none.
func mapDRAGPUs(cfg map[string]any) {
	resources, _ := cfg["resources"].(map[string]any)
	if resources == nil {
		resources = map[string]any{}
		cfg["resources"] = resources
	}
	resources["deviceClassMappings"] = []any{map[string]any{"name": draGPU, "deviceClassNames": []any{cluster.DRADeviceClass}}}
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	var err error
	cl, err = cluster.Start(ctx, cluster.Options{Dir: os.Getenv("E2E_CLUSTER_DIR")})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer func() {
		if err := cl.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: stopping the cluster:", err)
		}
	}()
	fmt.Printf("e2e: cluster up in %s (logs in %s/logs)\n", time.Since(start).Round(time.Second), cl.Dir)
	managers, err := cl.DeployKueue(ctx, cluster.KueueOptions{EditConfiguration: mapDRAGPUs})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	manager = managers[0]
	fmt.Printf("e2e: Kueue deployed from the manifests in %s\n", time.Since(start).Round(time.Second))
	return m.Run()
}
