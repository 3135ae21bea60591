package forecast

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

var (
	cpuFR = capacity.FlavorResource{Flavor: "default", Resource: "cpu"}
	memFR = capacity.FlavorResource{Flavor: "default", Resource: "memory"}
)

const gi = int64(1) << 30

func cpu(milli int64) capacity.Quantities { return capacity.Quantities{cpuFR: milli} }

func cpuMem(milli, bytes int64) capacity.Quantities {
	return capacity.Quantities{cpuFR: milli, memFR: bytes}
}

func mustExponential(t testing.TB, mean float64) Exponential {
	t.Helper()
	e, err := NewExponential(mean)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func mustDeterministic(t testing.TB, s float64) Deterministic {
	t.Helper()
	d, err := NewDeterministic(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func mustNew(t testing.TB, opts ...Option) *Forecaster {
	t.Helper()
	f, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func mustForecast(t testing.TB, f *Forecaster, q Queue, seed uint64) []Estimate {
	t.Helper()
	est, err := f.Forecast(q, rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)))
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, q, est, f.horizonSeconds)
	return est
}

// checkInvariants asserts what every forecast promises.
func checkInvariants(t testing.TB, q Queue, est []Estimate, horizon float64) {
	t.Helper()
	if len(est) != len(q.Pending) {
		t.Fatalf("got %d estimates for %d pending", len(est), len(q.Pending))
	}
	for i, e := range est {
		p := q.Pending[i]
		if e.ID != p.ID || e.Quotable != p.Quotable {
			t.Fatalf("estimate %d is %q/%v, want %q/%v", i, e.ID, e.Quotable, p.ID, p.Quotable)
		}
		for name, x := range map[string]float64{
			"expected": e.ExpectedWaitSeconds, "P50": e.P50Seconds, "P90": e.P90Seconds, "offset": e.AdmissionOffsetSeconds,
		} {
			if !(x >= 0) || !(x <= horizon) {
				t.Fatalf("estimate %d %s = %v, want in [0, %v]", i, name, x, horizon)
			}
		}
		if e.P50Seconds > e.P90Seconds {
			t.Fatalf("estimate %d: P50 %v > P90 %v", i, e.P50Seconds, e.P90Seconds)
		}
		if e.AdmissionOffsetSeconds != e.ExpectedWaitSeconds {
			t.Fatalf("estimate %d: offset %v != expected %v", i, e.AdmissionOffsetSeconds, e.ExpectedWaitSeconds)
		}
		if e.Quotable != p.Quotable {
			t.Fatalf("estimate %d: Quotable %v, pending %v", i, e.Quotable, p.Quotable)
		}
		if !p.Quotable && (e.ExpectedWaitSeconds != 0 || e.P90Seconds != 0 || e.Clamped || e.Extrapolated) {
			t.Fatalf("unfeasible estimate %d = %+v", i, e)
		}
	}
}

func pendingOf(demands ...capacity.Quantities) []Pending {
	out := make([]Pending, len(demands))
	for i, d := range demands {
		out[i] = Pending{ID: fmt.Sprintf("w%d", i), Options: []capacity.Quantities{d}, Quotable: true}
	}
	return out
}

func waits(est []Estimate) []float64 {
	out := make([]float64, len(est))
	for i, e := range est {
		out[i] = e.ExpectedWaitSeconds
	}
	return out
}

func TestNewRejectsBadOptions(t *testing.T) {
	cases := map[string]Option{
		"zero samples":          WithSamples(0),
		"too many samples":      WithSamples(MaxSamples + 1),
		"zero horizon count":    WithHorizonCount(0),
		"huge horizon count":    WithHorizonCount(MaxHorizonCount + 1),
		"zero horizon seconds":  WithHorizonSeconds(0),
		"NaN horizon seconds":   WithHorizonSeconds(math.NaN()),
		"Inf horizon seconds":   WithHorizonSeconds(math.Inf(1)),
		"negative horizon secs": WithHorizonSeconds(-1),
		"nil option":            nil,
	}
	for name, opt := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := New(opt); !errors.Is(err, ErrInvalidOption) {
				t.Fatalf("New error = %v, want ErrInvalidOption", err)
			}
		})
	}
	f := mustNew(t)
	if f.samples != DefaultSamples || f.horizonCount != DefaultHorizonCount || f.horizonSeconds != DefaultHorizonSeconds {
		t.Errorf("defaults = %+v", *f)
	}
	f = mustNew(t, WithSamples(7), WithHorizonCount(9), WithHorizonSeconds(60))
	if f.samples != 7 || f.horizonCount != 9 || f.horizonSeconds != 60 {
		t.Errorf("options not applied: %+v", *f)
	}
}

// badMean is a service model whose mean cannot be used.
type badMean struct{ mean float64 }

func (b badMean) Sample(*rand.Rand) float64            { return 1 }
func (b badMean) Residual(float64, *rand.Rand) float64 { return 1 }
func (b badMean) Mean() float64                        { return b.mean }

