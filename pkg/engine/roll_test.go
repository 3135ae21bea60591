package engine

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
)

// cpuQueue is a ClusterQueue of one flavor with nominal cpu (millicores).
func cpuQueue(nominal int64) *capacity.ClusterQueue {
	return &capacity.ClusterQueue{Name: "cq", ResourceGroups: []capacity.ResourceGroup{{
		Resources: []string{"cpu"},
		Flavors:   []capacity.FlavorQuotas{{Name: "default", Quotas: []capacity.Quota{{Nominal: nominal}}}},
	}}}
}

func cpuShape(m int64) capacity.Workload {
	return capacity.Workload{PodSets: []capacity.PodSet{{Name: "main", Count: 1, Requests: map[string]int64{"cpu": m}}}}
}

// paperQueue is the paper's example in plain terms: 2 CPUs, four running
// workloads of 500m, three pending ones of 500m and one of 20 CPUs.
func paperQueue() Queue {
	q := Queue{
		Capacity: cpuQueue(2000),
		Classes:  []capacity.Workload{cpuShape(500), cpuShape(20000)},
	}
	for age := range 4 {
		q.Running = append(q.Running, Running{Class: 0, Usage: capacity.Quantities{{Flavor: "default", Resource: "cpu"}: 500}, AgeSeconds: float64(age)})
	}
	q.Pending = []Pending{{ID: "p0"}, {ID: "huge", Class: 1}, {ID: "p1"}, {ID: "p2"}}
	return q
}

func testEngine(t *testing.T, c Config) *Engine {
	t.Helper()
	if c.MinServiceSamples == 0 {
		c.MinServiceSamples = 10
	}
	if c.HorizonSeconds == 0 {
		c.HorizonSeconds = 7 * 24 * 3600
	}
	f, err := forecast.New(forecast.WithSamples(256))
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(f, c)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

var seed = [2]uint64{1, 2}

// TestRollFromPlainInputs checks the partition, the a-priori model, the
// method and that every Quotable workload gets a sane wait, ordered by its
// place in the queue, on the paper's example without any Kueue type.
func TestRollFromPlainInputs(t *testing.T) {
	samples := make([]float64, 60)
	for i := range samples {
		samples[i] = float64(10 + i%21)
	}
	cases := map[string]struct {
		config     Config
		stats      Stats
		wantMethod Method
	}{
		"nothing known of service times: partition only": {wantMethod: MethodNone},
		"a prior":                {config: Config{PriorMeanServiceSeconds: 20}, wantMethod: MethodAPriori},
		"observed service times": {stats: Stats{HasService: true, ServiceMean: 20, ServiceSCV: 0.3, ServiceSample: samples}, wantMethod: MethodForecast},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q := paperQueue()
			q.Stats = tc.stats
			got, err := testEngine(t, tc.config).Roll(q, seed)
			if err != nil {
				t.Fatalf("Roll: %v", err)
			}
			if got.Method != tc.wantMethod || got.UnfeasibleWorkloads != 1 || len(got.Estimates) != 4 {
				t.Fatalf("method %v, %d unfeasible, %d estimates; want %v, 1, 4", got.Method, got.UnfeasibleWorkloads, len(got.Estimates), tc.wantMethod)
			}
			wantModel := APriori{EffectiveServers: 4, BottleneckFlavor: "default", BottleneckResource: "cpu"}
			if diff := cmp.Diff(wantModel, got.Model); diff != "" {
				t.Errorf("a-priori model (-want,+got):\n%s", diff)
			}
			huge := got.Estimates[1]
			if !huge.Unfeasible || huge.Reason != "flavor default: cpu 20 > potential 2 (nominal 2, borrowable 0)" || huge.HasWait {
				t.Errorf("the 20-CPU workload: %+v; want Unfeasible with its reason and no wait", huge)
			}
			var last float64
			for _, i := range []int{0, 2, 3} {
				e := got.Estimates[i]
				if e.Unfeasible {
					t.Fatalf("workload %d Unfeasible: %s", i, e.Reason)
				}
				if e.HasWait != (tc.wantMethod != MethodNone) {
					t.Fatalf("workload %d: HasWait %v with method %v", i, e.HasWait, tc.wantMethod)
				}
				if !e.HasWait {
					continue
				}
				if e.Method != tc.wantMethod || e.ExpectedWait <= 0 || e.P50 > e.P90 || e.BeyondHorizon {
					t.Errorf("workload %d: %+v", i, e.Wait)
				}
				if w := e.Raw.ExpectedWaitSeconds; !(w >= last) || math.IsInf(w, 0) {
					t.Errorf("workload %d waits %v s, the one ahead of it %v s", i, w, last)
				}
				last = e.Raw.ExpectedWaitSeconds
			}
		})
	}
}

