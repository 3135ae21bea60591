package engine

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

func TestPriorityModels(t *testing.T) {
	cases := map[string]struct {
		servers int
		rates   map[int32]float64
		want    []PriorityModel
	}{
		// M/M/4, E[S] 20 s: ρ_100 = 0.05·20/4 = 0.25, ρ_0 = 0.15·20/4 =
		// 0.75. Erlang C(4, 1) = 0.020408 and C(4, 3) = 0.509434 by hand,
		// W = C·E[S]/(k(1−ρ)).
		"two priorities, the lower one behind both loads": {
			servers: 4,
			rates:   map[int32]float64{0: 0.1, 100: 0.05},
			want: []PriorityModel{
				{Priority: 100, ArrivalRate: 0.05, Utilization: 0.25, Stable: true, MeanWait: 136054 * time.Microsecond},
				{Priority: 0, ArrivalRate: 0.1, Utilization: 0.75, Stable: true, MeanWait: 10188680 * time.Microsecond},
			},
		},
		"the low priority unstable, the high one not": {
			servers: 4,
			rates:   map[int32]float64{0: 0.2, 100: 0.05},
			want: []PriorityModel{
				{Priority: 100, ArrivalRate: 0.05, Utilization: 0.25, Stable: true, MeanWait: 136054 * time.Microsecond},
				{Priority: 0, ArrivalRate: 0.2, Utilization: 1.25},
			},
		},
		"one priority: no breakdown": {servers: 4, rates: map[int32]float64{0: 0.1}},
		"no servers: no breakdown":   {servers: 0, rates: map[int32]float64{0: 0.1, 1: 0.1}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := priorityModels(tc.servers, tc.rates, 20, 1)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(1e-5, 0),
				cmp.Comparer(func(a, b time.Duration) bool { return (a - b).Abs() < 10*time.Microsecond })); diff != "" {
				t.Errorf("priority models (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestNewAPrioriBorrowing checks the one rule of predict and the live
// model: the figures are over the nominal k_eff, and those over k_eff⁺ go
// beside them, also when only borrowing lets a workload run. λ = 0.05/s,
// E[S] = 20 s, M/M/k: k = 2 gives ρ = 0.5, C(2, 1) = 1/3 and W = 20/3 s;
// k = 4 gives ρ = 0.25 and W = 0.136054 s (as in TestPriorityModels).
func TestNewAPrioriBorrowing(t *testing.T) {
	queue := func(nominal, expectedBorrowable int64) *capacity.ClusterQueue {
		return &capacity.ClusterQueue{Name: "cq", ResourceGroups: []capacity.ResourceGroup{{
			Resources: []string{"cpu"},
			Flavors: []capacity.FlavorQuotas{{Name: "default", Quotas: []capacity.Quota{
				{Nominal: nominal, Borrowable: expectedBorrowable, ExpectedBorrowable: expectedBorrowable},
			}}},
		}}}
	}
	mix := []capacity.Class{{Rate: 1, Workload: capacity.Workload{PodSets: []capacity.PodSet{{Name: "main", Count: 1, Requests: map[string]int64{"cpu": 10000}}}}}}
	measured := Stats{HasArrivals: true, ArrivalRate: 0.05, ArrivalSCV: 1, HasService: true, ServiceMean: 20, ServiceSCV: 1}
	halfLoaded := LoadModel{Utilization: 0.5, Stable: true, ProbabilityOfWait: 1.0 / 3, MeanWait: 20 * time.Second / 3, WhittMeanWait: 20 * time.Second / 3}
	quarterLoaded := LoadModel{Utilization: 0.25, Stable: true, ProbabilityOfWait: 0.020408, MeanWait: 136054 * time.Microsecond, WhittMeanWait: 136054 * time.Microsecond}
	rates := APriori{HasArrivalsAndService: true, ArrivalRate: 0.05, ArrivalSCV: 1, MeanService: 20 * time.Second, ServiceSCV: 1}
	withNominal := func(m APriori, l LoadModel) APriori {
		m.HasRates = true
		m.Utilization, m.Stable, m.ProbabilityOfWait, m.MeanWait, m.WhittMeanWait = l.Utilization, l.Stable, l.ProbabilityOfWait, l.MeanWait, l.WhittMeanWait
		return m
	}
	cases := map[string]struct {
		cq    *capacity.ClusterQueue
		stats Stats
		want  APriori
	}{
		"no borrowing: the nominal model alone": {
			cq:    queue(20000, 0),
			stats: measured,
			want: withNominal(func(m APriori) APriori {
				m.EffectiveServers, m.BottleneckFlavor, m.BottleneckResource = 2, "default", "cpu"
				return m
			}(rates), halfLoaded),
		},
		"borrowing: the nominal figures, and those over k_eff⁺ beside them": {
			cq:    queue(20000, 20000),
			stats: measured,
			want: withNominal(func(m APriori) APriori {
				m.EffectiveServers, m.BottleneckFlavor, m.BottleneckResource = 2, "default", "cpu"
				m.EffectiveServersWithBorrowing, m.HasBorrowing = 4, true
				m.WithBorrowing, m.HasRatesWithBorrowing = quarterLoaded, true
				return m
			}(rates), halfLoaded),
		},
		"only borrowing holds a workload: no nominal figures, those with borrowing given": {
			cq:    queue(5000, 15000),
			stats: measured,
			want: func(m APriori) APriori {
				m.EffectiveServers, m.BottleneckFlavor, m.BottleneckResource = 0, "default", "cpu"
				m.EffectiveServersWithBorrowing, m.HasBorrowing = 2, true
				m.WithBorrowing, m.HasRatesWithBorrowing = halfLoaded, true
				return m
			}(rates),
		},
		"borrowing before arrivals are measured: server counts only": {
			cq:    queue(20000, 20000),
			stats: Stats{HasService: true, ServiceMean: 20, ServiceSCV: 1},
			want: APriori{EffectiveServers: 2, BottleneckFlavor: "default", BottleneckResource: "cpu",
				EffectiveServersWithBorrowing: 4, HasBorrowing: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := NewAPriori(tc.cq, mix, tc.stats)
			if err != nil {
				t.Fatalf("NewAPriori: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(1e-5, 0),
				cmp.Comparer(func(a, b time.Duration) bool { return (a - b).Abs() < 10*time.Microsecond })); diff != "" {
				t.Errorf("queue model (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestServiceModelChoosesTheMethod checks that the estimate's one
// enumeration of methods follows the service law the roll is given, and
// the mean of the a-priori law: a configured prior, or half the mean
// bound updated by the completions observed so far.
func TestServiceModelChoosesTheMethod(t *testing.T) {
	ten := []float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	cases := map[string]struct {
		prior        float64
		stats        Stats
		maxExecSum   float64
		maxExecCount int
		wantMethod   Method
		wantMean     float64
	}{
		"enough completions: the observed law": {
			stats:      Stats{HasService: true, ServiceMean: 55, ServiceSample: ten},
			wantMethod: MethodForecast, wantMean: 55,
		},
		"no completion yet, a configured prior: the prior": {
			prior:      30,
			wantMethod: MethodAPriori, wantMean: 30,
		},
		"too few completions, a configured prior: the prior stands": {
			prior:      30,
			stats:      Stats{HasService: true, ServiceMean: 20, ServiceSample: ten[:3]},
			maxExecSum: 500, maxExecCount: 1,
			wantMethod: MethodAPriori, wantMean: 30,
		},
		"no completion, no prior: half the mean maximum execution time": {
			maxExecSum: 120, maxExecCount: 2,
			wantMethod: MethodAPriori, wantMean: 30,
		},
		"too few completions, no prior: half the mean bound, updated": {
			maxExecSum: 120, maxExecCount: 2,
			stats:      Stats{HasService: true, ServiceMean: 15, ServiceSample: ten[:2]},
			wantMethod: MethodAPriori, wantMean: (2*30 + 30) / 4.0,
		},
		"non-finite and negative observations are left out": {
			maxExecSum: 60, maxExecCount: 1,
			stats:      Stats{HasService: true, ServiceSample: []float64{10, math.NaN(), math.Inf(1), -5}},
			wantMethod: MethodAPriori, wantMean: (2*30 + 10) / 3.0,
		},
		"completions but nothing to update": {
			stats:      Stats{HasService: true, ServiceMean: 20, ServiceSample: ten[:3]},
			wantMethod: MethodNone,
		},
		"nothing to go on": {wantMethod: MethodNone},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// Ten completions needed, the estimator's default.
			method, model := serviceModel(tc.stats, 10, tc.prior, tc.maxExecSum, tc.maxExecCount)
			gotMean := 0.0
			if model != nil {
				gotMean = model.Mean()
			}
			if diff := cmp.Diff([2]any{tc.wantMethod, tc.wantMean}, [2]any{method, gotMean}, cmpopts.EquateApprox(1e-9, 0)); diff != "" {
				t.Errorf("(method, mean) (-want,+got):\n%s", diff)
			}
		})
	}
}