func TestForecastRejectsBadQueue(t *testing.T) {
	f := mustNew(t)
	good := Queue{Capacity: cpu(1000), Pending: pendingOf(cpu(500)), Service: mustExponential(t, 10)}
	r := rand.New(rand.NewPCG(1, 1))
	cases := map[string]struct {
		edit func(*Queue)
		rng  *rand.Rand
	}{
		"nil service":        {edit: func(q *Queue) { q.Service = nil }, rng: r},
		"zero-value model":   {edit: func(q *Queue) { q.Service = Exponential{} }, rng: r},
		"NaN mean":           {edit: func(q *Queue) { q.Service = badMean{math.NaN()} }, rng: r},
		"Inf mean":           {edit: func(q *Queue) { q.Service = badMean{math.Inf(1)} }, rng: r},
		"unknown policy":     {edit: func(q *Queue) { q.Policy = 7 }, rng: r},
		"negative cycle":     {edit: func(q *Queue) { q.CyclePeriodSeconds = -1 }, rng: r},
		"NaN cycle":          {edit: func(q *Queue) { q.CyclePeriodSeconds = math.NaN() }, rng: r},
		"Inf latency":        {edit: func(q *Queue) { q.AdmissionLatencySeconds = math.Inf(1) }, rng: r},
		"negative latency":   {edit: func(q *Queue) { q.AdmissionLatencySeconds = -0.5 }, rng: r},
		"NaN arrival rate":   {edit: func(q *Queue) { q.Arrivals = []Arrival{{RatePerSecond: math.NaN()}} }, rng: r},
		"negative arrival":   {edit: func(q *Queue) { q.Arrivals = []Arrival{{RatePerSecond: -1}} }, rng: r},
		"nil random source":  {edit: func(*Queue) {}, rng: nil},
		"Inf arrival rate":   {edit: func(q *Queue) { q.Arrivals = []Arrival{{RatePerSecond: math.Inf(1)}} }, rng: r},
		"negative until":     {edit: func(q *Queue) { q.Arrivals = []Arrival{{RatePerSecond: 1, UntilSeconds: -1}} }, rng: r},
		"NaN until":          {edit: func(q *Queue) { q.Arrivals = []Arrival{{RatePerSecond: 1, UntilSeconds: math.NaN()}} }, rng: r},
		"nil priority model": {edit: func(q *Queue) { q.ServiceByPriority = map[int32]ServiceModel{3: nil} }, rng: r},
		"bad priority model": {edit: func(q *Queue) { q.ServiceByPriority = map[int32]ServiceModel{3: badMean{math.Inf(1)}} }, rng: r},
		"nil class model":    {edit: func(q *Queue) { q.ServiceClasses = []ServiceModel{mustExponential(t, 1), nil} }, rng: r},
		"bad class model":    {edit: func(q *Queue) { q.ServiceClasses = []ServiceModel{badMean{0}} }, rng: r},
		"policy below range": {edit: func(q *Queue) { q.Policy = -1 }, rng: r},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q := good
			tc.edit(&q)
			if _, err := f.Forecast(q, tc.rng); !errors.Is(err, ErrInvalidQueue) {
				t.Fatalf("Forecast error = %v, want ErrInvalidQueue", err)
			}
		})
	}
}

