package forecast

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// decoder turns fuzz bytes into numbers, favouring the awkward ones.
type decoder struct{ data []byte }

func (d *decoder) byte() byte {
	if len(d.data) == 0 {
		return 0
	}
	b := d.data[0]
	d.data = d.data[1:]
	return b
}

func (d *decoder) float() float64 {
	b, v := d.byte(), float64(d.byte())
	switch b % 9 {
	case 0:
		return 0
	case 1:
		return math.NaN()
	case 2:
		return math.Inf(1)
	case 3:
		return math.Inf(-1)
	case 4:
		return -v
	case 5:
		return 1e300 * (v + 1)
	case 6:
		return 1e-300 * v
	case 7:
		return math.MaxFloat64
	}
	return v/4 + 0.5
}

func (d *decoder) quantity() int64 {
	b, v := d.byte(), int64(d.byte())
	switch b % 7 {
	case 0:
		return 0
	case 1:
		return -1000 * v
	case 2:
		return capacity.Unlimited
	case 3:
		return math.MaxInt64 - v
	case 4:
		return math.MinInt64 + v
	}
	return 100 * v
}

var fuzzDims = []capacity.FlavorResource{
	{Flavor: "a", Resource: "cpu"},
	{Flavor: "a", Resource: "memory"},
	{Flavor: "b", Resource: "nvidia.com/gpu"},
	{Flavor: "c", Resource: "cpu"}, // rarely in the capacity
}

func (d *decoder) quantities(dims int) capacity.Quantities {
	q := capacity.Quantities{}
	mask := d.byte()
	for i := range dims {
		if mask&(1<<i) != 0 {
			q[fuzzDims[i]] = d.quantity()
		}
	}
	return q
}

// wildModel returns whatever the fuzzer says, NaN and Inf included.
type wildModel struct {
	values []float64
	i      *int
	mean   float64
}

func (w wildModel) next() float64 {
	if len(w.values) == 0 {
		return 1
	}
	*w.i++
	return w.values[*w.i%len(w.values)]
}
func (w wildModel) Sample(*rand.Rand) float64            { return w.next() }
func (w wildModel) Residual(float64, *rand.Rand) float64 { return w.next() }
func (w wildModel) Mean() float64                        { return w.mean }

func (d *decoder) model() ServiceModel {
	switch d.byte() % 4 {
	case 0:
		if m, err := NewExponential(d.float()); err == nil {
			return m
		}
	case 1:
		obs := make([]float64, 1+d.byte()%5)
		for i := range obs {
			obs[i] = d.float()
		}
		if m, err := NewEmpirical(obs); err == nil {
			return m
		}
	case 2:
		if m, err := NewDeterministic(d.float()); err == nil {
			return m
		}
	case 3:
		vals := make([]float64, d.byte()%5)
		for i := range vals {
			vals[i] = d.float()
		}
		return wildModel{values: vals, i: new(int), mean: d.float()}
	}
	return Deterministic{seconds: 1}
}

