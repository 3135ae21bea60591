package queueing

import "math"

// MMkWait returns the exact waiting-time law of the M/M/k queue (Poisson
// arrivals, exponential service, FCFS) with k = servers, utilization ρ = rho
// and mean service time E[S] = meanService seconds:
//
//	P(W > 0) = C(k, ρ),   E[W] = C(k, ρ) · E[S] / (k(1 − ρ)),
//	P(W > t) = C(k, ρ) · exp(−kμ(1 − ρ)·t),  μ = 1/E[S].
//
// ρ ≥ 1 (including +Inf) gives an unstable distribution and no error.
// It returns an error wrapping ErrInvalidInput for servers outside
// [1, MaxServers], ρ negative or NaN, or E[S] negative, NaN or infinite.
func MMkWait(servers int, rho, meanService float64) (WaitDistribution, error) {
	if err := checkModelArgs(servers, rho, meanService); err != nil {
		return WaitDistribution{}, err
	}
	return mmkScaled(servers, rho, meanService, 1), nil
}

// PaperApproximation1 returns the paper's Approximation 1 ("Modified Erlang-C
// Wait Time Estimate", Eq. waitapprox; Cosmetatos–Tijms style) for an M/G/k
// queue with k = servers, utilization ρ = rho, mean service time
// E[S] = meanService seconds and service-time SCV C_S² = serviceSCV:
//
//	Ŵ_q = C(k, ρ) · E[S] / (k(1 − ρ)) · (C_S² + 1) / 2.
//
// It is exact for M/M/k (C_S² = 1); at C_S² = 0 it gives half the M/M/k wait,
// the usual M/D/k approximation (exact for M/D/1 by Pollaczek–Khinchine, not
// for k > 1). The paper calls it Cosmetatos–Tijms; strictly it is the
// two-moment (Lee–Longton) form that Tijms presents, without Cosmetatos's
// extra M/D/k correction term, and it is implemented here exactly as the
// paper writes it. It carries no proven error bound; the paper observed it to
// overestimate Kueue's waits by 2.3–18×. The returned law keeps
// P(W > 0) = C(k, ρ) and an exponential conditional wait with mean Ŵ_q/C
// (see WaitDistribution).
//
// ρ ≥ 1 gives an unstable distribution and no error. Errors wrap
// ErrInvalidInput as for MMkWait, and also for a negative, NaN or infinite
// C_S².
func PaperApproximation1(servers int, rho, meanService, serviceSCV float64) (WaitDistribution, error) {
	if err := checkModelArgs(servers, rho, meanService); err != nil {
		return WaitDistribution{}, err
	}
	if err := checkNonNegativeFinite("service-time SCV", serviceSCV); err != nil {
		return WaitDistribution{}, err
	}
	return mmkScaled(servers, rho, meanService, (serviceSCV+1)/2), nil
}

// WhittGIGkWait returns the Allen–Cunneen approximation, in the form Whitt
// uses as the base of his GI/G/m approximations, for a GI/G/k queue with
// k = servers, utilization ρ = rho, mean service time E[S] = meanService
// seconds, interarrival SCV c_a² = arrivalSCV and service SCV
// c_s² = serviceSCV:
//
//	E[W] ≈ ((c_a² + c_s²) / 2) · E[W_{M/M/k}],
//	E[W_{M/M/k}] = C(k, ρ) · E[S] / (k(1 − ρ)).
//
// With Poisson arrivals (c_a² = 1, the paper's assumption) it coincides with
// PaperApproximation1. Measured arrival variability changes it: periodic
// arrivals (c_a² = 0) halve the variability factor of exponential service,
// bursty arrivals (c_a² > 1) raise it. Whitt's refined heavy-traffic
// correction factor is not applied. The returned law keeps P(W > 0) = C(k, ρ)
// and scales the conditional exponential to the mean (see WaitDistribution).
//
// ρ ≥ 1 gives an unstable distribution and no error. Errors wrap
// ErrInvalidInput as for PaperApproximation1, and also for a negative, NaN or
// infinite c_a².
func WhittGIGkWait(servers int, rho, meanService, arrivalSCV, serviceSCV float64) (WaitDistribution, error) {
	if err := checkModelArgs(servers, rho, meanService); err != nil {
		return WaitDistribution{}, err
	}
	if err := checkNonNegativeFinite("interarrival SCV", arrivalSCV); err != nil {
		return WaitDistribution{}, err
	}
	if err := checkNonNegativeFinite("service-time SCV", serviceSCV); err != nil {
		return WaitDistribution{}, err
	}
	return mmkScaled(servers, rho, meanService, arrivalSCV/2+serviceSCV/2), nil
}

// mmkScaled returns the law with P(W > 0) = C(k, ρ) and
// E[W] = factor · C(k, ρ) · E[S] / (k(1 − ρ)), for validated arguments.
func mmkScaled(servers int, rho, meanService, factor float64) WaitDistribution {
	if rho >= 1 {
		return unstableWait
	}
	c := ErlangC(servers, rho)
	mean := c * (meanService / float64(servers)) / (1 - rho) * factor
	return newWaitDistribution(c, mean)
}

func checkModelArgs(servers int, rho, meanService float64) error {
	if err := checkServers(servers); err != nil {
		return err
	}
	if err := checkUtilization(rho); err != nil {
		return err
	}
	return checkNonNegativeFinite("mean service time", meanService)
}

// ArrivalRateForUtilization returns the arrival rate λ = ρ·k/E[S] per second
// that loads k = servers servers with mean service time E[S] = meanService
// seconds to utilization ρ = rho (the paper's evaluation sweep,
// λ = ρ·k_eff/E[S]). ρ ≥ 1 is allowed, so that callers can ask for an
// overloaded queue.
//
// It returns an error wrapping ErrInvalidInput for servers outside
// [1, MaxServers], ρ negative, NaN or infinite, or E[S] not strictly positive
// and finite.
func ArrivalRateForUtilization(rho float64, servers int, meanService float64) (float64, error) {
	if err := checkServers(servers); err != nil {
		return 0, err
	}
	if err := checkNonNegativeFinite("utilization", rho); err != nil {
		return 0, err
	}
	if err := checkNonNegativeFinite("mean service time", meanService); err != nil {
		return 0, err
	}
	if meanService == 0 {
		return 0, invalidf("mean service time must be positive to derive an arrival rate")
	}
	lambda := rho * float64(servers) / meanService
	if math.IsInf(lambda, 0) {
		return 0, invalidf("arrival rate for utilization %g, %d servers, mean service %gs overflows", rho, servers, meanService)
	}
	return lambda, nil
}