// TestDeterministicScenarios checks hand-computed waits. With a
// deterministic model every replica is the same, so the figures are exact.
func TestDeterministicScenarios(t *testing.T) {
	f := mustNew(t, WithSamples(8))
	twoFlavors := func(f1, f2 int64) capacity.Quantities {
		return capacity.Quantities{{Flavor: "f1", Resource: "cpu"}: f1, {Flavor: "f2", Resource: "cpu"}: f2}
	}
	onF1 := func(m int64) capacity.Quantities { return capacity.Quantities{{Flavor: "f1", Resource: "cpu"}: m} }
	onF2 := func(m int64) capacity.Quantities { return capacity.Quantities{{Flavor: "f2", Resource: "cpu"}: m} }
	cases := map[string]struct {
		queue       Queue
		want        []float64
		wantClamped []bool
	}{
		// 2 CPU, one running workload holds 1.5 CPU for 10 more seconds.
		// BestEffortFIFO lets the 500m workload B pass the 1-CPU head A.
		"best effort passes a blocked head": {
			queue: Queue{
				Capacity: cpu(2000),
				Running:  []Running{{Usage: cpu(1500), AgeSeconds: 30}},
				Pending:  pendingOf(cpu(1000), cpu(500)),
				Service:  mustDeterministic(t, 40),
			},
			want: []float64{10, 0},
		},
		"strict blocks behind the head": {
			queue: Queue{
				Capacity: cpu(2000),
				Running:  []Running{{Usage: cpu(1500), AgeSeconds: 30}},
				Pending:  pendingOf(cpu(1000), cpu(500)),
				Service:  mustDeterministic(t, 40),
				Policy:   StrictFIFO,
			},
			want: []float64{10, 10},
		},
		// One slot; each admitted workload runs 100 s but is bounded by its
		// maximum execution time of 5 s.
		"max execution bounds fresh service": {
			queue: Queue{
				Capacity: cpu(1000),
				Pending: []Pending{
					{ID: "a", Options: []capacity.Quantities{cpu(1000)}, Quotable: true, MaxExecutionSeconds: 5},
					{ID: "b", Options: []capacity.Quantities{cpu(1000)}, Quotable: true, MaxExecutionSeconds: 5},
					{ID: "c", Options: []capacity.Quantities{cpu(1000)}, Quotable: true, MaxExecutionSeconds: 5},
				},
				Service: mustDeterministic(t, 100),
			},
			want: []float64{0, 5, 10},
		},
		"running past its max execution ends now": {
			queue: Queue{
				Capacity: cpu(1000),
				Running:  []Running{{Usage: cpu(1000), AgeSeconds: 40, MaxExecutionSeconds: 30}},
				Pending:  pendingOf(cpu(1000)),
				Service:  mustDeterministic(t, 100),
			},
			want: []float64{0},
		},
		"running bounded by max execution": {
			queue: Queue{
				Capacity: cpu(1000),
				Running:  []Running{{Usage: cpu(1000), AgeSeconds: 20, MaxExecutionSeconds: 30}},
				Pending:  pendingOf(cpu(1000)),
				Service:  mustDeterministic(t, 100),
			},
			want: []float64{10},
		},
		"NaN max execution means no bound": {
			queue: Queue{
				Capacity: cpu(1000),
				Running:  []Running{{Usage: cpu(1000), AgeSeconds: 10, MaxExecutionSeconds: math.NaN()}},
				Pending:  pendingOf(cpu(1000)),
				Service:  mustDeterministic(t, 40),
			},
			want: []float64{30},
		},
		// Plenty of room, but one admission per 2 s cycle and 0.5 s from
		// decision to admission.
		"cycle period and admission latency": {
			queue: Queue{
				Capacity:                cpu(10000),
				Pending:                 pendingOf(cpu(1000), cpu(1000), cpu(1000), cpu(1000)),
				Service:                 mustDeterministic(t, 60),
				CyclePeriodSeconds:      2,
				AdmissionLatencySeconds: 0.5,
			},
			want: []float64{0.5, 2.5, 4.5, 6.5},
		},
		// Latency delays the start of service: the slot frees at 0+1+10.
		"latency delays the release": {
			queue: Queue{
				Capacity:                cpu(1000),
				Pending:                 pendingOf(cpu(1000), cpu(1000)),
				Service:                 mustDeterministic(t, 10),
				AdmissionLatencySeconds: 1,
			},
			want: []float64{1, 12},
		},
		// Unfeasible workloads are skipped entirely, even under StrictFIFO.
		"unfeasible skipped under strict": {
			queue: Queue{
				Capacity: cpu(1000),
				Pending: []Pending{
					{ID: "u", Options: []capacity.Quantities{cpu(20000)}, Quotable: false},
					{ID: "a", Options: []capacity.Quantities{cpu(1000)}, Quotable: true},
				},
				Service: mustDeterministic(t, 10),
				Policy:  StrictFIFO,
			},
			want: []float64{0, 0},
		},
		// The first option (flavor f1) is full; the second (f2) fits now.
		"second flavor option is taken": {
			queue: Queue{
				Capacity: twoFlavors(1000, 1000),
				Running:  []Running{{Usage: onF1(1000), AgeSeconds: 30}},
				Pending: []Pending{
					{ID: "a", Options: []capacity.Quantities{onF1(500), onF2(500)}, Quotable: true},
					{ID: "b", Options: []capacity.Quantities{onF1(500), onF2(500)}, Quotable: true},
					{ID: "c", Options: []capacity.Quantities{onF1(500), onF2(500)}, Quotable: true},
				},
				Service: mustDeterministic(t, 40),
			},
			want: []float64{0, 0, 10},
		},
		// 4 CPU, 2Gi: memory is full, cpu is not. A needs memory, B only cpu.
		"memory is the bottleneck": {
			queue: Queue{
				Capacity: cpuMem(4000, 2*gi),
				Running: []Running{
					{Usage: cpuMem(500, gi/2), AgeSeconds: 30},
					{Usage: cpuMem(500, gi/2), AgeSeconds: 20},
					{Usage: cpuMem(500, gi/2), AgeSeconds: 10},
					{Usage: cpuMem(500, gi/2), AgeSeconds: 0},
				},
				Pending: pendingOf(cpuMem(500, gi/2), cpuMem(500, gi/2), cpu(2000)),
				Service: mustDeterministic(t, 40),
			},
			want: []float64{10, 20, 0},
		},
		// Quotable by the caller, but no option fits the capacity given:
		// never admitted within the horizon. BestEffortFIFO goes around it.
		"never fitting workload is clamped, best effort": {
			queue: Queue{
				Capacity: cpu(1000),
				Pending:  pendingOf(cpu(5000), capacity.Quantities{memFR: 1}, cpu(1000)),
				Service:  mustDeterministic(t, 10),
			},
			want:        []float64{DefaultHorizonSeconds, DefaultHorizonSeconds, 0},
			wantClamped: []bool{true, true, false},
		},
		"never fitting head blocks strict": {
			queue: Queue{
				Capacity: cpu(1000),
				Pending:  pendingOf(cpu(5000), cpu(1000)),
				Service:  mustDeterministic(t, 10),
				Policy:   StrictFIFO,
			},
			want:        []float64{DefaultHorizonSeconds, DefaultHorizonSeconds},
			wantClamped: []bool{true, true},
		},
		// An Unlimited dimension never constrains.
		"unlimited dimension": {
			queue: Queue{
				Capacity: capacity.Quantities{cpuFR: 1000, memFR: capacity.Unlimited},
				Running:  []Running{{Usage: cpuMem(0, 1<<60), AgeSeconds: 1}},
				Pending:  pendingOf(cpuMem(1000, 1<<62)),
				Service:  mustDeterministic(t, 10),
			},
			want: []float64{0},
		},
		"empty queue": {
			queue: Queue{Capacity: cpu(1000), Service: mustDeterministic(t, 10)},
			want:  []float64{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			est := mustForecast(t, f, tc.queue, 1)
			for i, e := range est {
				if !approx(e.ExpectedWaitSeconds, tc.want[i], 1e-9) || !approx(e.P50Seconds, tc.want[i], 1e-9) || !approx(e.P90Seconds, tc.want[i], 1e-9) {
					t.Errorf("%s: wait/P50/P90 = %v/%v/%v, want %v", e.ID, e.ExpectedWaitSeconds, e.P50Seconds, e.P90Seconds, tc.want[i])
				}
				wantClamped := tc.wantClamped != nil && tc.wantClamped[i]
				if e.Clamped != wantClamped {
					t.Errorf("%s: clamped = %v, want %v", e.ID, e.Clamped, wantClamped)
				}
			}
		})
	}
}

