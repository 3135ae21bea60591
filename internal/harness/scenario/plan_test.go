package scenario

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

func mustPlan(t *testing.T, s *Spec, level float64, seed int) Plan {
	t.Helper()
	p, err := s.Plan(level, seed)
	if err != nil {
		t.Fatalf("Plan(%v, %d): %v", level, seed, err)
	}
	return p
}

func offsets(p Plan) []float64 {
	out := make([]float64, len(p.Arrivals))
	for i, a := range p.Arrivals {
		out[i] = a.Offset
	}
	return out
}

func TestPlanDeterministic(t *testing.T) {
	s := validSpec()
	s.SetDefaults()
	first := mustPlan(t, s, 0.6, 1)
	if diff := cmp.Diff(first, mustPlan(t, s, 0.6, 1)); diff != "" {
		t.Fatalf("the same replica planned twice differs (-first +second):\n%s", diff)
	}
	// A copy of the spec plans the same.
	if diff := cmp.Diff(first, mustPlan(t, validSpec(), 0.6, 1)); diff != "" {
		t.Errorf("an equal spec plans differently (-first +second):\n%s", diff)
	}
	other := validSpec()
	other.Seed++
	for name, p := range map[string]Plan{
		"another seed index": mustPlan(t, s, 0.6, 0),
		"another level":      mustPlan(t, s, 0.8, 1),
		"another base seed":  mustPlan(t, other, 0.6, 1),
	} {
		if cmp.Equal(offsets(first), offsets(p)) {
			t.Errorf("%s: same arrival times", name)
		}
		if p.Seed == first.Seed {
			t.Errorf("%s: same replica seed %d", name, p.Seed)
		}
	}
}

// TestPlanQueueStreams checks that a queue's stream does not depend on the
// other queues: without team-b, team-a's arrivals extend those it had.
func TestPlanQueueStreams(t *testing.T) {
	s := validSpec()
	alone := validSpec()
	alone.ClusterQueues = alone.ClusterQueues[:1]
	var shared, own []Arrival
	for _, a := range mustPlan(t, s, 0.6, 0).Arrivals {
		if a.Queue == "team-a" {
			shared = append(shared, a)
		}
	}
	own = mustPlan(t, alone, 0.6, 0).Arrivals
	if len(shared) == 0 || len(shared) >= len(own) {
		t.Fatalf("team-a has %d arrivals with team-b, %d alone", len(shared), len(own))
	}
	ignore := cmpopts.IgnoreFields(Arrival{}, "Index", "Name", "Warmup")
	if diff := cmp.Diff(own[:len(shared)], shared, ignore); diff != "" {
		t.Errorf("team-a's stream changes with team-b (-alone +shared):\n%s", diff)
	}
}

func TestPlanOrderAndContents(t *testing.T) {
	s := validSpec()
	p := mustPlan(t, s, 0.8, 2)
	if len(p.Arrivals) != s.Workloads {
		t.Fatalf("%d arrivals, want %d", len(p.Arrivals), s.Workloads)
	}
	perQueue := map[string]int{}
	for i, a := range p.Arrivals {
		if a.Index != i || a.Name != fmt.Sprintf("w%04d", i) {
			t.Errorf("arrival %d: index %d, name %s", i, a.Index, a.Name)
		}
		if i > 0 && a.Offset < p.Arrivals[i-1].Offset {
			t.Errorf("arrival %d at %v before arrival %d at %v", i, a.Offset, i-1, p.Arrivals[i-1].Offset)
		}
		if !(a.Service > 0) {
			t.Errorf("arrival %d: service %v", i, a.Service)
		}
		perQueue[a.Queue]++
		var c *ClassSpec
		for qi := range s.ClusterQueues {
			for ci := range s.ClusterQueues[qi].Classes {
				if s.ClusterQueues[qi].Name == a.Queue && s.ClusterQueues[qi].Classes[ci].Name == a.Class {
					c = &s.ClusterQueues[qi].Classes[ci]
				}
			}
		}
		if c == nil {
			t.Fatalf("arrival %d: unknown queue %s class %s", i, a.Queue, a.Class)
		}
		wantDemand := c.Demand
		if a.Unfeasible {
			wantDemand = c.UnfeasibleDemand
		}
		if diff := cmp.Diff(wantDemand, a.Demand); diff != "" {
			t.Errorf("arrival %d (unfeasible %t): demand (-want +got):\n%s", i, a.Unfeasible, diff)
		}
		if a.PriorityClass != c.Priority || a.Priority != s.PriorityClasses[c.Priority] || a.DRA != c.DRA {
			t.Errorf("arrival %d: priority %s/%d, dra %v; class %s has %s, %v", i, a.PriorityClass, a.Priority, a.DRA, c.Name, c.Priority, c.DRA)
		}
	}
	for _, q := range p.Queues {
		if q.Arrivals != perQueue[q.Name] {
			t.Errorf("queue %s: Arrivals %d, counted %d", q.Name, q.Arrivals, perQueue[q.Name])
		}
	}
	if p.Span != p.Arrivals[len(p.Arrivals)-1].Offset {
		t.Errorf("span %v, last arrival at %v", p.Span, p.Arrivals[len(p.Arrivals)-1].Offset)
	}
	// The plan's demand maps are copies.
	p.Arrivals[0].Demand["cpu"] = "99"
	for _, q := range s.ClusterQueues {
		for _, c := range q.Classes {
			if c.Demand["cpu"] == "99" || c.UnfeasibleDemand["cpu"] == "99" {
				t.Fatal("an arrival's demand is the class's map")
			}
		}
	}
}

