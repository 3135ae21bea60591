package estimator

import "context"

// RefreshChanged is what the refresh loop runs: a refresh of the
// ClusterQueues whose inputs changed. For the benchmarks of package
// estimator_test.
func (e *Estimator) RefreshChanged(ctx context.Context) { e.refresh(ctx, false) }

// DropResults forgets the published results, for the memory benchmark of
// package estimator_test to tell what they keep.
func (e *Estimator) DropResults() { e.results.Store(nil) }
