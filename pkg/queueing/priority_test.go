package queueing

import (
	"errors"
	"math"
	"testing"
)

func TestAnalyzePriorityClassesHandValues(t *testing.T) {
	// k = 4, all classes E[S] = 20 s and exponential.
	// High (priority 10): λ = 0.05, ρ_high = 0.05·20/4 = 0.25. C(4, 0.25):
	// a = 1, B(4,1) = (1/24)/(65/24) = 1/65, C = (1/65)/(1 − 0.25·64/65) = 1/49,
	// W = (1/49)·20/(4·0.75) = 20/147 = 0.136054 s.
	// Low (priority 1): λ = 0.078, ρ_low = (0.05+0.078)·20/4 = 0.64,
	// W = 4.727602 s as for the paper's point.
	classes := []PriorityClass{
		{Priority: 1, ArrivalRate: 0.078, MeanService: 20, ServiceSCV: 1},
		{Priority: 10, ArrivalRate: 0.05, MeanService: 20, ServiceSCV: 1},
	}
	got, err := AnalyzePriorityClasses(4, classes)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Priority != 1 || got[1].Priority != 10 {
		t.Fatalf("results %+v, want one per class in input order", got)
	}
	low, high := got[0], got[1]
	assertApprox(t, "ρ_high", high.Utilization, 0.25, 1e-12)
	assertApprox(t, "C_high", high.Wait.WaitProbability, 1.0/49, 1e-9)
	assertApprox(t, "W_high", high.Wait.MeanWait, 20.0/147, 1e-9)
	assertApprox(t, "ρ_low", low.Utilization, 0.64, 1e-12)
	assertApprox(t, "W_low", low.Wait.MeanWait, 4.727602, 1e-6)
	for _, r := range got {
		if !r.Stable || !r.Wait.Stable {
			t.Errorf("priority %d unstable: %+v", r.Priority, r)
		}
		assertApprox(t, "mixture mean", r.MeanService, 20, 1e-12)
		assertApprox(t, "mixture SCV", r.ServiceSCV, 1, 1e-12)
	}
}

func TestAnalyzePriorityClassesMixture(t *testing.T) {
	// Two deterministic classes at one priority, λ = 0.1 each, E[S] = 10 and
	// 30: mixture mean 20, E[S²] = (100+900)/2 = 500, C_S² = 500/400 − 1 = 0.25.
	// ρ = (1 + 3)/8 = 0.5.
	classes := []PriorityClass{
		{Priority: 5, ArrivalRate: 0.1, MeanService: 10},
		{Priority: 5, ArrivalRate: 0.1, MeanService: 30},
	}
	got, err := AnalyzePriorityClasses(8, classes)
	if err != nil {
		t.Fatal(err)
	}
	want, err := PaperApproximation1(8, 0.5, 20, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range got {
		assertApprox(t, "mean", r.MeanService, 20, 1e-12)
		assertApprox(t, "SCV", r.ServiceSCV, 0.25, 1e-12)
		assertApprox(t, "ρ", r.Utilization, 0.5, 1e-12)
		if r.Wait != want {
			t.Errorf("class %d wait %+v, want %+v", i, r.Wait, want)
		}
	}
}

func TestAnalyzePriorityClassesEdgeCases(t *testing.T) {
	t.Run("no classes", func(t *testing.T) {
		got, err := AnalyzePriorityClasses(3, nil)
		if err != nil || len(got) != 0 {
			t.Errorf("got %v, %v; want empty, nil", got, err)
		}
	})
	t.Run("idle classes use equal weights", func(t *testing.T) {
		got, err := AnalyzePriorityClasses(3, []PriorityClass{
			{Priority: 0, MeanService: 10},
			{Priority: 0, MeanService: 30},
		})
		if err != nil {
			t.Fatal(err)
		}
		assertApprox(t, "mean", got[0].MeanService, 20, 1e-12)
		if got[0].Utilization != 0 || got[0].Wait.MeanWait != 0 || !got[0].Wait.Stable {
			t.Errorf("idle class %+v, want ρ = 0 and no wait", got[0])
		}
	})
	t.Run("high class stable, low class unstable", func(t *testing.T) {
		got, err := AnalyzePriorityClasses(2, []PriorityClass{
			{Priority: 9, ArrivalRate: 0.05, MeanService: 20, ServiceSCV: 1},
			{Priority: -3, ArrivalRate: 0.1, MeanService: 20, ServiceSCV: 1},
		})
		if err != nil {
			t.Fatal(err)
		}
		if !got[0].Stable || got[1].Stable || got[1].Wait.Stable || got[1].Wait.MeanWait != 0 {
			t.Errorf("got %+v, want priority 9 stable (ρ=0.5) and -3 unstable (ρ=1.5)", got)
		}
		assertApprox(t, "ρ_-3", got[1].Utilization, 1.5, 1e-12)
	})
	for name, tc := range map[string]struct {
		servers int
		classes []PriorityClass
	}{
		"zero servers":        {servers: 0, classes: []PriorityClass{{ArrivalRate: 1, MeanService: 1}}},
		"negative rate":       {servers: 2, classes: []PriorityClass{{ArrivalRate: -1, MeanService: 1}}},
		"NaN service":         {servers: 2, classes: []PriorityClass{{ArrivalRate: 1, MeanService: math.NaN()}}},
		"infinite SCV":        {servers: 2, classes: []PriorityClass{{ArrivalRate: 1, MeanService: 1, ServiceSCV: math.Inf(1)}}},
		"overflowing moments": {servers: 2, classes: []PriorityClass{{ArrivalRate: 1e300, MeanService: 1e300}}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := AnalyzePriorityClasses(tc.servers, tc.classes); !errors.Is(err, ErrInvalidInput) {
				t.Errorf("error = %v, want ErrInvalidInput", err)
			}
		})
	}
}