func decodeQueue(d *decoder) Queue {
	q := Queue{
		Capacity: d.quantities(3),
		Policy:   Policy(d.byte() % 3),
		Service:  d.model(),
	}
	for range d.byte() % 6 {
		q.Running = append(q.Running, Running{Usage: d.quantities(4), AgeSeconds: d.float(), MaxExecutionSeconds: d.float()})
	}
	for i := range d.byte() % 24 {
		p := Pending{ID: string(rune('a' + i)), Quotable: d.byte()%5 != 0, MaxExecutionSeconds: d.float(), Priority: int32(int8(d.byte()))}
		for range d.byte() % 3 {
			p.Options = append(p.Options, d.quantities(4))
		}
		q.Pending = append(q.Pending, p)
	}
	for range d.byte() % 3 {
		q.Arrivals = append(q.Arrivals, Arrival{RatePerSecond: d.float(), Options: []capacity.Quantities{d.quantities(4)}, Priority: int32(int8(d.byte())), MaxExecutionSeconds: d.float()})
	}
	if d.byte()%2 == 0 {
		q.CyclePeriodSeconds = d.float()
		q.AdmissionLatencySeconds = d.float()
	}
	// Preemption last, so that the older seeds decode as before: a policy
	// (one in four unknown), restarts, and the running workloads'
	// priorities.
	q.WithinClusterQueue = PreemptionPolicy(d.byte() % 4)
	q.PreemptedRestart = d.byte()%2 == 1
	if d.byte()%2 == 0 {
		q.PreemptionDelaySeconds = d.float()
	}
	for i := range q.Running {
		q.Running[i].Priority = int32(int8(d.byte()))
	}
	// Then when each arrival class stops (half of them never), and service
	// laws of up to two priorities.
	for i := range q.Arrivals {
		if d.byte()%2 == 0 {
			q.Arrivals[i].UntilSeconds = d.float()
		}
	}
	for range d.byte() % 3 {
		if q.ServiceByPriority == nil {
			q.ServiceByPriority = make(map[int32]ServiceModel)
		}
		q.ServiceByPriority[int32(int8(d.byte()))] = d.model()
	}
	// Then lent quota and its holders.
	if d.byte()%2 == 0 {
		q.Lent = d.quantities(3)
		for range d.byte() % 4 {
			q.LentHolders = append(q.LentHolders, Running{Usage: d.quantities(4), AgeSeconds: d.float(), MaxExecutionSeconds: d.float(), Priority: int32(int8(d.byte()))})
		}
	}
	// Then first-attempt latencies and the pending workloads not tried
	// yet, with their waits.
	for range d.byte() % 4 {
		q.FirstAttemptLatencySample = append(q.FirstAttemptLatencySample, d.float())
	}
	for range d.byte() % 3 {
		q.PreemptionReactionSample = append(q.PreemptionReactionSample, d.float())
	}
	for range d.byte() % 3 {
		q.PreemptionDelaySample = append(q.PreemptionDelaySample, d.float())
	}
	for i := range q.Pending {
		if d.byte()%2 == 0 {
			q.Pending[i].Untried, q.Pending[i].WaitedSeconds = true, d.float()
		}
	}
	// Then service classes (up to two, half of them bootstrapped) and the
	// classes the workloads name, in and out of range.
	for range d.byte() % 3 {
		m := d.model()
		if d.byte()%2 == 0 {
			obs := make([]float64, 1+d.byte()%5)
			for i := range obs {
				obs[i] = d.float()
			}
			if b, err := NewBootstrap(obs); err == nil {
				m = b
			}
		}
		q.ServiceClasses = append(q.ServiceClasses, m)
	}
	for i := range q.Running {
		q.Running[i].ServiceClass = int32(int8(d.byte())) % 4
	}
	for i := range q.Pending {
		q.Pending[i].ServiceClass = int32(int8(d.byte())) % 4
	}
	for i := range q.Arrivals {
		q.Arrivals[i].ServiceClass = int32(int8(d.byte())) % 4
	}
	// Then admission fair sharing, on for an odd byte (so that the older
	// seeds, exhausted by now, decode as before): its settings, up to
	// three LocalQueues, and the LocalQueues the workloads name, in and
	// out of range.
	if d.byte()%2 == 1 {
		afs := &AdmissionFairSharing{HalfLifeSeconds: d.float(), SamplingIntervalSeconds: d.float()}
		if d.byte()%2 == 1 {
			afs.ResourceWeights = map[string]float64{"cpu": d.float(), "memory": d.float()}
		}
		for range d.byte() % 4 {
			afs.LocalQueues = append(afs.LocalQueues, LocalQueueUsage{Consumed: d.float(), SinceUpdateSeconds: d.float(), Weight: d.float()})
		}
		q.AdmissionFairSharing = afs
		for i := range q.Running {
			q.Running[i].LocalQueue = int32(int8(d.byte())) % 5
		}
		for i := range q.Pending {
			q.Pending[i].LocalQueue = int32(int8(d.byte())) % 5
		}
	}
	return q
}