func TestRollRejectsAnInvalidQueue(t *testing.T) {
	cases := map[string]func(q *Queue){
		"no capacity":                       func(q *Queue) { q.Capacity = nil },
		"a pending class out of range":      func(q *Queue) { q.Pending[0].Class = 2 },
		"a negative running class":          func(q *Queue) { q.Running[0].Class = -1 },
		"classes missing for the workloads": func(q *Queue) { q.Classes = nil },
	}
	for name, breakIt := range cases {
		t.Run(name, func(t *testing.T) {
			q := paperQueue()
			breakIt(&q)
			if _, err := testEngine(t, Config{PriorMeanServiceSeconds: 20}).Roll(q, seed); !errors.Is(err, ErrInvalidQueue) {
				t.Errorf("error %v, want %v", err, ErrInvalidQueue)
			}
		})
	}
}

func TestNewRejectsAnInvalidConfig(t *testing.T) {
	f, err := forecast.New()
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		f *forecast.Forecaster
		c Config
	}{
		"no forecaster":             {c: Config{MinServiceSamples: 1, HorizonSeconds: 1}},
		"no minimum of completions": {f: f, c: Config{HorizonSeconds: 1}},
		"no horizon":                {f: f, c: Config{MinServiceSamples: 1}},
		"an infinite horizon":       {f: f, c: Config{MinServiceSamples: 1, HorizonSeconds: math.Inf(1)}},
		"a negative prior":          {f: f, c: Config{MinServiceSamples: 1, HorizonSeconds: 1, PriorMeanServiceSeconds: -1}},
		"a NaN prior":               {f: f, c: Config{MinServiceSamples: 1, HorizonSeconds: 1, PriorMeanServiceSeconds: math.NaN()}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := New(tc.f, tc.c); err == nil {
				t.Error("no error")
			}
		})
	}
}

// The horizon cuts the published P50 and P90 and flags the estimate.
func TestRollCutsWaitsAtTheHorizon(t *testing.T) {
	got, err := testEngine(t, Config{PriorMeanServiceSeconds: 3600, HorizonSeconds: 60}).Roll(paperQueue(), seed)
	if err != nil {
		t.Fatalf("Roll: %v", err)
	}
	last := got.Estimates[3]
	if !last.HasWait || !last.BeyondHorizon || last.P90.Seconds() > 60 || last.P50 > last.P90 {
		t.Errorf("last workload behind hour-long services: %+v, want P50 ≤ P90 ≤ 60 s, flagged", last.Wait)
	}
	if diff := cmp.Diff(60.0, last.P90.Seconds(), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("P90 (-want,+got):\n%s", diff)
	}
}

// A ClusterQueue of nominal 1 CPU that may borrow 2 more, of which its
// cohort's other ClusterQueues hold all now (ExpectedBorrowable 0): two
// workloads of 1 CPU are pending behind one running. Without holders the
// roll keeps the borrowing it sees now (none) for the whole horizon, so
// the second waits for two services; with an idle neighbour's running
// workloads as holders, the quota they free as they end comes back, and
// both wait less.
func TestBorrowableQuotaComesBackAsItsHoldersEnd(t *testing.T) {
	cpu := capacity.FlavorResource{Flavor: "default", Resource: "cpu"}
	q := Queue{
		Capacity: &capacity.ClusterQueue{Name: "cq", ResourceGroups: []capacity.ResourceGroup{{
			Resources: []string{"cpu"},
			Flavors:   []capacity.FlavorQuotas{{Name: "default", Quotas: []capacity.Quota{{Nominal: 1000, Borrowable: 2000}}}},
		}}},
		Classes: []capacity.Workload{cpuShape(1000)},
		Running: []Running{{Class: 0, Usage: capacity.Quantities{cpu: 1000}}},
		Pending: []Pending{{ID: "p0"}, {ID: "p1"}},
	}
	e := testEngine(t, Config{PriorMeanServiceSeconds: 20})
	frozen, err := e.Roll(q, seed)
	if err != nil {
		t.Fatalf("Roll: %v", err)
	}
	q.Borrowable = q.Capacity.HeldBorrowable()
	q.BorrowableHolders = []forecast.Running{{Usage: capacity.Quantities{cpu: 1000}}, {Usage: capacity.Quantities{cpu: 1000}}}
	freed, err := e.Roll(q, seed)
	if err != nil {
		t.Fatalf("Roll: %v", err)
	}
	for i := range q.Pending {
		was, is := frozen.Estimates[i].Raw.ExpectedWaitSeconds, freed.Estimates[i].Raw.ExpectedWaitSeconds
		if !(is < 0.8*was) {
			t.Errorf("pending %d: %v s with the holders, %v s without; want clearly less", i, is, was)
		}
	}
	// Exponential services of 20 s: p1, second in line on one server,
	// waits two services (40 s) without the holders. With them, three
	// workloads hold the three CPUs: p0 starts at the first of three ends
	// (20/3 s) and p1 at the next of the three then running, p0 among
	// them (another 20/3 s): 40/3 s.
	if diff := cmp.Diff([2]float64{40, 40.0 / 3}, [2]float64{frozen.Estimates[1].Raw.ExpectedWaitSeconds, freed.Estimates[1].Raw.ExpectedWaitSeconds}, cmpopts.EquateApprox(0.15, 0)); diff != "" {
		t.Errorf("p1's mean wait without and with the holders (-want,+got):\n%s", diff)
	}
}
