package queueing

import (
	"errors"
	"math"
	"testing"
)

func finiteNonNegative(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0
}

func checkWaitDistribution(t *testing.T, name string, d WaitDistribution, q float64) {
	t.Helper()
	if !finiteNonNegative(d.MeanWait) || !finiteNonNegative(d.WaitProbability) || d.WaitProbability > 1 {
		t.Fatalf("%s: %+v has a value that is not finite, negative, or C > 1", name, d)
	}
	if !d.Stable && (d.MeanWait != 0 || d.WaitProbability != 1) {
		t.Fatalf("%s: unstable law %+v carries a wait", name, d)
	}
	tq, err := d.Quantile(q)
	switch {
	case err == nil:
		if !finiteNonNegative(tq) {
			t.Fatalf("%s: Quantile(%g) = %g", name, q, tq)
		}
	case errors.Is(err, ErrInvalidInput) || errors.Is(err, ErrUnstable):
		if tq != 0 {
			t.Fatalf("%s: Quantile(%g) = %g with error %v", name, q, tq, err)
		}
	default:
		t.Fatalf("%s: Quantile(%g) unexpected error %v", name, q, err)
	}
	if s := d.Survival(q * 100); math.IsNaN(s) || s < 0 || s > 1 {
		t.Fatalf("%s: Survival = %g", name, s)
	}
}

func FuzzAnalyze(f *testing.F) {
	f.Add(4, 0.1, 0.028, 20.0, 0.64, 1.0, 0.9)
	f.Add(1, 0.05, 0.0, 10.0, 1.0, 0.0, 0.5)
	f.Add(4, 0.2, 0.0, 20.0, 1.0, 1.0, 0.99)
	f.Add(0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5)
	f.Add(-7, math.NaN(), math.Inf(1), -1.0, 1e308, 1e-308, 2.0)
	f.Add(100_000, 4999.0, 0.0, 20.0, 3.0, 2.0, 0.999999)
	f.Add(1, 1e-300, 0.0, 1e300, 1e300, 1e300, 0.9)
	f.Fuzz(func(t *testing.T, servers int, lambda, preemption, meanService, serviceSCV, arrivalSCV, q float64) {
		m := Model{Servers: servers, ArrivalRate: lambda, PreemptionRate: preemption,
			MeanService: meanService, ServiceSCV: serviceSCV, ArrivalSCV: arrivalSCV}
		r, err := Analyze(m)
		if err != nil {
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("Analyze error %v does not wrap ErrInvalidInput", err)
			}
			if m.Validate() == nil {
				t.Fatalf("Analyze failed (%v) but Validate passed", err)
			}
			return
		}
		for name, v := range map[string]float64{
			"EffectiveArrivalRate": r.EffectiveArrivalRate, "OfferedLoad": r.OfferedLoad,
			"Utilization": r.Utilization, "WaitProbability": r.WaitProbability,
		} {
			if !finiteNonNegative(v) {
				t.Fatalf("%s = %g for %+v", name, v, m)
			}
		}
		if r.Stable != (r.Utilization < 1) || r.WaitProbability > 1 {
			t.Fatalf("inconsistent result %+v", r)
		}
		checkWaitDistribution(t, "MMk", r.MMk, q)
		checkWaitDistribution(t, "Approximation1", r.Approximation1, q)
		checkWaitDistribution(t, "Whitt", r.Whitt, q)

		classes := []PriorityClass{
			{Priority: 2, ArrivalRate: lambda, MeanService: meanService, ServiceSCV: serviceSCV},
			{Priority: 1, ArrivalRate: preemption, MeanService: meanService / 2, ServiceSCV: arrivalSCV},
		}
		pr, err := AnalyzePriorityClasses(servers, classes)
		if err != nil {
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("AnalyzePriorityClasses error %v does not wrap ErrInvalidInput", err)
			}
			return
		}
		for _, c := range pr {
			if !finiteNonNegative(c.Utilization) || !finiteNonNegative(c.MeanService) || !finiteNonNegative(c.ServiceSCV) {
				t.Fatalf("priority result %+v has a non-finite or negative value", c)
			}
			checkWaitDistribution(t, "priority", c.Wait, q)
		}
	})
}

func FuzzErlang(f *testing.F) {
	f.Add(4, 0.64)
	f.Add(1, 0.0)
	f.Add(0, 0.5)
	f.Add(-1, math.NaN())
	f.Add(100_000, 0.99)
	f.Add(1000, 1e300)
	f.Fuzz(func(t *testing.T, servers int, x float64) {
		// Keep a fuzzed server count to a size one run can afford in the
		// worst case (a load near the server count).
		if servers > 10_000_000 {
			servers %= 10_000_000
		}
		b := ErlangB(servers, x*math.Max(1, float64(servers)))
		c := ErlangC(servers, x)
		if math.IsNaN(b) || b < 0 || b > 1 || math.IsNaN(c) || c < 0 || c > 1 {
			t.Fatalf("ErlangB = %g, ErlangC = %g for servers=%d x=%g", b, c, servers, x)
		}
	})
}
