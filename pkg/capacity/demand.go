package capacity

import "hash/maphash"

// Demand is a workload's demand as an adapter holds it, read without
// converting it first: pod sets with their names, pod counts and total
// requests (summed over the pod set's pods). R is the adapter's type of
// resource names.
type Demand[R ~string] interface {
	// PodSets is how many pod sets the workload has.
	PodSets() int
	// PodSet returns the name and pod count of the i-th pod set and how
	// many total requests it has.
	PodSet(i int) (name string, count int64, requests int)
	// EachRequest calls f with each total request of the i-th pod set.
	EachRequest(i int, f func(R, int64))
}

// PerPod is the per-pod request of a pod set's total request for count
// pods: the total itself when count is not positive.
func PerPod(total, count int64) int64 {
	if count > 0 {
		return total / count
	}
	return total
}

// Resized returns s with length n, keeping its elements up to n (and the
// slices they hold, for reuse): s itself when its capacity allows, else s
// grown with zero elements.
func Resized[T any](s []T, n int) []T {
	if n <= cap(s) {
		return s[:n]
	}
	return append(s[:cap(s)], make([]T, n-cap(s))...)
}

// Converter converts a Demand into a [Workload]: each pod set's requests
// per pod (PerPod). Its visitor is bound once, so that converting visits
// a pod set's requests without allocating a closure.
type Converter[R ~string] struct {
	into  map[string]int64
	count int64
	add   func(R, int64)
}

// NewConverter returns a Converter.
func NewConverter[R ~string]() *Converter[R] {
	c := &Converter[R]{}
	c.add = func(name R, v int64) { c.into[string(name)] = PerPod(v, c.count) }
	return c
}

// Into writes the Workload of d into w, reusing its pod sets and their
// request maps (cleared first): converting into the same w again
// allocates only where d has more pod sets or requests than w ever held.
func (c *Converter[R]) Into(w *Workload, d Demand[R]) {
	w.PodSets = Resized(w.PodSets, d.PodSets())
	for i := range w.PodSets {
		out := &w.PodSets[i]
		out.Name, out.Count, _ = d.PodSet(i)
		if out.Requests == nil {
			out.Requests = make(map[string]int64)
		}
		clear(out.Requests)
		c.into, c.count = out.Requests, out.Count
		d.EachRequest(i, c.add)
		c.into = nil
	}
}

// DemandOf converts d into a new Workload (see Converter.Into).
func DemandOf[R ~string](d Demand[R]) Workload {
	var w Workload
	NewConverter[R]().Into(&w, d)
	return w
}

// Classes groups the workloads of one ClusterQueue by demand shape (their
// pod sets' names, counts and per-pod requests) without building anything
// per workload: a Demand is hashed and compared with the classes found,
// and only the first workload of a class is converted (DemandOf). What
// depends only on the shape (the partition, the roll's flavor options) is
// then computed once per class.
type Classes[R ~string] struct {
	seed   maphash.Seed
	byHash map[uint64][]int
	// Shapes are the classes' demands, in the order they were found; a
	// class is its index here.
	Shapes []Workload
	// hashEntry and matchEntry visit one request of a pod set, reading
	// and writing the fields below; made once, so that visiting allocates
	// nothing.
	hashEntry, matchEntry func(R, int64)
	count                 int64
	sum                   uint64
	want                  map[string]int64
	match                 bool
}

// NewClasses returns Classes with no class yet.
func NewClasses[R ~string]() *Classes[R] {
	c := &Classes[R]{seed: maphash.MakeSeed(), byHash: make(map[uint64][]int)}
	c.hashEntry = func(name R, v int64) {
		c.sum += maphash.Comparable(c.seed, requestEntry{name: string(name), perPod: PerPod(v, c.count)})
	}
	c.matchEntry = func(name R, v int64) {
		if got, ok := c.want[string(name)]; !ok || got != PerPod(v, c.count) {
			c.match = false
		}
	}
	return c
}

// Of returns the class of d, an index into Shapes.
func (c *Classes[R]) Of(d Demand[R]) int {
	h := c.hash(d)
	for _, i := range c.byHash[h] {
		if c.sameDemand(d, c.Shapes[i]) {
			return i
		}
	}
	i := len(c.Shapes)
	c.Shapes = append(c.Shapes, DemandOf(d))
	c.byHash[h] = append(c.byHash[h], i)
	return i
}

// hash hashes what DemandOf keeps of d: the requests of a pod set are
// summed over their per-entry hashes, so that their order does not
// matter.
func (c *Classes[R]) hash(d Demand[R]) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	for i := range d.PodSets() {
		name, count, _ := d.PodSet(i)
		h.WriteString(name)
		c.count, c.sum = count, 0
		d.EachRequest(i, c.hashEntry)
		maphash.WriteComparable(&h, [2]uint64{uint64(c.count), c.sum})
	}
	return h.Sum64()
}

type requestEntry struct {
	name   string
	perPod int64
}

// sameDemand reports whether DemandOf(d) would equal w.
func (c *Classes[R]) sameDemand(d Demand[R], w Workload) bool {
	if d.PodSets() != len(w.PodSets) {
		return false
	}
	for i := range d.PodSets() {
		want := w.PodSets[i]
		name, count, requests := d.PodSet(i)
		if name != want.Name || count != want.Count || requests != len(want.Requests) {
			return false
		}
		c.count, c.want, c.match = count, want.Requests, true
		d.EachRequest(i, c.matchEntry)
		c.want = nil
		if !c.match {
			return false
		}
	}
	return true
}
