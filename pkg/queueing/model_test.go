package queueing

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestModelValidate(t *testing.T) {
	valid := Model{Servers: 4, ArrivalRate: 0.1, PreemptionRate: 0.01, MeanService: 20, ServiceSCV: 1, ArrivalSCV: 1}
	nan, inf := math.NaN(), math.Inf(1)
	tests := map[string]struct {
		mutate   func(*Model)
		wantText string // empty: valid
	}{
		"valid":                     {mutate: func(*Model) {}},
		"all zero rates is valid":   {mutate: func(m *Model) { m.ArrivalRate, m.PreemptionRate = 0, 0 }},
		"zero service time valid":   {mutate: func(m *Model) { m.MeanService = 0 }},
		"overloaded is valid":       {mutate: func(m *Model) { m.ArrivalRate = 10 }},
		"zero servers":              {mutate: func(m *Model) { m.Servers = 0 }, wantText: "servers must be at least 1"},
		"negative servers":          {mutate: func(m *Model) { m.Servers = -2 }, wantText: "servers must be at least 1"},
		"too many servers":          {mutate: func(m *Model) { m.Servers = MaxServers + 1 }, wantText: "servers must be at most"},
		"negative arrival rate":     {mutate: func(m *Model) { m.ArrivalRate = -1 }, wantText: "arrival rate must be non-negative"},
		"NaN arrival rate":          {mutate: func(m *Model) { m.ArrivalRate = nan }, wantText: "arrival rate is NaN"},
		"infinite preemption rate":  {mutate: func(m *Model) { m.PreemptionRate = inf }, wantText: "preemption rate is infinite"},
		"negative mean service":     {mutate: func(m *Model) { m.MeanService = -20 }, wantText: "mean service time must be non-negative"},
		"NaN service SCV":           {mutate: func(m *Model) { m.ServiceSCV = nan }, wantText: "service-time SCV is NaN"},
		"negative interarrival SCV": {mutate: func(m *Model) { m.ArrivalSCV = -1 }, wantText: "interarrival SCV must be non-negative"},
		"offered load overflow": {
			mutate:   func(m *Model) { m.ArrivalRate, m.MeanService = 1e200, 1e200 },
			wantText: "offered load",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := valid
			tc.mutate(&m)
			err := m.Validate()
			_, analyzeErr := Analyze(m)
			if tc.wantText == "" {
				if err != nil || analyzeErr != nil {
					t.Fatalf("Validate() = %v, Analyze error = %v; want nil", err, analyzeErr)
				}
				return
			}
			if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.wantText) {
				t.Fatalf("Validate() = %v, want ErrInvalidInput mentioning %q", err, tc.wantText)
			}
			if !errors.Is(analyzeErr, ErrInvalidInput) {
				t.Errorf("Analyze error = %v, want ErrInvalidInput", analyzeErr)
			}
		})
	}
}

func TestAnalyzeHandValues(t *testing.T) {
	tests := map[string]struct {
		model           Model
		wantRho         float64
		wantStable      bool
		wantC           float64
		wantMMk         float64
		wantApprox1     float64
		wantWhitt       float64
		wantLambdaEff   float64
		wantOfferedLoad float64
	}{
		// λ + μ_p = 0.1 + 0.028 = 0.128/s, a = 2.56, ρ = 0.64.
		// M/M/4: 4.727602 s; Approximation 1 at C_S² = 0.64: ·0.82 = 3.876634 s;
		// Whitt at c_a² = 0.5: ·(0.5+0.64)/2 = ·0.57 = 2.694733 s.
		"preemption feedback raises the load": {
			model:   Model{Servers: 4, ArrivalRate: 0.1, PreemptionRate: 0.028, MeanService: 20, ServiceSCV: 0.64, ArrivalSCV: 0.5},
			wantRho: 0.64, wantStable: true, wantC: cPaper,
			wantMMk: 4.727602, wantApprox1: 3.876634, wantWhitt: 2.694733,
			wantLambdaEff: 0.128, wantOfferedLoad: 2.56,
		},
		// Without preemptions: ρ = 0.1·20/4 = 0.5. C(4, 0.5): a = 2,
		// B(4,2) = (2/3)/(1+2+2+4/3+2/3) = 2/21, C = (2/21)/(1 − 0.5·19/21) = 4/23,
		// E[W] = (4/23)·20/(4·0.5) = 40/23 = 1.739130 s.
		"no preemptions": {
			model:   Model{Servers: 4, ArrivalRate: 0.1, MeanService: 20, ServiceSCV: 1, ArrivalSCV: 1},
			wantRho: 0.5, wantStable: true, wantC: 4.0 / 23,
			wantMMk: 40.0 / 23, wantApprox1: 40.0 / 23, wantWhitt: 40.0 / 23,
			wantLambdaEff: 0.1, wantOfferedLoad: 2,
		},
		"idle queue": {
			model:   Model{Servers: 4, MeanService: 20, ServiceSCV: 1, ArrivalSCV: 1},
			wantRho: 0, wantStable: true, wantC: 0,
		},
		// ρ = (0.15 + 0.05)·20/4 = 1: unstable, no wait figures.
		"exactly saturated": {
			model:   Model{Servers: 4, ArrivalRate: 0.15, PreemptionRate: 0.05, MeanService: 20, ServiceSCV: 1, ArrivalSCV: 1},
			wantRho: 1, wantStable: false, wantC: 1,
			wantLambdaEff: 0.2, wantOfferedLoad: 4,
		},
		// The paper's ρ_obs = 1.16 row: Erlang-C undefined.
		"overloaded": {
			model:   Model{Servers: 4, ArrivalRate: 0.232, MeanService: 20, ServiceSCV: 1, ArrivalSCV: 1},
			wantRho: 1.16, wantStable: false, wantC: 1,
			wantLambdaEff: 0.232, wantOfferedLoad: 4.64,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r, err := Analyze(tc.model)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if r.Stable != tc.wantStable {
				t.Fatalf("Stable = %v, want %v", r.Stable, tc.wantStable)
			}
			if r.Servers != tc.model.Servers {
				t.Errorf("Servers = %d, want %d", r.Servers, tc.model.Servers)
			}
			assertApprox(t, "Utilization", r.Utilization, tc.wantRho, 1e-12)
			assertApprox(t, "EffectiveArrivalRate", r.EffectiveArrivalRate, tc.wantLambdaEff, 1e-12)
			assertApprox(t, "OfferedLoad", r.OfferedLoad, tc.wantOfferedLoad, 1e-12)
			assertApprox(t, "WaitProbability", r.WaitProbability, tc.wantC, 1e-9)
			for _, d := range []struct {
				name string
				got  WaitDistribution
				want float64
			}{
				{"MMk", r.MMk, tc.wantMMk},
				{"Approximation1", r.Approximation1, tc.wantApprox1},
				{"Whitt", r.Whitt, tc.wantWhitt},
			} {
				if d.got.Stable != tc.wantStable {
					t.Errorf("%s.Stable = %v, want %v", d.name, d.got.Stable, tc.wantStable)
				}
				assertApprox(t, d.name+".MeanWait", d.got.MeanWait, d.want, 1e-6)
				if _, err := d.got.Quantile(0.9); tc.wantStable == errors.Is(err, ErrUnstable) {
					t.Errorf("%s.Quantile(0.9) error = %v with Stable = %v", d.name, err, tc.wantStable)
				}
			}
		})
	}
}
