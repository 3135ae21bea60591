package queueing

import "math"

// Model is the a-priori description of one ClusterQueue as an M/G/k (or
// GI/G/k) queue. All fields must be finite and non-negative; Servers must be
// in [1, MaxServers].
type Model struct {
	// Servers is the effective server count k = k_eff.
	Servers int
	// ArrivalRate is λ, new workloads per second.
	ArrivalRate float64
	// PreemptionRate is μ_p, preempted workloads re-entering the queue per
	// second. The paper treats them as extra arrivals: λ_eff = λ + μ_p.
	PreemptionRate float64
	// MeanService is E[S], the mean service (admitted-to-finished) time in
	// seconds.
	MeanService float64
	// ServiceSCV is C_S² = Var[S]/E[S]², the squared coefficient of variation
	// of service times (1 for exponential, 0 for deterministic).
	ServiceSCV float64
	// ArrivalSCV is c_a², the squared coefficient of variation of
	// interarrival times. It is used only by the Whitt GI/G/k estimate: 1 for
	// Poisson arrivals (the paper's assumption), 0 for periodic arrivals. The
	// zero value therefore means periodic arrivals, not Poisson.
	ArrivalSCV float64
}

// Validate reports whether every field is in range: an error wrapping
// ErrInvalidInput names the first offending field (negative, NaN, infinite,
// Servers outside [1, MaxServers], or an offered load (λ+μ_p)·E[S] that
// overflows float64). A nil error means Analyze will succeed.
func (m Model) Validate() error {
	if err := checkServers(m.Servers); err != nil {
		return err
	}
	for _, f := range []struct {
		name  string
		value float64
	}{
		{"arrival rate", m.ArrivalRate},
		{"preemption rate", m.PreemptionRate},
		{"mean service time", m.MeanService},
		{"service-time SCV", m.ServiceSCV},
		{"interarrival SCV", m.ArrivalSCV},
	} {
		if err := checkNonNegativeFinite(f.name, f.value); err != nil {
			return err
		}
	}
	if load := (m.ArrivalRate + m.PreemptionRate) * m.MeanService; math.IsInf(load, 0) {
		return invalidf("offered load (%g + %g/s) × %gs overflows", m.ArrivalRate, m.PreemptionRate, m.MeanService)
	}
	return nil
}

// Result is the analysis of a Model. When Stable is false every wait law is
// unstable (Stable=false, zero mean) and no wait figure exists.
type Result struct {
	// Servers is k.
	Servers int
	// EffectiveArrivalRate is λ_eff = λ + μ_p per second.
	EffectiveArrivalRate float64
	// OfferedLoad is a = λ_eff · E[S] in Erlangs (mean busy servers).
	OfferedLoad float64
	// Utilization is ρ_eff = (λ + μ_p) · E[S] / k. It may exceed 1.
	Utilization float64
	// Stable is ρ_eff < 1.
	Stable bool
	// WaitProbability is the Erlang-C probability C(k, ρ_eff) = P(W > 0);
	// 1 when unstable.
	WaitProbability float64
	// MMk is the exact M/M/k law (exponential service, Poisson arrivals),
	// ignoring both SCVs.
	MMk WaitDistribution
	// Approximation1 is the paper's Approximation 1 (PaperApproximation1).
	Approximation1 WaitDistribution
	// Whitt is the Allen–Cunneen/Whitt GI/G/k estimate (WhittGIGkWait),
	// using the measured ArrivalSCV.
	Whitt WaitDistribution
}

// Analyze evaluates the model: ρ_eff = (λ + μ_p)·E[S]/k, stability
// ρ_eff < 1, the Erlang-C wait probability and the three wait laws (exact
// M/M/k, the paper's Approximation 1, Whitt's GI/G/k). It returns the
// Validate error, wrapping ErrInvalidInput, for an invalid model. An unstable
// model is not an error: it yields Stable=false.
func Analyze(m Model) (Result, error) {
	if err := m.Validate(); err != nil {
		return Result{}, err
	}
	lambdaEff := m.ArrivalRate + m.PreemptionRate
	load := lambdaEff * m.MeanService
	rho := load / float64(m.Servers)
	r := Result{
		Servers:              m.Servers,
		EffectiveArrivalRate: lambdaEff,
		OfferedLoad:          load,
		Utilization:          rho,
		Stable:               rho < 1,
		WaitProbability:      ErlangC(m.Servers, rho),
	}
	// The arguments are validated above, so these cannot fail.
	r.MMk = mmkScaled(m.Servers, rho, m.MeanService, 1)
	r.Approximation1 = mmkScaled(m.Servers, rho, m.MeanService, (m.ServiceSCV+1)/2)
	r.Whitt = mmkScaled(m.Servers, rho, m.MeanService, m.ArrivalSCV/2+m.ServiceSCV/2)
	return r, nil
}