// TestPlanRatesAndShares checks a long plan against the spec: each queue's
// empirical arrival rate, class shares, unfeasible fraction and mean
// service, for each arrival process.
func TestPlanRatesAndShares(t *testing.T) {
	for _, arrivals := range []ArrivalsSpec{{Process: "poisson"}, {Process: "periodic"}, {Process: "bursty", BurstSize: 4}} {
		t.Run(arrivals.Process, func(t *testing.T) {
			s := validSpec()
			s.Workloads = 40000
			s.ClusterQueues[0].Arrivals = arrivals
			p := mustPlan(t, s, 0.6, 0)
			// team-a: λ = 0.6 × 0.8 × k_eff 2 / E[S] (0.7 × 2 s + 0.3 × 4 s);
			// team-b: λ = 0.6 × 0.5/s.
			wantLambda := map[string]float64{"team-a": 0.6 * 0.8 * 2 / 2.6, "team-b": 0.6 * 0.5}
			classes := map[string]map[string]int{}
			unfeasible := map[string]int{}
			service := map[string]float64{}
			for _, a := range p.Arrivals {
				if classes[a.Queue] == nil {
					classes[a.Queue] = map[string]int{}
				}
				classes[a.Queue][a.Class]++
				service[a.Queue+"/"+a.Class] += a.Service
				if a.Unfeasible {
					unfeasible[a.Queue+"/"+a.Class]++
				}
			}
			within := func(what string, got, want float64) {
				t.Helper()
				if math.Abs(got-want) > 0.05*want {
					t.Errorf("%s = %.4f, want %.4f ± 5%%", what, got, want)
				}
			}
			for qi, q := range p.Queues {
				spec := s.ClusterQueues[qi]
				if diff := cmp.Diff(wantLambda[q.Name], q.Lambda, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
					t.Errorf("%s: λ (-want +got):\n%s", q.Name, diff)
				}
				within(q.Name+" empirical arrival rate", float64(q.Arrivals)/p.Span, q.Lambda)
				for _, c := range spec.Classes {
					n := classes[q.Name][c.Name]
					within(q.Name+"/"+c.Name+" share", float64(n)/float64(q.Arrivals), c.Share)
					within(q.Name+"/"+c.Name+" mean service", service[q.Name+"/"+c.Name]/float64(n), c.MeanService.Seconds())
					if got := float64(unfeasible[q.Name+"/"+c.Name]) / float64(n); math.Abs(got-c.UnfeasibleFraction) > 0.01 {
						t.Errorf("%s/%s: unfeasible fraction %.4f, want %.4f ± 0.01", q.Name, c.Name, got, c.UnfeasibleFraction)
					}
				}
			}
		})
	}
}

func TestPlanWarmup(t *testing.T) {
	cases := map[string]struct {
		warmup *float64
		n      int
		want   int
	}{
		"default":       {n: 10, want: 2},
		"exact":         {warmup: new(0.2), n: 400, want: 80},
		"rounded up":    {warmup: new(0.25), n: 10, want: 3},
		"none":          {warmup: new(0.0), n: 10, want: 0},
		"at most":       {warmup: new(0.9), n: 10, want: 9},
		"tiny fraction": {warmup: new(0.001), n: 10, want: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := validSpec()
			s.Warmup, s.Workloads = tc.warmup, tc.n
			p := mustPlan(t, s, 0.6, 0)
			if p.Warmup != tc.want {
				t.Errorf("Warmup = %d, want %d", p.Warmup, tc.want)
			}
			for i, a := range p.Arrivals {
				if a.Warmup != (i < tc.want) {
					t.Errorf("arrival %d: Warmup %t", i, a.Warmup)
				}
			}
		})
	}
}

