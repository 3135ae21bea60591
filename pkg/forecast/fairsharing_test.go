package forecast

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// fairPending is a pending workload of 1 CPU in LocalQueue lq.
func fairPending(id string, lq int32) Pending {
	return Pending{ID: id, Options: []capacity.Quantities{cpu(1000)}, Quotable: true, LocalQueue: lq}
}

// TestFairSharingOrder: one slot of 1 CPU, every workload 1 CPU for
// exactly 100 s (or 600 s), no latency: the waits are exact, and they show
// the order in which the roll admits.
func TestFairSharingOrder(t *testing.T) {
	cases := map[string]struct {
		service float64
		afs     *AdmissionFairSharing
		pending []Pending
		want    []float64
	}{
		// The heavy LocalQueue's workload comes first in Queue.Pending
		// (it is older), the light one's is admitted first.
		"light LocalQueue first": {
			service: 100,
			afs: &AdmissionFairSharing{HalfLifeSeconds: 600, SamplingIntervalSeconds: 300,
				LocalQueues: []LocalQueueUsage{{Consumed: 50, Weight: 1}, {Consumed: 0, Weight: 1}}},
			pending: []Pending{fairPending("heavy", 1), fairPending("light", 2)},
			want:    []float64{100, 0},
		},
		"without admission fair sharing": {
			service: 100,
			pending: []Pending{fairPending("heavy", 1), fairPending("light", 2)},
			want:    []float64{0, 100},
		},
		// Usage comes before priority.
		"usage before priority": {
			service: 100,
			afs: &AdmissionFairSharing{HalfLifeSeconds: 600, SamplingIntervalSeconds: 300,
				LocalQueues: []LocalQueueUsage{{Consumed: 50, Weight: 1}, {Consumed: 0, Weight: 1}}},
			pending: []Pending{
				{ID: "heavy-urgent", Options: []capacity.Quantities{cpu(1000)}, Quotable: true, LocalQueue: 1, Priority: 10},
				fairPending("light", 2),
			},
			want: []float64{100, 0},
		},
		// The weight divides the usage: 50/100 < 1.
		"weight": {
			service: 100,
			afs: &AdmissionFairSharing{HalfLifeSeconds: 600, SamplingIntervalSeconds: 300,
				LocalQueues: []LocalQueueUsage{{Consumed: 50, Weight: 100}, {Consumed: 1, Weight: 1}}},
			pending: []Pending{fairPending("heavy-by-weight", 2), fairPending("light-by-weight", 1)},
			want:    []float64{100, 0},
		},
		// A weight of 0 puts its LocalQueue last.
		"zero weight": {
			service: 100,
			afs: &AdmissionFairSharing{HalfLifeSeconds: 600, SamplingIntervalSeconds: 300,
				LocalQueues: []LocalQueueUsage{{Consumed: 0, Weight: 0}, {Consumed: 1e9, Weight: 1}}},
			pending: []Pending{fairPending("zero-weight", 1), fairPending("heavy", 2)},
			want:    []float64{100, 0},
		},
		// Both idle: a1 is admitted first (position); its entry penalty,
		// α(300 s) = 1 − 2^(−1/2) ≈ 0.29 cores, lifts A above B before any
		// sample, so b1 passes a2.
		"entry penalty": {
			service: 100,
			afs: &AdmissionFairSharing{HalfLifeSeconds: 600, SamplingIntervalSeconds: 300,
				LocalQueues: []LocalQueueUsage{{Weight: 1}, {Weight: 1}}},
			pending: []Pending{fairPending("a1", 1), fairPending("a2", 1), fairPending("b1", 2)},
			want:    []float64{0, 200, 100},
		},
		// The penalty of a1 (0.29) lifts A above B (0.2): b1 passes a2,
		// then B's settlement (0.2 folded toward 1 over 100 s, plus its
		// penalty: 0.58) puts A first again.
		"penalties alternate": {
			service: 100,
			afs: &AdmissionFairSharing{HalfLifeSeconds: 600, SamplingIntervalSeconds: 300,
				LocalQueues: []LocalQueueUsage{{Weight: 1}, {Consumed: 0.2, Weight: 1}}},
			pending: []Pending{fairPending("a1", 1), fairPending("a2", 1), fairPending("b1", 2), fairPending("b2", 2)},
			want:    []float64{0, 200, 100, 300},
		},
		// H (2 cores) is heavier than M (1.2) now, so m1 goes first; by its
		// end, one half-life later, H's usage has halved to 1 while M's,
		// with m1 running and its penalty of 0.5, went from 1.7 to 1.35:
		// h1 passes m2.
		"decay": {
			service: 600,
			afs: &AdmissionFairSharing{HalfLifeSeconds: 600, SamplingIntervalSeconds: 600,
				LocalQueues: []LocalQueueUsage{{Consumed: 2, Weight: 1}, {Consumed: 1.2, Weight: 1}}},
			pending: []Pending{fairPending("m1", 2), fairPending("m2", 2), fairPending("h1", 1)},
			want:    []float64{0, 1200, 600},
		},
		// With the half-life 0 the usage is reset at the first sample (due
		// now for the first LocalQueue, whose last update is one interval
		// old) and there is no penalty.
		"half-life zero": {
			service: 100,
			afs: &AdmissionFairSharing{HalfLifeSeconds: 0, SamplingIntervalSeconds: 300,
				LocalQueues: []LocalQueueUsage{{Consumed: 5, Weight: 1, SinceUpdateSeconds: 300}, {Consumed: 1, Weight: 1}}},
			pending: []Pending{fairPending("kept", 2), fairPending("reset", 1)},
			want:    []float64{100, 0},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q := Queue{
				Capacity:             cpu(1000),
				Service:              mustDeterministic(t, tc.service),
				Policy:               BestEffortFIFO,
				Pending:              tc.pending,
				AdmissionFairSharing: tc.afs,
			}
			for _, policy := range []Policy{BestEffortFIFO, StrictFIFO} {
				q.Policy = policy
				got := waits(mustForecast(t, mustNew(t, WithSamples(4)), q, 1))
				if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
					t.Errorf("%v waits (-want +got):\n%s", policy, diff)
				}
			}
		})
	}
}