// FuzzForecast: whatever the input, Forecast either returns an error
// wrapping ErrInvalidQueue or estimates that are finite, non-negative,
// within the horizon and ordered (P50 ≤ P90) — no panic, NaN or Inf.
func FuzzForecast(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 3, 8, 3, 8, 1, 0, 8, 10, 2, 7, 2, 8, 50, 8, 40, 5, 1, 0, 7, 8, 20, 8, 8, 1, 2, 7, 8, 9})
	f.Add([]byte{7, 3, 200, 5, 200, 2, 9, 0, 3, 30, 3, 5, 8, 1, 7, 3, 12, 2, 1, 5, 5, 5, 4, 3, 3, 3, 2, 2})
	f.Add([]byte{255, 1, 2, 4, 6, 7, 1, 3, 3, 8, 8, 8, 5, 17, 2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
	f.Add([]byte{3, 5, 9, 5, 9, 5, 9, 0, 3, 2, 4, 7, 1, 2, 3, 2, 200, 1, 5, 7, 2, 6, 1, 3, 8, 1, 7, 2, 7})
	f.Add([]byte("a deliberately long seed that fills many fields of the queue with bytes"))
	// Preempting: one slot held by a priority-0 workload, two pending
	// workloads of priorities 1 and 0, LowerPriority, restarts.
	f.Add([]byte{1, 3, 8, 0, 8, 1, 2, 8, 1, 8, 4, 8, 3, 8, 1, 0, 0, 2, 1, 5, 2, 1, 0, 8, 2, 8, 4, 0, 1, 0, 0, 0, 1, 1, 0})
	// Hand-written bytes mostly decode to invalid queues; add random ones
	// that reach the roll (at least one quotable workload not clamped).
	r := rand.New(rand.NewPCG(42, 43))
	for added, tries := 0, 0; added < 12 && tries < 20000; tries++ {
		data := make([]byte, 40+r.IntN(80))
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		if _, est, err := fuzzOnce(f, data); err == nil && rolled(est) {
			f.Add(data)
			added++
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		q, est, err := fuzzOnce(t, data)
		if err != nil {
			if !errors.Is(err, ErrInvalidQueue) {
				t.Fatalf("Forecast error %v does not wrap ErrInvalidQueue", err)
			}
			return
		}
		checkInvariants(t, q, est.estimates, est.horizon)
	})
}

type fuzzResult struct {
	estimates []Estimate
	horizon   float64
}

func fuzzOnce(t testing.TB, data []byte) (Queue, fuzzResult, error) {
	d := &decoder{data: data}
	fc, err := New(WithSamples(1+int(d.byte()%8)), WithHorizonCount(1+int(d.byte()%6)), WithHorizonSeconds(d.float()))
	if err != nil {
		if !errors.Is(err, ErrInvalidOption) {
			t.Fatalf("New error %v does not wrap ErrInvalidOption", err)
		}
		fc = mustNew(t, WithSamples(4), WithHorizonCount(3), WithHorizonSeconds(3600))
	}
	q := decodeQueue(d)
	est, err := fc.Forecast(q, rand.New(rand.NewPCG(uint64(len(data)), 7)))
	return q, fuzzResult{estimates: est, horizon: fc.horizonSeconds}, err
}

func rolled(res fuzzResult) bool {
	for _, e := range res.estimates {
		if e.Quotable && !e.Clamped {
			return true
		}
	}
	return false
}

// TestMedianAndP90MatchesSort: selection gives the same type-7 quantiles as
// sorting, ties included.
func TestMedianAndP90MatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for trial := range 2000 {
		n := 1 + r.IntN(300)
		xs := make([]float64, n)
		for i := range xs {
			switch trial % 3 {
			case 0:
				xs[i] = r.Float64()
			case 1:
				xs[i] = float64(r.IntN(4)) // heavy ties
			default:
				xs[i] = 0
			}
		}
		sorted := slices.Clone(xs)
		slices.Sort(sorted)
		p50, p90 := medianAndP90(xs)
		if w := quantile(sorted, 0.5); !approx(p50, w, 1e-12) {
			t.Fatalf("trial %d (n=%d): P50 %v, sort gives %v", trial, n, p50, w)
		}
		if w := quantile(sorted, 0.9); !approx(p90, w, 1e-12) {
			t.Fatalf("trial %d (n=%d): P90 %v, sort gives %v", trial, n, p90, w)
		}
	}
}
