package engine

import (
	"math"

	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
)

// BootstrapServiceBelow is the sample size below which the observed
// service times are bootstrapped per replica of the roll
// ([forecast.Bootstrap]): the sample mean's relative standard error C_S/√n
// is above 14 % (for C_S = 1) there, comparable to the roll's own spread of
// one admission; above it the sample is taken as the law. A priority gets a
// service law of its own once its sample holds this many.
const BootstrapServiceBelow = 50

// priorPseudoCompletions is n₀, the weight of the a-priori mean service
// time against the completions a ClusterQueue observes (see
// serviceModel): the prior counts as two completions, so that the first
// few observed ones move the mean most of the way towards what the
// ClusterQueue does, but no single early completion decides it.
const priorPseudoCompletions = 2

// serviceModel picks the service law of a roll: the observed sample once it
// holds minSamples completions (MethodForecast), bootstrapped per replica
// while it has fewer than BootstrapServiceBelow. Before that it is an
// exponential law (MethodAPriori). With a configured prior (priorMean
// seconds > 0) its mean is that prior: an operator's figure stands until
// the observed law replaces it. Without one it comes from the known
// workloads' maximum execution times (maxExecSum over maxExecCount, their
// mean B̄). A bound B says only that a service time lies in [0, B], whose
// uniform law has mean B/2, so the prior is m₀ = B̄/2, and the n completions
// observed so far, of service times x₁…xₙ seconds, move it towards what the
// ClusterQueue does:
//
//	m = (n₀·m₀ + x₁ + … + xₙ) / (n₀ + n)
//
// the posterior mean of an exponential law's mean under the conjugate prior
// worth n₀ = priorPseudoCompletions completions of mean m₀. The roll still
// ends each workload by its own bound. Running workloads' ages are not
// counted (as censored observations they would be): in a ClusterQueue whose
// running workloads outlive its first completions they would stretch every
// a-priori wait; the first completions, the shorter ones, pull the mean down
// instead, which n₀ damps.
//
// With neither a prior nor a bound there is nothing to go on: nil and
// MethodNone. The mean is finite and positive whenever the prior is:
// non-finite or negative observations are left out.
func serviceModel(s Stats, minSamples int, priorMean, maxExecSum float64, maxExecCount int) (Method, forecast.ServiceModel) {
	if s.HasService && len(s.ServiceSample) >= minSamples {
		if len(s.ServiceSample) < BootstrapServiceBelow {
			if m, err := forecast.NewBootstrap(s.ServiceSample); err == nil {
				return MethodForecast, m
			}
		} else if m, err := forecast.NewEmpirical(s.ServiceSample); err == nil {
			return MethodForecast, m
		}
	}
	mean := priorMean
	if !(mean > 0) && maxExecCount > 0 {
		mean = boundPosteriorMean(s.ServiceSample, maxExecSum/float64(maxExecCount)/2)
	}
	if !(mean > 0) || math.IsInf(mean, 0) {
		return MethodNone, nil
	}
	if m, err := forecast.NewExponential(mean); err == nil {
		return MethodAPriori, m
	}
	return MethodNone, nil
}

// boundPosteriorMean is (n₀·prior + Σx) / (n₀ + n) over the finite,
// non-negative service times x of sample (see serviceModel), accumulated
// as a running mean so that no sum of large times overflows.
func boundPosteriorMean(sample []float64, prior float64) float64 {
	mean, weight := prior, float64(priorPseudoCompletions)
	for _, x := range sample {
		if x >= 0 && !math.IsInf(x, 0) {
			weight++
			mean += (x - mean) / weight
		}
	}
	return mean
}

// priorityServiceModels are the service laws of the priorities with a
// sample of their own (see Stats.PriorityService): each its observed
// sample, as the pooled law is once it holds BootstrapServiceBelow (a
// sample that makes no law of positive mean is left out); nil when there
// is none.
func priorityServiceModels(samples map[int32][]float64) map[int32]forecast.ServiceModel {
	var out map[int32]forecast.ServiceModel
	for p, sample := range samples {
		m, err := forecast.NewEmpirical(sample)
		if err != nil || !(m.Mean() > 0) {
			// The roll refuses a law whose mean is 0 (service times
			// read from whole-second conditions can all be 0).
			continue
		}
		if out == nil {
			out = make(map[int32]forecast.ServiceModel, len(samples))
		}
		out[p] = m
	}
	return out
}