// TestFairSharingBestEffortPassesOver: under BestEffortFIFO the first
// workload in AFS order that fits is taken; under StrictFIFO the first one
// blocks.
func TestFairSharingBestEffortPassesOver(t *testing.T) {
	// 2 CPU, one running 1-CPU workload ends at 100 s. The light
	// LocalQueue's workload needs 2 CPU and waits for it; the heavy one's
	// 1-CPU workload fits at once under BestEffortFIFO only.
	q := Queue{
		Capacity: cpu(2000),
		Service:  mustDeterministic(t, 100),
		Running:  []Running{{Usage: cpu(1000), LocalQueue: 1}},
		Pending: []Pending{
			{ID: "heavy-small", Options: []capacity.Quantities{cpu(1000)}, Quotable: true, LocalQueue: 1},
			{ID: "light-large", Options: []capacity.Quantities{cpu(2000)}, Quotable: true, LocalQueue: 2},
		},
		AdmissionFairSharing: &AdmissionFairSharing{HalfLifeSeconds: 3600, SamplingIntervalSeconds: 300,
			LocalQueues: []LocalQueueUsage{{Consumed: 10, Weight: 1}, {Weight: 1}}},
	}
	cases := map[string]struct {
		policy Policy
		want   []float64
	}{
		"BestEffortFIFO": {BestEffortFIFO, []float64{0, 100}},
		// light-large waits for the running one (100 s), then runs 100 s.
		"StrictFIFO": {StrictFIFO, []float64{200, 100}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q.Policy = tc.policy
			got := waits(mustForecast(t, mustNew(t, WithSamples(2)), q, 3))
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFairnessUsage checks the usage arithmetic against Kueue's formulas:
// the sample's decay (halving in one half-life with nothing admitted), the
// entry penalty and the settlement.
func TestFairnessUsage(t *testing.T) {
	type step struct {
		op string // "sample", "admit", "complete"
		t  float64
	}
	alpha := func(elapsed, halfLife float64) float64 { return 1 - math.Pow(0.5, elapsed/halfLife) }
	cases := map[string]struct {
		halfLife, interval float64
		consumed, since    float64
		running            float64 // weighted requests of one running workload (0: none)
		steps              []step
		want               float64
	}{
		"halves in one half-life": {
			halfLife: 600, interval: 600, consumed: 8,
			steps: []step{{"sample", 600}}, want: 4,
		},
		"two samples make one half-life": {
			halfLife: 600, interval: 300, consumed: 8,
			steps: []step{{"sample", 600}}, want: 4,
		},
		"no sample before the interval": {
			halfLife: 600, interval: 300, consumed: 8,
			steps: []step{{"sample", 299}}, want: 8,
		},
		"one sample due, not two": {
			halfLife: 600, interval: 300, consumed: 8,
			steps: []step{{"sample", 599}}, want: 8 * math.Sqrt(0.5),
		},
		"the last update's age brings the sample forward": {
			halfLife: 600, interval: 300, consumed: 8, since: 200,
			steps: []step{{"sample", 100}}, want: 8 * math.Sqrt(0.5),
		},
		"decays toward the admitted usage": {
			halfLife: 600, interval: 600, consumed: 0, running: 4,
			steps: []step{{"sample", 600}}, want: 2,
		},
		"continuous sampling": {
			halfLife: 600, interval: 0, consumed: 8,
			steps: []step{{"sample", 150}, {"sample", 450}, {"sample", 600}}, want: 4,
		},
		"half-life zero resets": {
			halfLife: 0, interval: 300, consumed: 8,
			steps: []step{{"sample", 300}}, want: 0,
		},
		// Entry j = 0 has weighted requests 2 (2 cores): the penalty is
		// α(s)·2 at once.
		"entry penalty": {
			halfLife: 600, interval: 300, consumed: 0,
			steps: []step{{"admit", 0}}, want: alpha(300, 600) * 2,
		},
		// Settled 100 s after the last update: c folded toward a' = 2 over
		// 100 s, plus the penalty.
		"settlement": {
			halfLife: 600, interval: 300, consumed: 1,
			steps: []step{{"admit", 100}},
			want:  2 + (1-2)*(1-alpha(100, 600)) + alpha(300, 600)*2,
		},
		"penalty is 0 with the half-life 0": {
			halfLife: 0, interval: 300, consumed: 1,
			steps: []step{{"admit", 100}}, want: 1,
		},
		// The end of the running workload lowers a after the sample due:
		// one sample at 600 with a = 4 (8 → 6), none after.
		"completion after the sample due": {
			halfLife: 600, interval: 600, consumed: 8, running: 4,
			steps: []step{{"complete", 700}, {"sample", 1100}}, want: 6,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q := Queue{
				Capacity: cpu(8000),
				Service:  mustDeterministic(t, 1),
				Pending:  []Pending{{ID: "w", Options: []capacity.Quantities{cpu(2000)}, Quotable: true, LocalQueue: 1}},
				AdmissionFairSharing: &AdmissionFairSharing{HalfLifeSeconds: tc.halfLife, SamplingIntervalSeconds: tc.interval,
					LocalQueues: []LocalQueueUsage{{Consumed: tc.consumed, SinceUpdateSeconds: tc.since, Weight: 1}}},
			}
			if tc.running > 0 {
				q.Running = []Running{{Usage: cpu(int64(tc.running * 1000)), LocalQueue: 1}}
			}
			s := newScene(q.Capacity, len(q.Running))
			for _, r := range q.Running {
				s.addRunning(r, 0)
			}
			s.addPending(0, q.Pending[0].Options, 0, 0, 0, 1)
			f := newFairness(s, &q, false)
			f.reset()
			for _, st := range tc.steps {
				switch st.op {
				case "sample":
					f.sample(0, st.t)
				case "admit":
					f.admit(0, st.t)
				case "complete":
					f.complete(0, st.t)
				}
			}
			if diff := cmp.Diff(tc.want, f.consumed[0], cmpopts.EquateApprox(1e-12, 1e-12)); diff != "" {
				t.Errorf("consumed usage (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFairRequests: Kueue weighs quantities in their own units (cpu in
// cores), flavors summed, a resource not listed at weight 1.
func TestFairRequests(t *testing.T) {
	spot := capacity.FlavorResource{Flavor: "spot", Resource: "cpu"}
	gpu := capacity.FlavorResource{Flavor: "default", Resource: "nvidia.com/gpu"}
	q := capacity.Quantities{cpuFR: 1500, spot: 500, memFR: 2 * gi, gpu: 2}
	got := fairRequests(q, map[string]float64{"memory": 1.0 / float64(gi), "nvidia.com/gpu": 10})
	if diff := cmp.Diff(2.0+2+20, got, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
		t.Errorf("weighted requests (-want +got):\n%s", diff)
	}
}

// TestFairSharingOneLocalQueueIsUnchanged: with every workload in one
// LocalQueue, AFS orders as without it, and the roll draws the same
// numbers: the estimates are identical.
func TestFairSharingOneLocalQueueIsUnchanged(t *testing.T) {
	cases := map[string]Queue{
		"BestEffortFIFO": benchQueue(t, 300, BestEffortFIFO),
		"StrictFIFO":     benchQueue(t, 300, StrictFIFO),
		"with arrivals": func() Queue {
			q := benchQueue(t, 300, BestEffortFIFO)
			q.CyclePeriodSeconds, q.AdmissionLatencySeconds, q.RandomCyclePhase = 1, 0.5, true
			q.Arrivals = []Arrival{{RatePerSecond: 0.01, Options: []capacity.Quantities{cpuMem(1000, 4*gi)}, Priority: 1}}
			return q
		}(),
	}
	for name, q := range cases {
		t.Run(name, func(t *testing.T) {
			f := mustNew(t, WithHorizonCount(64))
			want := mustForecast(t, f, q, 11)
			for i := range q.Pending {
				q.Pending[i].LocalQueue = 1
			}
			for i := range q.Running {
				q.Running[i].LocalQueue = 1
			}
			q.AdmissionFairSharing = &AdmissionFairSharing{HalfLifeSeconds: 600, SamplingIntervalSeconds: 60,
				LocalQueues: []LocalQueueUsage{{Consumed: 3, Weight: 1}}}
			got := mustForecast(t, f, q, 11)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("estimates with one LocalQueue (-without AFS +with):\n%s", diff)
			}
		})
	}
}

// TestFairSharingIgnoredWhenPreempting: a ClusterQueue that may preempt is
// rolled in priority order, as without AFS.
func TestFairSharingIgnoredWhenPreempting(t *testing.T) {
	q := Queue{
		Capacity:           cpu(1000),
		Service:            mustDeterministic(t, 100),
		Running:            []Running{{Usage: cpu(1000), Priority: 0, AgeSeconds: 50}},
		Pending:            []Pending{{ID: "high", Options: []capacity.Quantities{cpu(1000)}, Quotable: true, Priority: 5, LocalQueue: 1}, fairPending("low", 2)},
		WithinClusterQueue: PreemptionLowerPriority,
	}
	f := mustNew(t, WithSamples(4))
	want := mustForecast(t, f, q, 5)
	q.AdmissionFairSharing = &AdmissionFairSharing{HalfLifeSeconds: 600, SamplingIntervalSeconds: 300,
		LocalQueues: []LocalQueueUsage{{Consumed: 100, Weight: 1}, {Weight: 1}}}
	if diff := cmp.Diff(want, mustForecast(t, f, q, 5)); diff != "" {
		t.Errorf("estimates (-without AFS +with):\n%s", diff)
	}
}

func TestFairSharingRejectsBadSettings(t *testing.T) {
	cases := map[string]AdmissionFairSharing{
		"negative half-life": {HalfLifeSeconds: -1},
		"NaN half-life":      {HalfLifeSeconds: math.NaN()},
		"Inf interval":       {HalfLifeSeconds: 1, SamplingIntervalSeconds: math.Inf(1)},
		"NaN weight":         {HalfLifeSeconds: 1, ResourceWeights: map[string]float64{"cpu": math.NaN()}},
	}
	for name, a := range cases {
		t.Run(name, func(t *testing.T) {
			q := Queue{Capacity: cpu(1000), Service: mustDeterministic(t, 1), Pending: pendingOf(cpu(1000)), AdmissionFairSharing: &a}
			if _, err := mustNew(t).Forecast(q, rand.New(rand.NewPCG(1, 2))); !errors.Is(err, ErrInvalidQueue) {
				t.Errorf("Forecast error = %v, want ErrInvalidQueue", err)
			}
		})
	}
}

// TestFairSharingProperty: random queues with AFS on — LocalQueues of
// wild usage, weights and ages, workloads naming them in and out of range —
// give waits that are finite, non-negative, within the horizon and
// ordered, or an error wrapping ErrInvalidQueue.
func TestFairSharingProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	wild := []float64{0, 1, 1e-9, 300, 3600, 1e12, math.MaxFloat64, math.Inf(1), math.NaN(), -1}
	pick := func() float64 {
		if r.IntN(3) == 0 {
			return wild[r.IntN(len(wild))]
		}
		return r.ExpFloat64() * 600
	}
	rolledOnce := 0
	for trial := range 400 {
		data := make([]byte, 40+r.IntN(120))
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		d := &decoder{data: data}
		fc := mustNew(t, WithSamples(1+r.IntN(8)), WithHorizonCount(1+r.IntN(8)), WithHorizonSeconds(3600*(1+float64(r.IntN(48)))))
		q := decodeQueue(d)
		if r.IntN(2) == 0 {
			q.WithinClusterQueue = PreemptionNever
		}
		afs := &AdmissionFairSharing{HalfLifeSeconds: math.Abs(pick()), SamplingIntervalSeconds: math.Abs(pick()),
			ResourceWeights: map[string]float64{"cpu": r.Float64() * 4, "memory": 1e-9}}
		for range r.IntN(4) {
			afs.LocalQueues = append(afs.LocalQueues, LocalQueueUsage{Consumed: pick(), SinceUpdateSeconds: pick(), Weight: pick()})
		}
		q.AdmissionFairSharing = afs
		for i := range q.Pending {
			q.Pending[i].LocalQueue = int32(r.IntN(6)) - 1
		}
		for i := range q.Running {
			q.Running[i].LocalQueue = int32(r.IntN(6)) - 1
		}
		est, err := fc.Forecast(q, rand.New(rand.NewPCG(uint64(trial), 9)))
		if err != nil {
			if !errors.Is(err, ErrInvalidQueue) {
				t.Fatalf("trial %d: error %v does not wrap ErrInvalidQueue", trial, err)
			}
			continue
		}
		checkInvariants(t, q, est, fc.horizonSeconds)
		if rolled(fuzzResult{estimates: est}) {
			rolledOnce++
		}
	}
	if rolledOnce < 50 {
		t.Fatalf("only %d of 400 trials rolled a quotable workload", rolledOnce)
	}
}
