package capacity

import (
	"hash/maphash"
	"maps"
)

// Interner hands out one shared copy of each distinct Quantities since
// its last Reset. The usages of a ClusterQueue's running workloads (and of
// the holders of what it lent) are mostly copies of a few demand shapes on
// a few flavors, and what takes them only reads them: a usage is hashed
// regardless of order and compared with the copies handed out under that
// hash; only a new one is copied. The caller must not change what Intern
// returns.
type Interner struct {
	seed   maphash.Seed
	byHash map[uint64][]Quantities
}

// NewInterner returns an Interner holding no Quantities.
func NewInterner() *Interner {
	return &Interner{seed: maphash.MakeSeed(), byHash: map[uint64][]Quantities{}}
}

// Intern returns the copy of q handed out since the last Reset, making
// it (q itself is not kept, so a scratch map may be passed).
func (u *Interner) Intern(q Quantities) Quantities {
	var h uint64
	for fr, v := range q {
		h += maphash.Comparable(u.seed, quantityEntry{fr: fr, v: v})
	}
	for _, c := range u.byHash[h] {
		if maps.Equal(c, q) {
			return c
		}
	}
	c := maps.Clone(q)
	u.byHash[h] = append(u.byHash[h], c)
	return c
}

// Reset forgets the copies handed out, so that the next ones are new and
// the interner keeps none of them alive.
func (u *Interner) Reset() { clear(u.byHash) }

type quantityEntry struct {
	fr FlavorResource
	v  int64
}