func TestRunningBoundedByMaxExecutionUnderExponential(t *testing.T) {
	// Mean 1000 s, but the running workload is 20 s into a 30 s bound: it
	// ends within 10 s, almost always at exactly 10 s.
	f := mustNew(t, WithSamples(512))
	q := Queue{
		Capacity: cpu(1000),
		Running:  []Running{{Usage: cpu(1000), AgeSeconds: 20, MaxExecutionSeconds: 30}},
		Pending:  pendingOf(cpu(1000)),
		Service:  mustExponential(t, 1000),
	}
	e := mustForecast(t, f, q, 3)[0]
	if e.P90Seconds > 10 || e.ExpectedWaitSeconds > 10 || e.ExpectedWaitSeconds < 9.5 {
		t.Errorf("estimate = %+v, want mean in [9.5, 10] and P90 ≤ 10", e)
	}
}

// erlangCDF is P(T ≤ x) for T ~ Erlang(n, rate): 1 − Σ_{i<n} e^{−λx}(λx)^i/i!.
func erlangCDF(n int, rate, x float64) float64 {
	lx := rate * x
	term, sum := math.Exp(-lx), 0.0
	for i := range n {
		if i > 0 {
			term *= lx / float64(i)
		}
		sum += term
	}
	return 1 - sum
}