func TestPlanErrors(t *testing.T) {
	s := validSpec()
	cases := map[string]struct {
		level   float64
		seed    int
		wantErr string
	}{
		"unknown level":      {level: 0.7, wantErr: "level 0.7 is not one of levels [0.6 0.8]"},
		"negative seed":      {level: 0.6, seed: -1, wantErr: "seed index -1 is not in [0, 3)"},
		"seed out of range":  {level: 0.8, seed: 3, wantErr: "seed index 3 is not in [0, 3)"},
		"last seed is valid": {level: 0.8, seed: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := s.Plan(tc.level, tc.seed)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Errorf("Plan error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPlanQueueModels checks the per-queue model of the cohort scenarios:
// nominal k_eff, what each queue can borrow, λ, ρ and the service and
// arrival variability.
func TestPlanQueueModels(t *testing.T) {
	type model struct {
		Name       string
		KEff       int
		Bottleneck string
		Borrowable map[string]string
		Lambda     float64
		Rho        float64
		MeanS      float64
		ServiceSCV float64
		ArrivalSCV float64
	}
	cases := map[string]struct {
		file  string
		spec  *Spec
		level float64
		want  []model
	}{
		"mt-cohort": {
			file:  "mt-cohort.yaml",
			level: 1.0,
			// team-a: 2 + 2 + 1 lent = 5 CPU at most, under its borrowingLimit
			// of 4; team-c keeps 1 CPU of its own and can borrow the 5 lent.
			want: []model{
				{"team-a", 4, "cpu", map[string]string{"cpu": "3", "memory": "8Gi"}, 1.8, 0.9, 2, 1, 1},
				{"team-b", 4, "cpu", map[string]string{"cpu": "3", "memory": "8Gi"}, 0.6, 0.3, 2, 1, 7},
				{"team-c", 4, "cpu", map[string]string{"cpu": "4", "memory": "8Gi"}, 0.6, 0.3, 2, 1, 1},
			},
		},
		"mt-dra-cohort": {
			file:  "mt-dra-cohort.yaml",
			level: 1.2,
			want: []model{
				{"train", 2, "example.com/gpu", map[string]string{"cpu": "8", "memory": "16Gi", "example.com/gpu": "2"}, 1.2 * 0.85 * 2 / 2.4, 1.2 * 0.85, 2.4, (0.6*4*2+0.4*9*2)/(2.4*2.4) - 1, 1},
				{"infer", 4, "example.com/gpu", map[string]string{"cpu": "8", "memory": "16Gi", "example.com/gpu": "4"}, 1.2 * 0.4 * 4, 1.2 * 0.4, 1, 1, 1},
			},
		},
		"mixed service laws": {
			spec:  validSpec(),
			level: 0.8,
			// team-a: E[S²] = 0.7 × 2² × 2 + 0.3 × 4² × 1.5; team-b borrows
			// 2 lent by team-a (the rest: its own lent CPU) and 4Gi.
			want: []model{
				{"team-a", 2, "cpu", map[string]string{"cpu": "1", "memory": "4Gi", "example.com/gpu": "0"}, 0.8 * 0.8 * 2 / 2.6, 0.64, 2.6, 12.8/(2.6*2.6) - 1, 1},
				{"team-b", 2, "cpu", map[string]string{"cpu": "2", "memory": "4Gi"}, 0.4, 0.2, 1, 1, 1},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := tc.spec
			if tc.file != "" {
				var err error
				if s, err = LoadSpec(filepath.Join("..", "..", "..", "test", "eval", tc.file)); err != nil {
					t.Fatal(err)
				}
			}
			p := mustPlan(t, s, tc.level, 0)
			var got []model
			for _, q := range p.Queues {
				m := model{q.Name, q.KEff.Servers, q.KEff.Resource, map[string]string{}, q.Lambda, q.Rho, q.MeanService, q.ServiceSCV, q.ArrivalSCV}
				g := q.Capacity.ResourceGroups[0]
				for ri, r := range g.Resources {
					m.Borrowable[r] = capacity.FormatQuantity(r, g.Flavors[0].Quotas[ri].Borrowable)
				}
				got = append(got, m)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(1e-9, 0)); diff != "" {
				t.Errorf("queue models (-want +got):\n%s", diff)
			}
		})
	}
}
