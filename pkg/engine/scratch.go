package engine

import (
	"slices"
	"time"
)

// Scratch holds what the caller builds per pending workload to roll one
// Queue and drops after the roll, reused from one Queue and one refresh to
// the next (at 10⁵ pending workloads, 6.4 MB a refresh whose allocation
// would pace the garbage collector): each workload's name N, its Pending,
// and the untried candidates among them.
type Scratch[N any] struct {
	Names   []N
	Pending []Pending
	// Untried are the candidates of the Queue being rolled (see
	// Candidate).
	Untried []Candidate
	// n is what the last Take returned room for.
	n int
}

// Take returns n names to fill and an empty slice of room for n pending
// workloads.
func (s *Scratch[N]) Take(n int) ([]N, []Pending) {
	s.Names = slices.Grow(s.Names[:0], n)[:n]
	s.Pending = slices.Grow(s.Pending[:0], n)
	s.n = n
	return s.Names, s.Pending
}

// Drop clears what the last Take returned and the candidates, so that the
// scratch keeps no workload's name alive.
func (s *Scratch[N]) Drop() {
	clear(s.Names[:s.n])
	clear(s.Pending[:s.n])
	s.n = 0
	s.Untried = s.Untried[:0]
}

// Candidate is a pending workload, at Index in the pending list, whose
// object shows no refusal of quota and which its ClusterQueue could admit
// now without borrowing: the caller looks up whether it is Untried (its
// admission would be a first attempt's) and, if so, how long it has
// Waited, in seconds (see Pending.Untried). Created is its creation
// timestamp, from which its arrival is decoded.
type Candidate struct {
	Index   int
	Created time.Time
	Waited  float32
	Untried bool
}

// MaxUntriedCandidates bounds the pending workloads of one Queue a
// refresh examines as untried candidates (the first in queue order whose
// objects show no refusal of quota), so that the check of their quota and
// their lookups under the caller's lock take microseconds whatever the
// queue's length. The roll times by a first attempt only the workloads it
// admits before it passes over any pending one (see Pending.Untried): the
// head, and the workloads of a burst that all fit, one per cycle, which
// the scheduler's cycles reach within seconds of their arrival. A
// workload beyond the bound counts as tried. In a ClusterQueue with a
// cohort only the first candidate that fits is one (see
// Scratch.Examines).
const MaxUntriedCandidates = 64

// Examines tells whether the workload that follows examined ones (of a
// Queue in a cohort if inCohort) is to be examined as an untried
// candidate, given the candidates found so far. A Queue in a cohort is
// rolled alone, without its siblings' heads, which the scheduler takes in
// the same cycles and which may take what a burst's later workloads would
// fit in: only its first candidate may be timed as a first attempt.
func (s *Scratch[N]) Examines(examined int, inCohort bool) bool {
	return examined < MaxUntriedCandidates && !(inCohort && len(s.Untried) > 0)
}