func erlangQuantile(n int, rate, p float64) float64 {
	lo, hi := 0.0, 100*float64(n)/rate
	for range 200 {
		mid := (lo + hi) / 2
		if erlangCDF(n, rate, mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// busyQueue is k = capacity/demand servers, all busy, exponential service,
// n identical pending workloads.
func busyQueue(t testing.TB, k, n int, meanService float64) Queue {
	q := Queue{Capacity: cpu(int64(k) * 500), Service: mustExponential(t, meanService)}
	for i := range k {
		q.Running = append(q.Running, Running{Usage: cpu(500), AgeSeconds: float64(7 * i)})
	}
	for range n {
		q.Pending = append(q.Pending, pendingOf(cpu(500))[0])
	}
	return q
}

// TestMatchesErlangWhenAllBusy: with exponential service, identical
// demands, all k servers busy and no cycle cap, the wait of the n-th in
// line (0-based) is Erlang(n+1, k/E[S]).
func TestMatchesErlangWhenAllBusy(t *testing.T) {
	const k, meanS = 4, 20.0
	rate := k / meanS
	f := mustNew(t, WithSamples(20000))
	est := mustForecast(t, f, busyQueue(t, k, 16, meanS), 11)
	for n, e := range est {
		mean := float64(n+1) / rate
		p50 := erlangQuantile(n+1, rate, 0.5)
		p90 := erlangQuantile(n+1, rate, 0.9)
		if !approx(e.ExpectedWaitSeconds, mean, 0.02*mean) {
			t.Errorf("n=%d: mean %v, want %v", n, e.ExpectedWaitSeconds, mean)
		}
		if !approx(e.P50Seconds, p50, 0.03*p50) {
			t.Errorf("n=%d: P50 %v, want %v", n, e.P50Seconds, p50)
		}
		if !approx(e.P90Seconds, p90, 0.03*p90) {
			t.Errorf("n=%d: P90 %v, want %v", n, e.P90Seconds, p90)
		}
		if e.Extrapolated || e.Clamped {
			t.Errorf("n=%d: flags %+v", n, e)
		}
	}
}

// TestExtrapolationMatchesErlang: positions beyond the count horizon come
// from the simulated throughput and still follow Erlang(n+1, k/E[S]).
func TestExtrapolationMatchesErlang(t *testing.T) {
	const k, meanS = 4, 20.0
	rate := k / meanS
	f := mustNew(t, WithSamples(4000), WithHorizonCount(16))
	est := mustForecast(t, f, busyQueue(t, k, 400, meanS), 12)
	for _, n := range []int{16, 17, 50, 100, 399} {
		e := est[n]
		if !e.Extrapolated {
			t.Fatalf("n=%d not extrapolated", n)
		}
		mean := float64(n+1) / rate
		p90 := erlangQuantile(n+1, rate, 0.9)
		if !approx(e.ExpectedWaitSeconds, mean, 0.04*mean) {
			t.Errorf("n=%d: mean %v, want %v", n, e.ExpectedWaitSeconds, mean)
		}
		if !approx(e.P90Seconds, p90, 0.05*p90) {
			t.Errorf("n=%d: P90 %v, want %v", n, e.P90Seconds, p90)
		}
	}
	if est[15].Extrapolated {
		t.Errorf("position 15 is inside the horizon")
	}
}

// TestExtrapolationMatchesFullRoll compares a short horizon with rolling the
// whole queue, on a 2-D queue with two demand shapes.
func TestExtrapolationMatchesFullRoll(t *testing.T) {
	emp, err := NewEmpirical([]float64{5, 10, 12, 20, 30, 45, 60, 90})
	if err != nil {
		t.Fatal(err)
	}
	q := Queue{Capacity: cpuMem(8000, 16*gi), Service: emp}
	for i := range 6 {
		q.Running = append(q.Running, Running{Usage: cpuMem(1000, 2*gi), AgeSeconds: float64(4 * i)})
	}
	for i := range 300 {
		d := cpuMem(1000, 2*gi)
		if i%3 == 0 {
			d = cpuMem(2000, 2*gi)
		}
		q.Pending = append(q.Pending, Pending{ID: fmt.Sprint(i), Options: []capacity.Quantities{d}, Quotable: true})
	}
	short := mustForecast(t, mustNew(t, WithSamples(1000), WithHorizonCount(80)), q, 5)
	full := mustForecast(t, mustNew(t, WithSamples(1000), WithHorizonCount(300)), q, 5)
	// Every third workload is large and is passed by small ones behind it;
	// the per-shape lateness measured in the roll carries that over.
	for _, n := range []int{129, 130, 150, 151, 200, 201, 299} {
		if !short[n].Extrapolated || full[n].Extrapolated {
			t.Fatalf("n=%d: extrapolated flags %v/%v", n, short[n].Extrapolated, full[n].Extrapolated)
		}
		if !approx(short[n].ExpectedWaitSeconds, full[n].ExpectedWaitSeconds, 0.05*full[n].ExpectedWaitSeconds) {
			t.Errorf("n=%d: extrapolated mean %v, rolled %v", n, short[n].ExpectedWaitSeconds, full[n].ExpectedWaitSeconds)
		}
		if !approx(short[n].P90Seconds, full[n].P90Seconds, 0.1*full[n].P90Seconds) {
			t.Errorf("n=%d: extrapolated P90 %v, rolled %v", n, short[n].P90Seconds, full[n].P90Seconds)
		}
	}
}

func TestExtrapolationWithCycleCap(t *testing.T) {
	// Ample capacity: only the 1 s cycle limits admissions, so position n
	// waits exactly n seconds, inside and beyond the horizon.
	f := mustNew(t, WithSamples(16), WithHorizonCount(10))
	q := Queue{Capacity: cpu(1 << 40), Service: mustExponential(t, 30), CyclePeriodSeconds: 1}
	q.Pending = pendingOf(make([]capacity.Quantities, 50)...)
	for i := range q.Pending {
		q.Pending[i].Options = []capacity.Quantities{cpu(100)}
	}
	est := mustForecast(t, f, q, 2)
	for _, n := range []int{0, 9, 10, 30, 49} {
		if !approx(est[n].ExpectedWaitSeconds, float64(n), 1e-6) {
			t.Errorf("n=%d: wait %v, want %d", n, est[n].ExpectedWaitSeconds, n)
		}
	}
}

func TestStrictBarrierBeyondHorizon(t *testing.T) {
	f := mustNew(t, WithSamples(8), WithHorizonCount(2))
	q := Queue{
		Capacity: cpu(1000),
		Pending:  pendingOf(cpu(1000), cpu(1000), cpu(1000), cpu(9000), cpu(1000)),
		Service:  mustDeterministic(t, 10),
		Policy:   StrictFIFO,
	}
	est := mustForecast(t, f, q, 1)
	for i, wantClamped := range []bool{false, false, false, true, true} {
		if est[i].Clamped != wantClamped {
			t.Errorf("%d: clamped %v, want %v (%+v)", i, est[i].Clamped, wantClamped, est[i])
		}
	}
	if est[4].ExpectedWaitSeconds != DefaultHorizonSeconds {
		t.Errorf("behind the barrier: %v", est[4].ExpectedWaitSeconds)
	}
	q.Policy = BestEffortFIFO
	est = mustForecast(t, f, q, 1)
	if est[4].Clamped || est[4].ExpectedWaitSeconds > 100 {
		t.Errorf("best effort goes around the never-fitting workload: %+v", est[4])
	}
}

func TestArrivals(t *testing.T) {
	// One slot, service 10 s, ten pending of priority 0.
	base := Queue{
		Capacity: cpu(1000),
		Pending:  pendingOf(make([]capacity.Quantities, 10)...),
		Service:  mustDeterministic(t, 10),
	}
	for i := range base.Pending {
		base.Pending[i].Options = []capacity.Quantities{cpu(1000)}
	}
	f := mustNew(t, WithSamples(400))
	plain := mustForecast(t, f, base, 1)
	for i, e := range plain {
		if e.ExpectedWaitSeconds != float64(10*i) {
			t.Fatalf("no arrivals: %d waits %v, want %d", i, e.ExpectedWaitSeconds, 10*i)
		}
	}

	t.Run("lower priority never passes identical demands", func(t *testing.T) {
		for _, policy := range []Policy{BestEffortFIFO, StrictFIFO} {
			q := base
			q.Policy = policy
			q.Arrivals = []Arrival{{RatePerSecond: 0.5, Options: []capacity.Quantities{cpu(1000)}, Priority: -1}}
			for i, e := range mustForecast(t, f, q, 2) {
				if e.ExpectedWaitSeconds != plain[i].ExpectedWaitSeconds {
					t.Errorf("%v: %d waits %v, want %v", policy, i, e.ExpectedWaitSeconds, plain[i].ExpectedWaitSeconds)
				}
			}
		}
	})
	t.Run("higher priority at half load about halves throughput", func(t *testing.T) {
		for _, policy := range []Policy{BestEffortFIFO, StrictFIFO} {
			q := base
			q.Policy = policy
			q.Arrivals = []Arrival{{RatePerSecond: 0.05, Options: []capacity.Quantities{cpu(1000)}, Priority: 5}}
			est := mustForecast(t, f, q, 3)
			ratio := est[9].ExpectedWaitSeconds / plain[9].ExpectedWaitSeconds
			if ratio < 1.5 || ratio > 2.6 {
				t.Errorf("%v: last wait %v vs %v without arrivals (ratio %.2f)", policy, est[9].ExpectedWaitSeconds, plain[9].ExpectedWaitSeconds, ratio)
			}
		}
	})
	t.Run("higher priority overload is clamped, finite", func(t *testing.T) {
		q := base
		q.Arrivals = []Arrival{{RatePerSecond: 0.2, Options: []capacity.Quantities{cpu(1000)}, Priority: 5}}
		g := mustNew(t, WithSamples(32), WithHorizonSeconds(3600))
		est := mustForecast(t, g, q, 4)
		if !est[9].Clamped || est[9].ExpectedWaitSeconds < 3000 {
			t.Errorf("overloaded by priority arrivals: %+v", est[9])
		}
	})
	// The same overload for the first 100 s only: about 20 arrivals of
	// 10 s each pass the ten pending workloads, whose last one then waits
	// about 90 + 200 s, not until the horizon.
	t.Run("higher priority overload that stops lets the queue drain", func(t *testing.T) {
		q := base
		q.Arrivals = []Arrival{{RatePerSecond: 0.2, Options: []capacity.Quantities{cpu(1000)}, Priority: 5, UntilSeconds: 100}}
		g := mustNew(t, WithSamples(400), WithHorizonSeconds(3600))
		last := mustForecast(t, g, q, 4)[9]
		if last.Clamped || last.ExpectedWaitSeconds < 250 || last.ExpectedWaitSeconds > 330 {
			t.Errorf("arrivals stopping at 100 s: last workload %+v, want an expected wait near 290 s, not clamped", last)
		}
	})
	t.Run("arrivals that stop before the first one change nothing", func(t *testing.T) {
		q := base
		q.Arrivals = []Arrival{{RatePerSecond: 0.2, Options: []capacity.Quantities{cpu(1000)}, Priority: 5, UntilSeconds: 1e-12}}
		for i, e := range mustForecast(t, f, q, 6) {
			if e.ExpectedWaitSeconds != plain[i].ExpectedWaitSeconds {
				t.Errorf("%d waits %v, want %v", i, e.ExpectedWaitSeconds, plain[i].ExpectedWaitSeconds)
			}
		}
	})
	t.Run("class that never fits is ignored", func(t *testing.T) {
		q := base
		q.Arrivals = []Arrival{{RatePerSecond: 5, Options: []capacity.Quantities{cpu(9000)}, Priority: 5}, {RatePerSecond: 0, Options: []capacity.Quantities{cpu(1000)}, Priority: 5}}
		for i, e := range mustForecast(t, f, q, 5) {
			if e.ExpectedWaitSeconds != plain[i].ExpectedWaitSeconds {
				t.Errorf("%d waits %v, want %v", i, e.ExpectedWaitSeconds, plain[i].ExpectedWaitSeconds)
			}
		}
	})
}

// threeBehindOneRunning is one CPU held by a running workload of priority
// 5, age 1 s, with three pending workloads of priority 0 (b0, b1, b2) that
// each take the CPU, and a deterministic service law of 10 s.
func threeBehindOneRunning(t *testing.T) Queue {
	full := []capacity.Quantities{cpu(1000)}
	return Queue{
		Capacity: cpu(1000),
		Running:  []Running{{Usage: cpu(1000), AgeSeconds: 1, Priority: 5}},
		Pending: []Pending{
			{ID: "b0", Options: full, Quotable: true},
			{ID: "b1", Options: full, Quotable: true},
			{ID: "b2", Options: full, Quotable: true},
		},
		Service: mustDeterministic(t, 10),
	}
}

// TestServiceByPriority: running, pending and arriving workloads draw
// their own priority's service law when the queue has one, the pooled law
// otherwise. Deterministic laws make the waits exact.
func TestServiceByPriority(t *testing.T) {
	f := mustNew(t, WithSamples(8))
	full := []capacity.Quantities{cpu(1000)}
	base := threeBehindOneRunning(t)
	cases := map[string]struct {
		byPriority map[int32]ServiceModel
		want       []float64
	}{
		"pooled law only": {
			want: []float64{9, 19, 29},
		},
		"the batch priority's own law": {
			byPriority: map[int32]ServiceModel{0: mustDeterministic(t, 20)},
			want:       []float64{9, 29, 49},
		},
		"the running workload's priority: its residual": {
			byPriority: map[int32]ServiceModel{5: mustDeterministic(t, 3)},
			want:       []float64{2, 12, 22},
		},
		"a priority nobody has changes nothing": {
			byPriority: map[int32]ServiceModel{7: mustDeterministic(t, 1000)},
			want:       []float64{9, 19, 29},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q := base
			q.ServiceByPriority = tc.byPriority
			if diff := cmp.Diff(tc.want, waits(mustForecast(t, f, q, 1)), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("expected waits (-want +got):\n%s", diff)
			}
		})
	}

	// Higher-priority arrivals pass the batch workloads: the longer their
	// own service, the longer the last batch workload waits.
	arriving := func(service float64) float64 {
		q := base
		q.Arrivals = []Arrival{{RatePerSecond: 0.02, Options: full, Priority: 9}}
		q.ServiceByPriority = map[int32]ServiceModel{9: mustDeterministic(t, service)}
		return mustForecast(t, mustNew(t, WithSamples(400)), q, 2)[2].ExpectedWaitSeconds
	}
	if short, long := arriving(1), arriving(20); !(long > short+5) {
		t.Errorf("last batch wait with arrivals of 1 s: %v, of 20 s: %v; want the latter longer by more than 5 s", short, long)
	}
}

// TestServiceClasses: a running, pending or arriving workload whose
// ServiceClass names one of Queue.ServiceClasses draws its service from
// it, over its priority's law and the pooled one; a ServiceClass that
// names none changes nothing. Deterministic laws make the waits exact.
func TestServiceClasses(t *testing.T) {
	f := mustNew(t, WithSamples(8))
	full := []capacity.Quantities{cpu(1000)}
	base := func() Queue {
		q := threeBehindOneRunning(t)
		q.ServiceClasses = []ServiceModel{mustDeterministic(t, 20), mustDeterministic(t, 3)}
		return q
	}
	cases := map[string]struct {
		edit func(*Queue)
		want []float64
	}{
		"no workload names a class": {
			edit: func(*Queue) {},
			want: []float64{9, 19, 29},
		},
		"a pending workload's class": {
			edit: func(q *Queue) { q.Pending[1].ServiceClass = 1 },
			want: []float64{9, 19, 39},
		},
		"the running workload's class: its residual": {
			edit: func(q *Queue) { q.Running[0].ServiceClass = 2 },
			want: []float64{2, 12, 22},
		},
		"a class over the priority's law": {
			edit: func(q *Queue) {
				q.ServiceByPriority = map[int32]ServiceModel{0: mustDeterministic(t, 100)}
				q.Pending[0].ServiceClass, q.Pending[1].ServiceClass = 2, 2
			},
			want: []float64{9, 12, 15},
		},
		"classes out of range name none": {
			edit: func(q *Queue) {
				q.Running[0].ServiceClass, q.Pending[0].ServiceClass, q.Pending[1].ServiceClass = 3, -1, math.MaxInt32
			},
			want: []float64{9, 19, 29},
		},
		"a preemptor's class": {
			// b0 of priority 9 preempts the running workload of
			// priority 5 at once (no latency) and runs 3 s; the victim
			// goes back ahead of b1 and b2 with its 9 s left.
			edit: func(q *Queue) {
				q.WithinClusterQueue = PreemptionLowerPriority
				q.Pending[0].Priority, q.Pending[0].ServiceClass = 9, 2
			},
			want: []float64{0, 12, 22},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q := base()
			tc.edit(&q)
			if diff := cmp.Diff(tc.want, waits(mustForecast(t, f, q, 1)), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("expected waits (-want +got):\n%s", diff)
			}
		})
	}

	// Higher-priority arrivals pass the pending workloads: the longer
	// their class's service, the longer the last one waits.
	arriving := func(class int32) float64 {
		q := base()
		q.Arrivals = []Arrival{{RatePerSecond: 0.02, Options: full, Priority: 9, ServiceClass: class}}
		return mustForecast(t, mustNew(t, WithSamples(400)), q, 2)[2].ExpectedWaitSeconds
	}
	if short, long := arriving(2), arriving(1); !(long > short+5) {
		t.Errorf("last wait with arrivals of 3 s: %v, of 20 s: %v; want the latter longer by more than 5 s", short, long)
	}
}

func TestSameSeedSameForecast(t *testing.T) {
	f := mustNew(t, WithSamples(64), WithHorizonCount(20))
	q := busyQueue(t, 4, 60, 20)
	a := waits(mustForecast(t, f, q, 9))
	b := waits(mustForecast(t, f, q, 9))
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("position %d: %v vs %v with the same seed", i, a[i], b[i])
		}
	}
}

