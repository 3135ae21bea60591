package forecast

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// summary is what the uncertainty tests compare of one estimate.
type summary struct{ Mean, P50, P90 float64 }

func summarize(est []Estimate) []summary {
	out := make([]summary, len(est))
	for i, e := range est {
		out[i] = summary{e.ExpectedWaitSeconds, e.P50Seconds, e.P90Seconds}
	}
	return out
}

// TestAdmissionLatencySample: with a latency sample every admission draws
// its own latency from it. One slot is busy for exactly 100 s more
// (Deterministic service); the first pending workload is admitted at 100 +
// L₁, the second, 100 s after the first, at 200 + L₁ + L₂.
func TestAdmissionLatencySample(t *testing.T) {
	f := mustNew(t, WithSamples(4000))
	svc := mustDeterministic(t, 100)
	cases := map[string]struct {
		latency float64
		sample  []float64
		// tolerance is absolute, in seconds.
		tolerance float64
		want      []summary
	}{
		"fixed latency without a sample": {
			latency: 1,
			want:    []summary{{101, 101, 101}, {202, 202, 202}},
		},
		"a constant sample replaces the fixed latency": {
			latency: 1, sample: []float64{2, 2, 2},
			want: []summary{{102, 102, 102}, {204, 204, 204}},
		},
		// L uniform on {1, …, 5}: the first workload at 101 … 105 (mean
		// 103, P50 103, P90 105); the second at 200 + L₁ + L₂, whose sum
		// runs 2 … 10 with probabilities 1, 2, 3, 4, 5, 4, 3, 2, 1 / 25
		// (mean 206, P50 206, P90 209). One draw per replica instead of
		// per admission would give 200 + 2L: P90 210.
		"draws per admission": {
			latency: 1, sample: []float64{1, 2, 3, 4, 5}, tolerance: 0.1,
			want: []summary{{103, 103, 105}, {206, 206, 209}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q := Queue{
				Capacity:                cpu(1000),
				Running:                 []Running{{Usage: cpu(1000)}},
				Pending:                 pendingOf(cpu(1000), cpu(1000)),
				Service:                 svc,
				AdmissionLatencySeconds: tc.latency,
				AdmissionLatencySample:  tc.sample,
			}
			got := summarize(mustForecast(t, f, q, 3))
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, tc.tolerance)); diff != "" {
				t.Errorf("estimates (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFirstAttemptLatency: an untried workload that fits at the roll's
// start is admitted L − w from now, L drawn from the first-attempt
// latencies above its wait w, in place of the cycle's phase and the
// admission latency (2 s here); any other admission keeps the latter.
func TestFirstAttemptLatency(t *testing.T) {
	f := mustNew(t, WithSamples(4000))
	firstAttempt := []float64{0.4, 0.1, 0.5, 0.3, 0.2}
	cases := map[string]struct {
		pending []Pending
		sample  []float64
		preempt PreemptionPolicy
		cycle   float64
		// tolerance is absolute, in seconds.
		tolerance float64
		want      []summary
	}{
		// One admission per 0.2 s cycle, all three fit: each is a first
		// attempt, admitted at max(L, its turn t): L for the first
		// (uniform on {0.1, …, 0.5}); for the second {0.2, 0.2, 0.3, 0.4,
		// 0.5} (mean 0.32); for the third {0.4, 0.4, 0.4, 0.4, 0.5} (mean
		// 0.42). Not t + 2 s, the admission latency.
		"a burst that fits is timed by first attempts, one per cycle": {
			pending: []Pending{
				{Options: []capacity.Quantities{cpu(100)}, Quotable: true, Untried: true},
				{Options: []capacity.Quantities{cpu(100)}, Quotable: true, Untried: true},
				{Options: []capacity.Quantities{cpu(100)}, Quotable: true, Untried: true},
			},
			sample:    firstAttempt,
			cycle:     0.2,
			tolerance: 0.01,
			want:      []summary{{0.3, 0.3, 0.5}, {0.32, 0.3, 0.5}, {0.42, 0.4, 0.5}},
		},
		// The second does not fit (500 free): passed over, it waits for
		// all three others to end, each 100 s after its admission; the
		// third, behind it, is still a first attempt at 0.2 s (the
		// scheduler tried the second in the cycle before). The second is
		// then timed as any admission: 100 + max(L₁, max(L₃, 0.2)) + 2 s
		// (mean 102.384, P50 102.4, P90 102.5), where a first attempt
		// would have taken no latency past the end.
		"a workload passed over is not a first attempt": {
			pending: []Pending{
				{Options: []capacity.Quantities{cpu(100)}, Quotable: true, Untried: true},
				{Options: []capacity.Quantities{cpu(1000)}, Quotable: true, Untried: true},
				{Options: []capacity.Quantities{cpu(100)}, Quotable: true, Untried: true},
			},
			sample:    firstAttempt,
			cycle:     0.2,
			tolerance: 0.01,
			want:      []summary{{0.3, 0.3, 0.5}, {102.384, 102.4, 102.5}, {0.32, 0.3, 0.5}},
		},
		"a tried workload waits for the admission latency": {
			pending: []Pending{{Options: []capacity.Quantities{cpu(500)}, Quotable: true, WaitedSeconds: 0.25}},
			sample:  firstAttempt,
			want:    []summary{{2, 2, 2}},
		},
		// L uniform on {0.3, 0.4, 0.5}, the values above 0.25: admitted
		// at 0.05, 0.15 or 0.25 from now.
		"an untried workload draws from the latencies above its wait": {
			pending:   []Pending{{Options: []capacity.Quantities{cpu(500)}, Quotable: true, Untried: true, WaitedSeconds: 0.25}},
			sample:    firstAttempt,
			tolerance: 0.01,
			want:      []summary{{0.15, 0.15, 0.25}},
		},
		// Uniform on {0.1, …, 0.5}: mean 0.3, P50 0.3, P90 0.5.
		"no wait, the whole sample": {
			pending:   []Pending{{Options: []capacity.Quantities{cpu(500)}, Quotable: true, Untried: true, WaitedSeconds: math.NaN()}},
			sample:    firstAttempt,
			tolerance: 0.01,
			want:      []summary{{0.3, 0.3, 0.5}},
		},
		// Two priorities: the roll takes the preempting path.
		"the same with preemption on": {
			pending:   []Pending{{Options: []capacity.Quantities{cpu(500)}, Quotable: true, Untried: true, WaitedSeconds: 0.25, Priority: 1}},
			sample:    firstAttempt,
			preempt:   PreemptionLowerPriority,
			tolerance: 0.01,
			want:      []summary{{0.15, 0.15, 0.25}},
		},
		"waited as long as any first attempt took": {
			pending: []Pending{{Options: []capacity.Quantities{cpu(500)}, Quotable: true, Untried: true, WaitedSeconds: 0.5}},
			sample:  firstAttempt,
			want:    []summary{{2, 2, 2}},
		},
		"without a sample": {
			pending: []Pending{{Options: []capacity.Quantities{cpu(500)}, Quotable: true, Untried: true}},
			want:    []summary{{2, 2, 2}},
		},
		// The second one does not fit at the start (one slot of 500 free
		// after the first): it is admitted when the first ends (100 s after
		// its admission at 0.1 … 0.5), 2 s later.
		"only at the first opportunity": {
			pending: []Pending{
				{Options: []capacity.Quantities{cpu(500)}, Quotable: true, Untried: true},
				{Options: []capacity.Quantities{cpu(1000)}, Quotable: true, Untried: true},
			},
			sample:    firstAttempt,
			tolerance: 0.01,
			want:      []summary{{0.3, 0.3, 0.5}, {102.3, 102.3, 102.5}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q := Queue{
				Capacity:                  cpu(1000),
				Running:                   []Running{{Usage: cpu(500)}},
				Pending:                   tc.pending,
				Service:                   mustDeterministic(t, 100),
				AdmissionLatencySeconds:   2,
				FirstAttemptLatencySample: tc.sample,
				WithinClusterQueue:        tc.preempt,
				CyclePeriodSeconds:        tc.cycle,
			}
			got := summarize(mustForecast(t, f, q, 3))
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, tc.tolerance)); diff != "" {
				t.Errorf("estimates (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPreemptionSamplesSpreadThePreemptorsWait: a preemptor's wait is its
// reaction R plus its delay D, each drawn per preemption from its sample.
// One slot held by a low-priority workload for 100 s more; an urgent one
// preempts it. With R uniform on {0.1, 0.3} and D on {1, 2, 3} the wait
// R + D takes six values of probability 1/6 each: mean 2.2, P50 between
// 2.1 and 2.3 (2.2 as a midpoint), P90 3.3. Fixed (the samples' means:
// R 0.2, D 2 as PreemptionDelaySeconds), every replica waits 2.2.
func TestPreemptionSamplesSpreadThePreemptorsWait(t *testing.T) {
	f := mustNew(t, WithSamples(4000))
	cases := map[string]struct {
		reactions, delays []float64
		want              summary
	}{
		"sampled reaction and delay": {reactions: []float64{0.1, 0.3}, delays: []float64{1, 2, 3}, want: summary{2.2, 2.2, 3.3}},
		"fixed":                      {reactions: []float64{0.2}, want: summary{2.2, 2.2, 2.2}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q := Queue{
				Capacity:                 cpu(1000),
				Running:                  []Running{{Usage: cpu(1000)}},
				Pending:                  []Pending{{Options: []capacity.Quantities{cpu(1000)}, Quotable: true, Priority: 10}},
				Service:                  mustDeterministic(t, 100),
				AdmissionLatencySeconds:  0.5,
				PreemptionDelaySeconds:   2,
				PreemptionReactionSample: tc.reactions,
				PreemptionDelaySample:    tc.delays,
				WithinClusterQueue:       PreemptionLowerPriority,
			}
			got := summarize(mustForecast(t, f, q, 3))
			if diff := cmp.Diff([]summary{tc.want}, got, cmpopts.EquateApprox(0, 0.11)); diff != "" {
				t.Errorf("preemptor's wait (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRandomCyclePhase: a workload that fits now is admitted at the first
// admission opportunity, at once without RandomCyclePhase and U·c later
// with it, U ~ Uniform[0, 1): mean c/2, P50 c/2, P90 0.9·c.
func TestRandomCyclePhase(t *testing.T) {
	f := mustNew(t, WithSamples(4000))
	cases := map[string]struct {
		cycle       float64
		randomPhase bool
		want        summary
	}{
		"admitted at once without the phase": {cycle: 10, want: summary{0, 0, 0}},
		"uniform phase of a 10 s cycle":      {cycle: 10, randomPhase: true, want: summary{5, 5, 9}},
		"no cycle, no phase":                 {cycle: 0, randomPhase: true, want: summary{0, 0, 0}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q := Queue{
				Capacity:           cpu(1000),
				Pending:            pendingOf(cpu(1000)),
				Service:            mustDeterministic(t, 100),
				CyclePeriodSeconds: tc.cycle,
				RandomCyclePhase:   tc.randomPhase,
			}
			got := summarize(mustForecast(t, f, q, 5))[0]
			// 4000 uniform draws: the standard error of the mean is
			// 10/√(12·4000) ≈ 0.05 s; 0.25 s is five of them.
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 0.25)); diff != "" {
				t.Errorf("estimate (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBootstrapWidensTheSpreadOfASmallSample: 30 workloads wait in line
// for one slot. The last one's wait is the sum of ~30 service times, whose
// spread, under the Empirical model of 10 observations, is √30·σ; the
// bootstrap adds the uncertainty of the sample's mean (σ/√10 per service,
// 30 of them: 30σ/√10 ≈ 9.5σ against √30·σ ≈ 5.5σ), so its P90 − P50 is
// much wider while its mean stays that of the sample — as the queue's
// Service, and as the service class the workloads name (over a pooled law
// of 1 s).
func TestBootstrapWidensTheSpreadOfASmallSample(t *testing.T) {
	obs := []float64{1, 2, 3, 5, 8, 13, 21, 34, 55, 89}
	emp, err := NewEmpirical(obs)
	if err != nil {
		t.Fatal(err)
	}
	boot, err := NewBootstrap(obs)
	if err != nil {
		t.Fatal(err)
	}
	demands := make([]capacity.Quantities, 30)
	for i := range demands {
		demands[i] = cpu(1000)
	}
	f := mustNew(t, WithSamples(2000))
	cases := map[string]func(m ServiceModel) Queue{
		"the queue's service law": func(m ServiceModel) Queue {
			return Queue{Capacity: cpu(1000), Pending: pendingOf(demands...), Service: m}
		},
		"a service class": func(m ServiceModel) Queue {
			q := Queue{Capacity: cpu(1000), Pending: pendingOf(demands...), Service: mustDeterministic(t, 1), ServiceClasses: []ServiceModel{m}}
			for i := range q.Pending {
				q.Pending[i].ServiceClass = 1
			}
			return q
		},
	}
	for name, queue := range cases {
		t.Run(name, func(t *testing.T) {
			last := func(m ServiceModel) Estimate {
				est := mustForecast(t, f, queue(m), 11)
				return est[len(est)-1]
			}
			e, b := last(emp), last(boot)
			if ratio := b.ExpectedWaitSeconds / e.ExpectedWaitSeconds; math.Abs(ratio-1) > 0.05 {
				t.Errorf("bootstrap mean %.1f s, empirical %.1f s: ratio %.3f, want within 5 %%", b.ExpectedWaitSeconds, e.ExpectedWaitSeconds, ratio)
			}
			spreadE, spreadB := e.P90Seconds-e.P50Seconds, b.P90Seconds-b.P50Seconds
			if spreadB < 1.4*spreadE {
				t.Errorf("bootstrap P90 − P50 = %.1f s, empirical %.1f s: want at least 1.4 times wider", spreadB, spreadE)
			}
		})
	}
}

// TestBootstrapResample: a resample has n values, each one of the
// observations, and its model's mean and tail are those of the resample.
func TestBootstrapResample(t *testing.T) {
	obs := []float64{4, 1, 9, 1, 16}
	b, err := NewBootstrap(obs)
	if err != nil {
		t.Fatal(err)
	}
	if b.Mean() != 6.2 {
		t.Errorf("Mean() = %v, want the sample's 6.2", b.Mean())
	}
	r := rand.New(rand.NewPCG(1, 2))
	var dst Empirical
	var counts []int32
	distinct := map[float64]bool{}
	for range 200 {
		counts = b.resampleInto(&dst, counts, r)
		if len(dst.sorted) != len(obs) {
			t.Fatalf("resample has %d values, want %d", len(dst.sorted), len(obs))
		}
		want, err := NewEmpirical(dst.sorted)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(*want, dst, cmp.AllowUnexported(Empirical{})); diff != "" {
			t.Fatalf("resample's model differs from NewEmpirical of it (-want +got):\n%s", diff)
		}
		for _, x := range dst.sorted {
			if !slices.Contains(obs, x) {
				t.Fatalf("resample value %v is not an observation", x)
			}
		}
		distinct[dst.mean] = true
	}
	if len(distinct) < 10 {
		t.Errorf("200 resamples gave %d distinct means, want the resamples to vary", len(distinct))
	}
	if _, err := NewBootstrap(nil); err == nil {
		t.Error("NewBootstrap(nil) accepted an empty sample")
	}
	if _, err := NewBootstrap([]float64{1, math.NaN()}); err == nil {
		t.Error("NewBootstrap accepted NaN")
	}
}

func TestForecastRejectsBadLatencySample(t *testing.T) {
	f := mustNew(t)
	for name, sample := range map[string][]float64{
		"NaN":      {0.1, math.NaN()},
		"negative": {-0.1},
		"Inf":      {math.Inf(1)},
	} {
		t.Run(name, func(t *testing.T) {
			q := Queue{Capacity: cpu(1000), Pending: pendingOf(cpu(500)), Service: mustDeterministic(t, 1), AdmissionLatencySample: sample}
			if _, err := f.Forecast(q, rand.New(rand.NewPCG(1, 1))); !errors.Is(err, ErrInvalidQueue) {
				t.Fatalf("Forecast with a bad latency sample: err %v, want ErrInvalidQueue", err)
			}
			q.AdmissionLatencySample, q.FirstAttemptLatencySample = nil, sample
			if _, err := f.Forecast(q, rand.New(rand.NewPCG(1, 1))); !errors.Is(err, ErrInvalidQueue) {
				t.Fatalf("Forecast with a bad first-attempt latency sample: err %v, want ErrInvalidQueue", err)
			}
		})
	}
}

// TestUncertaintyProperties: with every source of uncertainty on (latency
// sample, random cycle phase, bootstrapped service) and preemption,
// arrivals and both policies, random queues give estimates that are
// finite, non-negative, within the horizon and ordered (checkInvariants),
// and the same seed gives the same forecast.
func TestUncertaintyProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for trial := range 120 {
		obs := make([]float64, 1+r.IntN(40))
		for i := range obs {
			obs[i] = []float64{0, 0.01, 1, 50}[r.IntN(4)] * r.ExpFloat64()
		}
		boot, err := NewBootstrap(obs)
		if err != nil {
			t.Fatal(err)
		}
		if boot.Mean() == 0 {
			continue
		}
		latencies := make([]float64, r.IntN(5))
		for i := range latencies {
			latencies[i] = []float64{0, 0.05, 3}[r.IntN(3)] * r.Float64()
		}
		q := Queue{
			Capacity:                cpuMem(int64(1000+r.IntN(8000)), int64(1+r.IntN(16))*gi),
			Service:                 boot,
			Policy:                  Policy(r.IntN(2)),
			WithinClusterQueue:      PreemptionPolicy(r.IntN(3)),
			CyclePeriodSeconds:      []float64{0, 0.01, 2}[r.IntN(3)],
			RandomCyclePhase:        r.IntN(2) == 0,
			AdmissionLatencySeconds: []float64{0, 1}[r.IntN(2)],
			AdmissionLatencySample:  latencies,
			PreemptedRestart:        r.IntN(2) == 0,
		}
		for range r.IntN(4) {
			q.FirstAttemptLatencySample = append(q.FirstAttemptLatencySample, 0.5*r.Float64())
		}
		demand := func() capacity.Quantities {
			return cpuMem(int64(100+r.IntN(3000)), int64(r.IntN(4))*gi)
		}
		for range r.IntN(12) {
			q.Running = append(q.Running, Running{Usage: demand(), AgeSeconds: 50 * r.Float64(), Priority: int32(r.IntN(3)), MaxExecutionSeconds: []float64{0, 30}[r.IntN(2)]})
		}
		n := r.IntN(150)
		for i := range n {
			q.Pending = append(q.Pending, Pending{ID: fmt.Sprint(i), Options: []capacity.Quantities{demand()}, Quotable: r.IntN(10) > 0, Priority: int32(2 - 3*i/max(n, 1)),
				Untried: r.IntN(2) == 0, WaitedSeconds: []float64{0, 0.2, math.NaN(), math.Inf(1), -1}[r.IntN(5)]})
		}
		for range r.IntN(3) {
			q.Arrivals = append(q.Arrivals, Arrival{RatePerSecond: 0.5 * r.Float64(), Options: []capacity.Quantities{demand()}, Priority: int32(r.IntN(4))})
		}
		f := mustNew(t, WithSamples(1+r.IntN(64)), WithHorizonCount(1+r.IntN(64)), WithHorizonSeconds(3600))
		a := mustForecast(t, f, q, uint64(trial))
		b := mustForecast(t, f, q, uint64(trial))
		if diff := cmp.Diff(a, b); diff != "" {
			t.Fatalf("trial %d: the same seed gave different forecasts (-first +second):\n%s", trial, diff)
		}
	}
}
