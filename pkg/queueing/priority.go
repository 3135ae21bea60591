package queueing

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// PriorityClass is one workload priority class sharing a ClusterQueue's k
// servers. A higher Priority preempts a lower one (Kueue's convention).
type PriorityClass struct {
	// Priority is the class's priority value; classes with equal values are
	// one class for the purpose of ρ_p.
	Priority int32
	// ArrivalRate is λ_p per second. Fold the class's preemption re-entry
	// rate in here if it is to be counted (λ_p + μ_p,p).
	ArrivalRate float64
	// MeanService is E[S_p] in seconds.
	MeanService float64
	// ServiceSCV is C_{S,p}² of the class's service times.
	ServiceSCV float64
}

// PriorityClassResult is the analysis of one PriorityClass, as seen by that
// class under preemptive priority.
type PriorityClassResult struct {
	// Priority is the class's priority value.
	Priority int32
	// Utilization is ρ_p = Σ_{p' ≥ p} λ_{p'}·E[S_{p'}] / k, the load of this
	// class and every class that preempts it.
	Utilization float64
	// Stable is ρ_p < 1.
	Stable bool
	// MeanService and ServiceSCV describe the service time of the mixture of
	// classes ≥ p (see AnalyzePriorityClasses).
	MeanService float64
	ServiceSCV  float64
	// Wait is the paper's Approximation 1 evaluated at ρ_p with the mixture's
	// E[S] and C_S².
	Wait WaitDistribution
}

// AnalyzePriorityClasses applies the paper's priority-class rule: class p's
// wait depends only on the load of classes with priority ≥ p,
//
//	ρ_p = Σ_{p' ≥ p} λ_{p'} · E[S_{p'}] / k,
//
// and its mean wait is Approximation 1 at ρ_p:
//
//	W_p = C(k, ρ_p) · E[S_{≥p}] / (k(1 − ρ_p)) · (C²_{S,≥p} + 1) / 2.
//
// E[S_{≥p}] and C²_{S,≥p} are those of the arrival-weighted mixture of the
// service-time distributions of classes ≥ p (an arrival to the servers that
// class p competes for is of class j with probability φ_j = λ_j / Σλ):
//
//	E[S_{≥p}]   = Σ φ_j E[S_j],
//	E[S²_{≥p}]  = Σ φ_j E[S_j]² (1 + C²_{S,j}),
//	C²_{S,≥p}  = E[S²_{≥p}] / E[S_{≥p}]² − 1.
//
// This keeps ρ_p = (Σλ_j)·E[S_{≥p}]/k consistent with the mixture, and lets a
// mix of short and long classes raise the variability correction as it
// should. When every class ≥ p has λ = 0 the mixture weights are equal (and
// the wait is 0 because ρ_p = 0).
//
// The result has one entry per input class, in input order; classes with
// equal priority get equal results. Unstable classes (ρ_p ≥ 1) have
// Stable=false and an unstable Wait; lower classes are not thereby invalid,
// just unstable too. It returns an error wrapping ErrInvalidInput for servers
// outside [1, MaxServers], a negative, NaN or infinite field, or sums that
// overflow float64. No classes gives an empty result.
func AnalyzePriorityClasses(servers int, classes []PriorityClass) ([]PriorityClassResult, error) {
	if err := checkServers(servers); err != nil {
		return nil, err
	}
	for i, c := range classes {
		for _, f := range []struct {
			name  string
			value float64
		}{
			{"arrival rate", c.ArrivalRate},
			{"mean service time", c.MeanService},
			{"service-time SCV", c.ServiceSCV},
		} {
			if err := checkNonNegativeFinite(f.name, f.value); err != nil {
				return nil, fmt.Errorf("priority class %d (priority %d): %w", i, c.Priority, err)
			}
		}
	}

	// Visit classes from the highest priority down, accumulating the sums
	// over classes ≥ p; record them at each distinct priority.
	order := make([]int, len(classes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(classes[b].Priority, classes[a].Priority)
	})

	type sums struct {
		count                    int
		rate, load, secondMoRate float64 // Σλ, Σλ·E[S], Σλ·E[S²]
		meanSum, secondMoSum     float64 // ΣE[S], ΣE[S²] (equal weights)
	}
	atPriority := make(map[int32]sums, len(classes))
	var acc sums
	for i := 0; i < len(order); {
		p := classes[order[i]].Priority
		for ; i < len(order) && classes[order[i]].Priority == p; i++ {
			c := classes[order[i]]
			second := c.MeanService * c.MeanService * (1 + c.ServiceSCV)
			acc.count++
			acc.rate += c.ArrivalRate
			acc.load += c.ArrivalRate * c.MeanService
			acc.secondMoRate += c.ArrivalRate * second
			acc.meanSum += c.MeanService
			acc.secondMoSum += second
		}
		for _, v := range []float64{acc.rate, acc.load, acc.secondMoRate, acc.meanSum, acc.secondMoSum} {
			if math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, invalidf("priority classes ≥ %d: arrival or service-time moments overflow", p)
			}
		}
		atPriority[p] = acc
	}

	out := make([]PriorityClassResult, len(classes))
	for i, c := range classes {
		s := atPriority[c.Priority]
		var mean, second float64
		if s.rate > 0 {
			mean, second = s.load/s.rate, s.secondMoRate/s.rate
		} else {
			mean, second = s.meanSum/float64(s.count), s.secondMoSum/float64(s.count)
		}
		scv := 0.0
		if mean > 0 {
			scv = math.Max(0, second/(mean*mean)-1)
		}
		if math.IsInf(scv, 0) || math.IsNaN(scv) {
			return nil, invalidf("priority classes ≥ %d: service-time SCV overflows", c.Priority)
		}
		rho := s.load / float64(servers)
		out[i] = PriorityClassResult{
			Priority:    c.Priority,
			Utilization: rho,
			Stable:      rho < 1,
			MeanService: mean,
			ServiceSCV:  scv,
			Wait:        mmkScaled(servers, rho, mean, (scv+1)/2),
		}
	}
	return out, nil
}