// TestRecycledTimesDoNotCarryOver forecasts queues of different sizes and
// replica counts one after another, so that each roll may take the times
// buffer an earlier, larger or smaller, roll gave back, and checks every
// forecast against the same forecast made first (with the same seed).
func TestRecycledTimesDoNotCarryOver(t *testing.T) {
	type run struct {
		f *Forecaster
		q Queue
	}
	runs := map[string]run{
		"4 servers, 60 pending, 64 replicas":  {mustNew(t, WithSamples(64), WithHorizonCount(20)), busyQueue(t, 4, 60, 20)},
		"2 servers, 5 pending, 96 replicas":   {mustNew(t, WithSamples(96), WithHorizonCount(64)), busyQueue(t, 2, 5, 3)},
		"8 servers, 200 pending, 16 replicas": {mustNew(t, WithSamples(16), WithHorizonCount(200)), busyQueue(t, 8, 200, 50)},
	}
	first := make(map[string][]Estimate, len(runs))
	for name, r := range runs {
		first[name] = mustForecast(t, r.f, r.q, 11)
	}
	for round := range 3 {
		for name, r := range runs {
			if diff := cmp.Diff(first[name], mustForecast(t, r.f, r.q, 11)); diff != "" {
				t.Errorf("round %d, %s: forecast differs from its first (-first,+again):\n%s", round, name, diff)
			}
		}
	}
}

