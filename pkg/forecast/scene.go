package forecast

import (
	"encoding/binary"
	"math"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// scene is the dense form of a [Queue]: quantities become int64 vectors
// over the finitely bounded flavor-resources of the capacity, and the first
// H pending workloads are grouped by demand shape (their list of fitting
// options), so that a BestEffortFIFO scan costs O(shapes), not O(pending).
type scene struct {
	// keys and keyDim map a capacity dimension to its vector index, or -1
	// when its capacity is Unlimited (it never constrains). Dimensions
	// absent from keys have capacity 0. A ClusterQueue has a handful of
	// dimensions, so a linear scan beats hashing two strings; dimOf takes
	// over for large ones.
	keys   []capacity.FlavorResource
	keyDim []int
	dimOf  map[capacity.FlavorResource]int
	total  []int64 // capacity per dimension
	dims   int

	// vecs is a table of demand vectors, dims int64 each.
	vecs     []int64
	initFree []int64
	running  []runEntry
	// lent is the quota lent out, per dimension, that holders return;
	// nil when nothing is lent.
	lent    []int64
	holders []runEntry

	entries  []entry
	shapes   []shape
	shapeIDs map[string]int32
	arrivals []arrivalClass

	optBuf []int64 // scratch: dense options of one workload, back to back
	keyBuf []byte
}

type runEntry struct {
	vec      int32
	age      float64
	maxExec  float64
	priority int32
	// law is its service class (see Queue.ServiceClasses; 0: none).
	law int32
}

// entry is one pending workload in the roll, in queue order.
type entry struct {
	pos      int // index in Queue.Pending
	maxExec  float64
	work     float64 // dominant share × bounded mean service, for extrapolation
	shape    int32
	priority int32
	// law is its service class (see Queue.ServiceClasses; 0: none).
	law int32
	// waited is how long an untried entry has waited (see Pending.Untried).
	waited  float32
	untried bool
}

// shape is a distinct list of fitting options, with the entries that share
// it in queue order.
type shape struct {
	opts    []int32 // vector ids, in Kueue's try order
	members []int32 // entry indexes, ascending
	// firstHash identifies the first option's vector (see vectorHash); it
	// carries the shape's lateness to workloads beyond the count horizon.
	firstHash uint64
}

type arrivalClass struct {
	rate     float64
	opts     []int32
	priority int32
	// law is its service class (see Queue.ServiceClasses; 0: none).
	law     int32
	maxExec float64
	// until is when the class stops arriving (+Inf: never).
	until float64
}

func newScene(capQ capacity.Quantities, runningHint int) *scene {
	s := &scene{
		shapeIDs: make(map[string]int32),
		running:  make([]runEntry, 0, runningHint),
	}
	s.keys = capQ.Keys()
	for _, k := range s.keys {
		v := capQ[k]
		if v == capacity.Unlimited {
			s.keyDim = append(s.keyDim, -1)
			continue
		}
		s.keyDim = append(s.keyDim, len(s.total))
		s.total = append(s.total, v)
	}
	if len(s.keys) > linearScanDims {
		s.dimOf = make(map[capacity.FlavorResource]int, len(s.keys))
		for i, k := range s.keys {
			s.dimOf[k] = s.keyDim[i]
		}
	}
	s.dims = len(s.total)
	s.initFree = append([]int64(nil), s.total...)
	return s
}

// linearScanDims is the largest number of capacity dimensions looked up by
// linear scan.
const linearScanDims = 8

// dim returns the vector index of k (−1: Unlimited) and whether the
// capacity has it at all.
func (s *scene) dim(k capacity.FlavorResource) (int, bool) {
	if s.dimOf != nil {
		d, ok := s.dimOf[k]
		return d, ok
	}
	for i := range s.keys {
		if s.keys[i] == k {
			return s.keyDim[i], true
		}
	}
	return 0, false
}

// mix64 is the splitmix64 finalizer, a cheap bijective scrambler.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// dimHash is one positive component's contribution to vectorHash.
func dimHash(d int, v int64) uint64 {
	return mix64(uint64(v) + uint64(d+1)*0x9e3779b97f4a7c15)
}

// vectorHash identifies a dense demand vector: the sum of dimHash over its
// positive components (order-independent, so a map walk can compute it).
func vectorHash(v []int64) uint64 {
	h := uint64(0)
	for d, x := range v {
		if x > 0 {
			h += dimHash(d, x)
		}
	}
	return h
}

func (s *scene) vec(id int32) []int64 {
	return s.vecs[int(id)*s.dims : (int(id)+1)*s.dims]
}

// addRunning adds a running workload whose service class is law (see
// Queue.ServiceClasses; 0: none).
func (s *scene) addRunning(run Running, law int32) {
	id := int32(0)
	if s.dims > 0 {
		id = int32(len(s.vecs) / s.dims)
	}
	start := len(s.vecs)
	s.vecs = append(s.vecs, make([]int64, s.dims)...)
	v := s.vecs[start:]
	for k, q := range run.Usage {
		if q <= 0 {
			continue
		}
		if d, ok := s.dim(k); ok && d >= 0 {
			v[d] = q
			s.initFree[d] = satSub(s.initFree[d], q)
		}
	}
	s.running = append(s.running, runEntry{
		vec:      id,
		age:      sanitizeAge(run.AgeSeconds),
		maxExec:  sanitizeBound(run.MaxExecutionSeconds),
		priority: run.Priority,
		law:      law,
	})
}

// addLent takes the lent quota out of the free capacity, and records
// whose ends return it (see Queue.Lent). Dimensions outside the capacity
// and non-positive amounts are ignored.
func (s *scene) addLent(lent capacity.Quantities, holders []Running) {
	var any bool
	for k, q := range lent {
		if q <= 0 {
			continue
		}
		d, ok := s.dim(k)
		if !ok || d < 0 {
			continue
		}
		if s.lent == nil {
			s.lent = make([]int64, s.dims)
		}
		s.lent[d] = satAdd(s.lent[d], q)
		s.initFree[d] = satSub(s.initFree[d], q)
		any = true
	}
	if !any {
		return
	}
	for _, h := range holders {
		start := len(s.vecs)
		id := int32(start / max(s.dims, 1))
		s.vecs = append(s.vecs, make([]int64, s.dims)...)
		v := s.vecs[start:]
		for k, q := range h.Usage {
			if d, ok := s.dim(k); ok && d >= 0 && q > 0 {
				v[d] = q
			}
		}
		s.holders = append(s.holders, runEntry{
			vec:      id,
			age:      sanitizeAge(h.AgeSeconds),
			maxExec:  sanitizeBound(h.MaxExecutionSeconds),
			priority: h.Priority,
		})
	}
}

// dense writes q as a vector into out (len dims) and reports whether it can
// ever fit: every positive demand is in a dimension of the capacity and at
// most its total. Negative demands count as 0.
func (s *scene) dense(q capacity.Quantities, out []int64) bool {
	clear(out)
	for k, v := range q {
		if v <= 0 {
			continue
		}
		d, ok := s.dim(k)
		if !ok {
			return false
		}
		if d < 0 {
			continue
		}
		if v > s.total[d] {
			return false
		}
		out[d] = v
	}
	return true
}

// dominantShare returns max_d demand_d/capacity_d of the first option that
// can ever fit and the vectorHash of that option, or ok = false when no
// option can ever fit.
func (s *scene) dominantShare(options []capacity.Quantities) (share float64, hash uint64, ok bool) {
	for _, q := range options {
		share, hash, ok = 0, 0, true
		for k, v := range q {
			if v <= 0 {
				continue
			}
			d, found := s.dim(k)
			if !found {
				ok = false
				break
			}
			if d < 0 {
				continue
			}
			if v > s.total[d] {
				ok = false
				break
			}
			share = max(share, float64(v)/float64(s.total[d]))
			hash += dimHash(d, v)
		}
		if ok {
			return share, hash, true
		}
	}
	return 0, 0, false
}

// fittingOptions writes the options that can ever fit into s.optBuf, back
// to back, and returns how many there are.
func (s *scene) fittingOptions(options []capacity.Quantities) int {
	n := 0
	need := len(options) * s.dims
	if cap(s.optBuf) < need {
		s.optBuf = make([]int64, need)
	}
	buf := s.optBuf[:need]
	for _, q := range options {
		if s.dense(q, buf[n*s.dims:(n+1)*s.dims]) {
			n++
		}
	}
	return n
}

func (s *scene) share(v []int64) float64 {
	share := 0.0
	for d, x := range v {
		if x > 0 {
			share = max(share, float64(x)/float64(s.total[d]))
		}
	}
	return share
}

// internShape returns the shape id of the first n options in s.optBuf,
// creating it (and its vectors) on first sight.
func (s *scene) internShape(n int) int32 {
	key := s.keyBuf[:0]
	for _, x := range s.optBuf[:n*s.dims] {
		key = binary.LittleEndian.AppendUint64(key, uint64(x))
	}
	key = binary.LittleEndian.AppendUint32(key, uint32(n))
	s.keyBuf = key
	if id, ok := s.shapeIDs[string(key)]; ok {
		return id
	}
	id := int32(len(s.shapes))
	opts := make([]int32, n)
	for o := range n {
		opts[o] = s.appendVec(s.optBuf[o*s.dims : (o+1)*s.dims])
	}
	s.shapes = append(s.shapes, shape{opts: opts, firstHash: vectorHash(s.optBuf[:s.dims])})
	s.shapeIDs[string(key)] = id
	return id
}

func (s *scene) appendVec(v []int64) int32 {
	if s.dims == 0 {
		return 0
	}
	id := int32(len(s.vecs) / s.dims)
	s.vecs = append(s.vecs, v...)
	return id
}

// addPending adds the next workload of the roll, of service class law and
// mean service meanService (seconds); false when none of its options can
// ever fit.
func (s *scene) addPending(pos int, options []capacity.Quantities, maxExec float64, priority, law int32, meanService float64) bool {
	n := s.fittingOptions(options)
	if n == 0 {
		return false
	}
	share := s.share(s.optBuf[:s.dims])
	id := s.internShape(n)
	j := int32(len(s.entries))
	s.shapes[id].members = append(s.shapes[id].members, j)
	s.entries = append(s.entries, entry{
		pos:      pos,
		shape:    id,
		maxExec:  maxExec,
		priority: priority,
		law:      law,
		work:     share * boundedMean(meanService, maxExec),
	})
	return true
}

// markUntried marks the last entry added as Pending.Untried, waiting for
// waited seconds (NaN or negative: 0).
func (s *scene) markUntried(waited float64) {
	e := &s.entries[len(s.entries)-1]
	e.untried = true
	e.waited = float32(max(waited, 0))
	if math.IsNaN(waited) {
		e.waited = 0
	}
}

// addArrival adds an arrival class whose service class is law (see
// Queue.ServiceClasses; 0: none).
func (s *scene) addArrival(a Arrival, law int32) {
	if !(a.RatePerSecond > 0) {
		return
	}
	n := s.fittingOptions(a.Options)
	if n == 0 {
		return
	}
	opts := make([]int32, n)
	for o := range n {
		opts[o] = s.appendVec(s.optBuf[o*s.dims : (o+1)*s.dims])
	}
	s.arrivals = append(s.arrivals, arrivalClass{
		rate:     a.RatePerSecond,
		opts:     opts,
		priority: a.Priority,
		law:      law,
		maxExec:  sanitizeBound(a.MaxExecutionSeconds),
		until:    arrivalEnd(a.UntilSeconds),
	})
}

// arrivalEnd maps Arrival.UntilSeconds to the time the class stops: 0
// (unset) means never (+Inf).
func arrivalEnd(until float64) float64 {
	if until > 0 {
		return until
	}
	return math.Inf(1)
}

func satSub(a, b int64) int64 {
	if b > 0 && a < math.MinInt64+b {
		return math.MinInt64
	}
	return a - b
}

func satAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
