package estimator

import (
	"sigs.k8s.io/kueue/pkg/workload"
)

// trackedOf is what e tracks of the pending workload key (zero if
// nothing).
func trackedOf(e *Estimator, key workload.Reference) trackedWorkload {
	p, _ := e.state.Book.Pending.Get(nameFromReference(key))
	return p
}
