package cohortview

import (
	"math"
	"reflect"
	"slices"
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
)

// Reclaim is whether, and from whom, a lender takes its lent quota back by
// preemption (Kueue's reclaimWithinCohort).
type Reclaim uint8

const (
	// NoReclaim: it waits for the borrowers' workloads to end (Never).
	NoReclaim Reclaim = iota
	// ReclaimLowerPriority: it preempts the holders of a lower priority
	// than its pending workload's (LowerPriority).
	ReclaimLowerPriority
	// ReclaimAny: it preempts any holder (Any).
	ReclaimAny
)

// View is what a ClusterQueue's roll takes from the rest of its cohort
// tree, of ClusterQueues named Q: its Capacity model (nominal quota, what
// it could borrow at most and at this instant), the quota it has Lent and
// the running workloads (Holders) whose ends return it, and whether it
// takes that quota back by preemption (Reclaim). Everything else a roll
// reads is the ClusterQueue's own and changes only with its own events,
// spec or generation.
type View[Q comparable] struct {
	Capacity *capacity.ClusterQueue
	Lent     capacity.Quantities
	Holders  []forecast.Running
	// Sources says, holder by holder, where each runs.
	Sources []Source[Q]
	Reclaim Reclaim
}

// Source is the ClusterQueue of a holder of lent quota, and whether it was
// already Evicted when the view was taken (a reclaim under way).
type Source[Q comparable] struct {
	ClusterQueue Q
	Evicted      bool
}

// holderAdmissionTolerance is how far apart two holders' admission
// instants (the view's time less the holder's age) may be and still be the
// same workload's: ages are float seconds from whole timestamps.
const holderAdmissionTolerance = time.Millisecond

// SameAs reports whether view v taken at vAt and view w taken at wAt are
// the same inputs to a roll: equal capacity models and lent quota, and the
// same holders in the same order (usage, limit and priority equal,
// admitted at the same instant). A view without a capacity model (never
// taken) is the same as no other.
func (v View[Q]) SameAs(w View[Q], vAt, wAt time.Time) bool {
	if v.Capacity == nil || w.Capacity == nil || !reflect.DeepEqual(v.Capacity, w.Capacity) ||
		!reflect.DeepEqual(v.Lent, w.Lent) || len(v.Holders) != len(w.Holders) ||
		v.Reclaim != w.Reclaim || !slices.Equal(v.Sources, w.Sources) {
		return false
	}
	for i := range v.Holders {
		a, b := v.Holders[i], w.Holders[i]
		if !reflect.DeepEqual(a.Usage, b.Usage) || a.MaxExecutionSeconds != b.MaxExecutionSeconds || a.Priority != b.Priority {
			return false
		}
		admittedA := vAt.Add(-time.Duration(a.AgeSeconds * float64(time.Second)))
		admittedB := wAt.Add(-time.Duration(b.AgeSeconds * float64(time.Second)))
		if d := admittedA.Sub(admittedB); math.Abs(float64(d)) > float64(holderAdmissionTolerance) {
			return false
		}
	}
	return true
}