// TestPropertiesIdenticalDemands: for random queues of one demand shape the
// expected wait is non-decreasing in queue position, and every estimate is
// finite, non-negative, within the horizon, with P50 ≤ P90.
func TestPropertiesIdenticalDemands(t *testing.T) {
	r := rand.New(rand.NewPCG(77, 78))
	emp, err := NewEmpirical([]float64{1, 3, 8, 8, 20, 40, 100})
	if err != nil {
		t.Fatal(err)
	}
	models := []ServiceModel{mustExponential(t, 15), emp, mustDeterministic(t, 12)}
	for trial := range 60 {
		capMilli := int64(1000 + r.IntN(8000))
		demand := int64(100 + r.IntN(int(capMilli)))
		q := Queue{
			Capacity:                cpu(capMilli),
			Service:                 models[r.IntN(len(models))],
			Policy:                  Policy(r.IntN(2)),
			CyclePeriodSeconds:      []float64{0, 0.5}[r.IntN(2)],
			AdmissionLatencySeconds: []float64{0, 1}[r.IntN(2)],
		}
		for range r.IntN(int(capMilli/demand) + 1) {
			run := Running{Usage: cpu(demand), AgeSeconds: 50 * r.Float64()}
			if r.IntN(3) == 0 {
				run.MaxExecutionSeconds = 60 * r.Float64()
			}
			q.Running = append(q.Running, run)
		}
		for i := range r.IntN(300) {
			p := Pending{ID: fmt.Sprint(i), Options: []capacity.Quantities{cpu(demand)}, Quotable: r.IntN(10) > 0}
			q.Pending = append(q.Pending, p)
		}
		f := mustNew(t, WithSamples(1+r.IntN(48)), WithHorizonCount(1+r.IntN(64)))
		est := mustForecast(t, f, q, uint64(trial))
		prev := 0.0
		for i, e := range est {
			if !e.Quotable {
				continue
			}
			if e.ExpectedWaitSeconds < prev {
				t.Fatalf("trial %d: position %d waits %v < %v ahead of it", trial, i, e.ExpectedWaitSeconds, prev)
			}
			prev = e.ExpectedWaitSeconds
		}
	}
}

