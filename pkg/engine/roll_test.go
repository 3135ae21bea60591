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

func testEngine(t *testing.T, c engineConfig) *Engine {
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
	e, err := newEngine(f, c)
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
		config     engineConfig
		stats      Stats
		wantMethod Method
	}{
		"nothing known of service times: partition only": {wantMethod: MethodNone},
		"a prior":                {config: engineConfig{PriorMeanServiceSeconds: 20}, wantMethod: MethodAPriori},
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
		"no capacity":                        func(q *Queue) { q.Capacity = nil },
		"a pending class out of range":       func(q *Queue) { q.Pending[0].Class = 2 },
		"a negative running class":           func(q *Queue) { q.Running[0].Class = -1 },
		"classes missing for the workloads":  func(q *Queue) { q.Classes = nil },
		"an unplaceable reason out of range": func(q *Queue) { q.Pending[0].Unplaceable = 1 },
	}
	for name, breakIt := range cases {
		t.Run(name, func(t *testing.T) {
			q := paperQueue()
			breakIt(&q)
			if _, err := testEngine(t, engineConfig{PriorMeanServiceSeconds: 20}).Roll(q, seed); !errors.Is(err, forecast.ErrInvalidQueue) {
				t.Errorf("error %v, want %v", err, forecast.ErrInvalidQueue)
			}
		})
	}
}

// TestRollTakesAnUnplaceableWorkloadOutOfTheRoll checks that a workload the
// caller found unplaceable is Unfeasible with the caller's reason and no
// wait, and that the workloads behind it wait as if it were not there.
func TestRollTakesAnUnplaceableWorkloadOutOfTheRoll(t *testing.T) {
	samples := make([]float64, 60)
	for i := range samples {
		samples[i] = float64(10 + i%21)
	}
	stats := Stats{HasService: true, ServiceMean: 20, ServiceSCV: 0.3, ServiceSample: samples}
	const reason = "topology: never placed"
	without := paperQueue()
	without.Stats = stats
	without.Pending = []Pending{{ID: "p0"}, {ID: "p1"}, {ID: "p2"}}
	with := paperQueue()
	with.Stats = stats
	with.Unplaceable = []string{reason}
	with.Pending = []Pending{{ID: "p0"}, {ID: "stuck", Unplaceable: 1}, {ID: "p1"}, {ID: "p2"}}

	e := testEngine(t, engineConfig{})
	want, err := e.Roll(without, seed)
	if err != nil {
		t.Fatalf("Roll without the unplaceable workload: %v", err)
	}
	defer want.Release()
	got, err := e.Roll(with, seed)
	if err != nil {
		t.Fatalf("Roll with it: %v", err)
	}
	defer got.Release()
	if got.UnfeasibleWorkloads != 1 {
		t.Errorf("UnfeasibleWorkloads %d, want 1", got.UnfeasibleWorkloads)
	}
	if stuck := got.Estimates[1]; !stuck.Unfeasible || stuck.Reason != reason || stuck.HasWait {
		t.Errorf("the unplaceable workload: %+v; want Unfeasible with %q and no wait", stuck, reason)
	}
	gotWaits := []Wait{got.Estimates[0].Wait, got.Estimates[2].Wait, got.Estimates[3].Wait}
	wantWaits := []Wait{want.Estimates[0].Wait, want.Estimates[1].Wait, want.Estimates[2].Wait}
	if diff := cmp.Diff(wantWaits, gotWaits); diff != "" {
		t.Errorf("the others' waits with the unplaceable workload in the queue (-without,+with):\n%s", diff)
	}
}

func TestNewRejectsAnInvalidConfig(t *testing.T) {
	f, err := forecast.New()
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		f *forecast.Forecaster
		c engineConfig
	}{
		"no forecaster":             {c: engineConfig{MinServiceSamples: 1, HorizonSeconds: 1}},
		"no minimum of completions": {f: f, c: engineConfig{HorizonSeconds: 1}},
		"no horizon":                {f: f, c: engineConfig{MinServiceSamples: 1}},
		"an infinite horizon":       {f: f, c: engineConfig{MinServiceSamples: 1, HorizonSeconds: math.Inf(1)}},
		"a negative prior":          {f: f, c: engineConfig{MinServiceSamples: 1, HorizonSeconds: 1, PriorMeanServiceSeconds: -1}},
		"a NaN prior":               {f: f, c: engineConfig{MinServiceSamples: 1, HorizonSeconds: 1, PriorMeanServiceSeconds: math.NaN()}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := newEngine(tc.f, tc.c); err == nil {
				t.Error("no error")
			}
		})
	}
}

