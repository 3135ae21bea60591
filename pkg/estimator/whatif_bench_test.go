package estimator_test

import (
	"testing"

	"sigs.k8s.io/kueue/pkg/workload"
)

// BenchmarkWhatIf10000Pending is one what-if forecast (the roll of a
// ClusterQueue with 10 000 pending workloads and the hypothetical one
// inserted behind them) from the published results of a refresh; compare
// with BenchmarkRefresh10000PendingOneClusterQueue, the refresh that
// published them.
func BenchmarkWhatIf10000Pending(b *testing.B) {
	c := newBenchCluster(b, 1, 1, 10000)
	e := c.estimator(b)
	e.Refresh(c.ctx)
	info := workload.NewInfo(c.pending[len(c.pending)-1])
	b.ReportAllocs()
	for b.Loop() {
		got, err := e.WhatIf("cq-0", info)
		if err != nil {
			b.Fatal(err)
		}
		if !got.HasWait || got.Position != 10000 {
			b.Fatalf("what-if %+v: want a wait at position 10000", got)
		}
	}
}