func TestHorizonClampKeepsOverloadFinite(t *testing.T) {
	// 10 000 workloads of 100 s on one slot: the tail is far beyond a one
	// hour horizon.
	f := mustNew(t, WithSamples(16), WithHorizonCount(32), WithHorizonSeconds(3600))
	q := Queue{Capacity: cpu(1000), Service: mustExponential(t, 100)}
	q.Pending = pendingOf(make([]capacity.Quantities, 10000)...)
	for i := range q.Pending {
		q.Pending[i].Options = []capacity.Quantities{cpu(1000)}
	}
	est := mustForecast(t, f, q, 1)
	if !est[9999].Clamped || est[9999].ExpectedWaitSeconds != 3600 {
		t.Errorf("tail = %+v, want clamped at 3600", est[9999])
	}
	if est[0].Clamped || est[0].ExpectedWaitSeconds != 0 {
		t.Errorf("head = %+v, want 0", est[0])
	}
}

func TestQuantile(t *testing.T) {
	cases := map[string]struct {
		xs   []float64
		p    float64
		want float64
	}{
		"single":        {[]float64{3}, 0.9, 3},
		"median of two": {[]float64{1, 3}, 0.5, 2},
		"p90 of ten":    {[]float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 0.9, 8.1},
		"p0":            {[]float64{2, 4, 6}, 0, 2},
		"p1":            {[]float64{2, 4, 6}, 1, 6},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := quantile(tc.xs, tc.p); !approx(got, tc.want, 1e-12) {
				t.Errorf("quantile = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestConcurrentUse: one Forecaster serves several goroutines, each with
// its own random source, with the same results as serial calls (run with
// -race to check for shared state).
func TestConcurrentUse(t *testing.T) {
	f := mustNew(t, WithSamples(32), WithHorizonCount(16))
	q := busyQueue(t, 4, 40, 20)
	want := waits(mustForecast(t, f, q, 21))
	results := make(chan []float64, 4)
	for range 4 {
		go func() {
			est, err := f.Forecast(q, rand.New(rand.NewPCG(21, 21^0x9e3779b97f4a7c15)))
			if err != nil {
				results <- nil
				return
			}
			results <- waits(est)
		}()
	}
	for range 4 {
		got := <-results
		if len(got) != len(want) {
			t.Fatalf("concurrent call failed: %v", got)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("position %d: %v concurrently, %v serially", i, got[i], want[i])
			}
		}
	}
}

// TestForecastIntoOverwritesWhatItsBufferHeld: ForecastInto writes what
// Forecast returns whatever the buffer held before (here an unquotable
// workload, whose estimate Forecast leaves zero, and workloads behind the
// count horizon, whose buffer is recycled too), and rejects a buffer of
// another length without touching it.
func TestForecastIntoOverwritesWhatItsBufferHeld(t *testing.T) {
	f := mustNew(t, WithSamples(32), WithHorizonCount(10))
	q := busyQueue(t, 3, 40, 15)
	q.Pending[4].Quotable = false
	want := mustForecast(t, f, q, 5)

	junk := Estimate{ID: "junk", Quotable: true, ExpectedWaitSeconds: 7, P50Seconds: 7, P90Seconds: 9,
		AdmissionOffsetSeconds: 7, Extrapolated: true, Clamped: true}
	out := make([]Estimate, len(q.Pending))
	for i := range out {
		out[i] = junk
	}
	if err := f.ForecastInto(out, q, rand.New(rand.NewPCG(5, 5^0x9e3779b97f4a7c15))); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("ForecastInto differs from Forecast (-Forecast,+ForecastInto):\n%s", diff)
	}

	short := []Estimate{junk}
	err := f.ForecastInto(short, q, rand.New(rand.NewPCG(5, 5)))
	if !errors.Is(err, ErrInvalidQueue) {
		t.Errorf("ForecastInto of 1 estimate for %d pending: error %v, want ErrInvalidQueue", len(q.Pending), err)
	}
	if diff := cmp.Diff([]Estimate{junk}, short); diff != "" {
		t.Errorf("a rejected buffer changed (-before,+after):\n%s", diff)
	}
}

// benchQueue is one ClusterQueue of 64 CPU, 256Gi and 16 spot CPU with 40
// running workloads (60 CPU, 240Gi) and n pending of three demand shapes (one with two flavor
// options), served by an empirical model of 1 000 completions.
func benchQueue(b testing.TB, n int, policy Policy) Queue {
	r := rand.New(rand.NewPCG(1, 2))
	obs := make([]float64, 1000)
	for i := range obs {
		obs[i] = 5 + 600*r.ExpFloat64()
	}
	emp, err := NewEmpirical(obs)
	if err != nil {
		b.Fatal(err)
	}
	spot := capacity.FlavorResource{Flavor: "spot", Resource: "cpu"}
	q := Queue{
		Capacity: capacity.Quantities{cpuFR: 64000, memFR: 256 * gi, spot: 16000},
		Service:  emp,
		Policy:   policy,
	}
	shapes := [][]capacity.Quantities{
		{cpuMem(1000, 4*gi)},
		{cpuMem(2000, 8*gi), {spot: 2000}},
		{cpuMem(500, 16*gi)},
	}
	for i := range 40 {
		q.Running = append(q.Running, Running{Usage: shapes[i%2][0], AgeSeconds: 30 * float64(i), MaxExecutionSeconds: 3600})
	}
	for i := range n {
		q.Pending = append(q.Pending, Pending{
			ID:       fmt.Sprintf("ns/job-%d", i),
			Options:  shapes[i%3],
			Quotable: i%50 != 7,
		})
	}
	return q
}
