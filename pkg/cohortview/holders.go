package cohortview

import (
	"maps"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
)

// maxHolders bounds the workloads whose ends a roll watches for a
// ClusterQueue's lent quota to come back, once their usage covers it: the
// what-if record keeps them until the next refresh, for every lender.
const maxHolders = 64

// HolderSet collects the holders of a ClusterQueue's lent quota for its
// View, in the order they are added: maxHolders of them, or more until
// their usage covers every flavor-resource lent (with less, some of the
// lent quota would never come back in the roll).
type HolderSet[Q comparable] struct {
	// Holders are the running workloads added, Sources where each runs.
	Holders []forecast.Running
	Sources []Source[Q]
	// uncovered is the lent quota the holders' usage does not cover yet,
	// per flavor-resource lent (≤ 0 once covered).
	uncovered capacity.Quantities
}

// NewHolderSet returns an empty set of the holders of lent quota lent.
func NewHolderSet[Q comparable](lent capacity.Quantities) *HolderSet[Q] {
	return &HolderSet[Q]{uncovered: maps.Clone(lent)}
}

// Full reports whether the set holds maxHolders holders and their usage
// covers every flavor-resource lent: the caller adds no more.
func (s *HolderSet[Q]) Full() bool {
	if len(s.Holders) < maxHolders {
		return false
	}
	for _, q := range s.uncovered {
		if q > 0 {
			return false
		}
	}
	return true
}

// Add adds holder h, which runs where src says.
func (s *HolderSet[Q]) Add(h forecast.Running, src Source[Q]) {
	for fr, q := range h.Usage {
		if _, ok := s.uncovered[fr]; ok {
			s.uncovered[fr] -= q
		}
	}
	s.Holders = append(s.Holders, h)
	s.Sources = append(s.Sources, src)
}
