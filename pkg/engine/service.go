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
// while it has fewer than BootstrapServiceBelow; before that, an
// exponential law (MethodAPriori) whose mean is the prior m₀ updated by
// the n completions observed so far, of service times x₁…xₙ seconds:
//
//	m = (n₀·m₀ + x₁ + … + xₙ) / (n₀ + n)
//
// the posterior mean of an exponential law's mean under the conjugate
// prior worth n₀ = priorPseudoCompletions completions of mean m₀. m₀ is
// priorMean seconds or, without one, half the mean maximum execution time
// of the known workloads (maxExecSum over maxExecCount): a bound B alone
// says only that a service time lies in [0, B], whose uniform law has
// mean B/2, and the roll still ends each workload by its own bound. With
// neither there is no prior to update: nil and MethodNone.
//
// Running workloads' ages are not counted (as censored observations they
// would be): in a ClusterQueue whose running workloads outlive its first
// completions, they would stretch the mean of every a-priori wait; the
// first completions, the shorter ones, pull the mean down instead, which
// n₀ damps until the observed law takes over at minSamples.
//
// The mean is finite and positive whenever m₀ is: non-finite or negative
// observations are left out.
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
	prior := priorMean
	if prior <= 0 && maxExecCount > 0 {
		prior = maxExecSum / float64(maxExecCount) / 2
	}
	if !(prior > 0) || math.IsInf(prior, 0) {
		return MethodNone, nil
	}
	sum, n := 0.0, 0
	for _, x := range s.ServiceSample {
		if x >= 0 && !math.IsInf(x, 0) {
			sum += x
			n++
		}
	}
	mean := (priorPseudoCompletions*prior + sum) / float64(priorPseudoCompletions+n)
	if m, err := forecast.NewExponential(mean); err == nil {
		return MethodAPriori, m
	}
	return MethodNone, nil
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