// The horizon cuts the published P50 and P90 and flags the estimate.
func TestRollCutsWaitsAtTheHorizon(t *testing.T) {
	got, err := testEngine(t, engineConfig{PriorMeanServiceSeconds: 3600, HorizonSeconds: 60}).Roll(paperQueue(), seed)
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

// TestReleasedRollsDoNotCarryOver: a roll that reuses the slices of a
// released one (an Unfeasible workload with its reason at a position that
// is Quotable in the next queue, and more pending workloads than it has)
// returns what it returns from fresh slices, and Release leaves the rolled
// value without estimates.
func TestReleasedRollsDoNotCarryOver(t *testing.T) {
	e := testEngine(t, engineConfig{PriorMeanServiceSeconds: 20})
	next := paperQueue()
	next.Pending = []Pending{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	want, err := e.Roll(next, seed)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		first, err := e.Roll(paperQueue(), seed)
		if err != nil {
			t.Fatal(err)
		}
		if !first.Estimates[1].Unfeasible {
			t.Fatalf("round %d: the paper's 20-CPU workload is not Unfeasible: %+v", round, first.Estimates[1])
		}
		first.Release()
		if first.Estimates != nil {
			t.Errorf("round %d: %d estimates left after Release", round, len(first.Estimates))
		}
		got, err := e.Roll(next, seed)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.Estimates, got.Estimates); diff != "" {
			t.Errorf("round %d: the roll after a released one differs (-fresh,+after):\n%s", round, diff)
		}
		got.Release()
	}
}

// TestRollTimesAnUntriedWorkloadByItsFirstAttempt: on the paper's example
// with one of its two CPUs free, the head p0 fits now. Tried, it waits for
// the cycle's phase and the admission latency (2 s); untried, having waited
// 0.25 s, for a first-attempt latency above that (of 0.1, 0.3 and 0.4 s),
// less 0.25 s: 0.05 or 0.15 s. A what-if's workload, submitted now, has
// waited nothing: 0.1 to 0.4 s when it fits at the head.
func TestRollTimesAnUntriedWorkloadByItsFirstAttempt(t *testing.T) {
	e := testEngine(t, engineConfig{PriorMeanServiceSeconds: 20})
	queue := func(untried bool) Queue {
		q := paperQueue()
		q.Running = q.Running[:2]
		q.Pending[0].Untried, q.Pending[0].WaitedSeconds = untried, 0.25
		q.Stats.AdmissionLatency = 2
		q.Stats.FirstAttemptLatencySample = []float64{0.1, 0.3, 0.4}
		return q
	}
	cases := map[string]struct {
		untried bool
		// want is p0's mean, P50 and P90.
		want [3]float64
	}{
		"tried":   {want: [3]float64{2, 2, 2}},
		"untried": {untried: true, want: [3]float64{0.1, 0.1, 0.15}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rolled, err := e.Roll(queue(tc.untried), seed)
			if err != nil {
				t.Fatal(err)
			}
			defer rolled.Release()
			raw := rolled.Estimates[0].Raw
			got := [3]float64{raw.ExpectedWaitSeconds, raw.P50Seconds, raw.P90Seconds}
			// 256 replicas of a two-point draw: the mean's standard error
			// is 0.003 s; the P50 is either point.
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 0.051)); diff != "" {
				t.Errorf("p0's mean, P50 and P90 (-want +got):\n%s", diff)
			}
		})
	}
	rolled, err := e.Roll(queue(false), seed)
	if err != nil {
		t.Fatal(err)
	}
	got := e.WhatIf(rolled.Scene, cpuShape(500), 100, 0)
	if got.Position != 0 || got.Raw.ExpectedWaitSeconds < 0.1 || got.Raw.ExpectedWaitSeconds > 0.4 {
		t.Errorf("what-if at position %d waits %.3f s on average; want position 0 and a first attempt's 0.1 to 0.4 s",
			got.Position, got.Raw.ExpectedWaitSeconds)
	}

	// With all four running (its 2 CPU nominal quota used) and 1 CPU it
	// can borrow, the what-if fits at the head only by borrowing: it is
	// timed as any admission, 2 s.
	borrowing := paperQueue()
	quota := &borrowing.Capacity.ResourceGroups[0].Flavors[0].Quotas[0]
	quota.Borrowable, quota.ExpectedBorrowable = 1000, 1000
	borrowing.Stats.AdmissionLatency = 2
	borrowing.Stats.FirstAttemptLatencySample = []float64{0.1, 0.3, 0.4}
	rolled, err = e.Roll(borrowing, seed)
	if err != nil {
		t.Fatal(err)
	}
	got = e.WhatIf(rolled.Scene, cpuShape(500), 100, 0)
	if got.Position != 0 || math.Abs(got.Raw.ExpectedWaitSeconds-2) > 0.001 {
		t.Errorf("what-if that borrows, at position %d, waits %.3f s on average; want position 0 and the admission latency's 2 s",
			got.Position, got.Raw.ExpectedWaitSeconds)
	}
}
