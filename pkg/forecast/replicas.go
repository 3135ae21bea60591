package forecast

import (
	"math"
	"math/rand/v2"
	"sync"
)

// replicaSource is the random source of a roll. Each replica draws from a
// stream of its own, a PCG seeded from two words of the caller's source and
// the replica's index, so that two rolls from the same caller's seed whose
// queues differ a little (a what-if with one workload inserted) give each
// replica the same draws until its paths diverge (common random numbers),
// rather than only the first replica, after which a shared stream would
// be shifted by whatever the earlier replicas drew.
//
// Unless the roll is independent, the replicas come in antithetic pairs
// (Hammersley and Morton, 1956): replica 2i draws from its stream and
// records its draws; replica 2i+1 replays the record complemented, x →
// 2⁶⁴−1−x, then continues its partner's stream once the record is used up
// (an odd replica may draw more than its partner did). Through
// math/rand/v2 a complemented word turns Float64's U into 1−U−2⁻⁵³, and
// IntN's index i of n into n−1−i (exactly for n a power of two, up to a
// rejected draw otherwise).
//
// Each replica alone is exact: the complement of a uniform 64-bit word is
// uniform, and the continued stream is independent of the record, so an
// odd replica's sequence is as independent and uniform as an even one's. A
// pair is negatively correlated where the roll's outputs are monotone in
// the uniforms — a long service in one is a short one in the other, a
// resample of large observations is matched by one of small ones — which
// lowers the variance of the averages over replicas and, for monotone
// outputs, of their quantiles (Avramidis and Wilson, 1998). The samplers
// must then be monotone in the uniform they use: exponential draws go by
// inversion (see expDraw), not by the ziggurat of rand.ExpFloat64, whose
// result is not monotone in its word. The pairing weakens where the two
// replicas' paths diverge (one admits a workload the other does not yet),
// since a replayed draw then goes to another use; at most
// maxRecordedDraws draws are recorded per pair, the rest of the odd
// replica draws afresh.
type replicaSource struct {
	seed   [2]uint64
	stream rand.PCG
	paired bool
	// recordBuf holds record's storage, taken from recordBuffers.
	recordBuf *[]uint64
	record    []uint64
	// replaying: the current replica is odd (paired only); next is its
	// position in record.
	replaying bool
	next      int
}

// maxRecordedDraws caps an even replica's record (8 B a draw): a replica of
// a long queue with arrivals may draw a few times per event over tens of
// thousands of events.
const maxRecordedDraws = 1 << 16

// recordBuffers recycles the records between rolls, as timeBuffers does
// the admission times.
var recordBuffers = sync.Pool{New: func() any { return new([]uint64) }}

// newReplicaSource takes two words of r as its seed; paired makes the
// replicas antithetic pairs.
func newReplicaSource(r *rand.Rand, paired bool) *replicaSource {
	src := &replicaSource{seed: [2]uint64{r.Uint64(), r.Uint64()}, paired: paired}
	if paired {
		src.recordBuf = recordBuffers.Get().(*[]uint64)
		src.record = (*src.recordBuf)[:0]
	}
	return src
}

// startReplica readies the source for replica rep: a replica that opens a
// stream (every one, or the even ones of pairs) seeds it and records
// afresh; an odd one of a pair replays its partner's record.
func (a *replicaSource) startReplica(rep int) {
	stream := rep
	if a.paired {
		a.replaying, a.next = rep%2 == 1, 0
		if a.replaying {
			return
		}
		a.record = a.record[:0]
		stream = rep / 2
	}
	a.stream.Seed(a.seed[0], streamSeed(a.seed[1], uint64(stream)))
}

// streamSeed mixes a seed word with a stream index (SplitMix64's
// finalizer over their sum with the golden-ratio increment), so that
// neighbouring streams start far apart.
func streamSeed(seed, stream uint64) uint64 {
	z := seed + (stream+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Uint64 implements rand.Source.
func (a *replicaSource) Uint64() uint64 {
	if a.replaying {
		if a.next < len(a.record) {
			x := a.record[a.next]
			a.next++
			return ^x
		}
		return a.stream.Uint64()
	}
	x := a.stream.Uint64()
	if a.paired && len(a.record) < maxRecordedDraws {
		a.record = append(a.record, x)
	}
	return x
}

// release gives the record's storage back to recordBuffers; the source must
// not be used after it.
func (a *replicaSource) release() {
	if a.recordBuf == nil {
		return
	}
	*a.recordBuf = a.record[:0]
	recordBuffers.Put(a.recordBuf)
	a.recordBuf, a.record = nil, nil
}

// expDraw returns an Exp(1) draw by inversion: F⁻¹(U) = −ln(1−U) for U =
// r.Float64() ∈ [0, 1), so the result lies in [0, 53·ln 2 ≈ 36.7] (finite)
// and grows with U, as replicaSource's antithetic pairs need.
//
// Below U = 1 − 1/64 (98.4 % of draws) F⁻¹ is interpolated linearly in
// expTable, its values at the multiples of 1/4096; above, it is computed
// (math.Log; U is a multiple of 2⁻⁵³, so 1−U is exact). Interpolating a
// convex function from above, the draw is at most 1.3·10⁻⁴ of itself too
// long (at U → 0; elsewhere h²/(8(1−U)²) ≤ 3·10⁻⁵ in absolute terms) and
// short by rounding only, far below the Monte Carlo error of any figure a
// roll reports; the table's
// nodes are exact, so the draw is continuous and nondecreasing in U across
// the nodes and the switch to the logarithm. It costs about 1 ns over the
// uniform, against about 8 for math.Log (profiled: the logarithm was 13 %
// of a refresh of 1,000 small ClusterQueues).
func expDraw(r *rand.Rand) float64 {
	u := r.Float64()
	if u >= expTableEnd {
		return -math.Log(1 - u)
	}
	x := u * expTableSteps
	i := int(x)
	lo := expTable[i]
	return lo + (x-float64(i))*(expTable[i+1]-lo)
}

const (
	// expTableSteps is the number of steps of expTable per unit of U.
	expTableSteps = 4096
	// expTableEnd is where expDraw leaves the table for the logarithm: a
	// node, U = 4032/4096.
	expTableEnd = 1 - 1.0/64
)

// expTable holds −ln(1 − i/4096) for i = 0 … 4032 (32 KB).
var expTable = func() (t [expTableSteps*expTableEnd + 1]float64) {
	for i := range t {
		t[i] = -math.Log(1 - float64(i)/expTableSteps)
	}
	return t
}()
