package engine

import "github.com/kueue-waittime/kueue-waittime/pkg/forecast"

// BootstrapServiceBelow is the sample size below which the observed
// service times are bootstrapped per replica of the roll
// ([forecast.Bootstrap]): the sample mean's relative standard error C_S/√n
// is above 14 % (for C_S = 1) there, comparable to the roll's own spread of
// one admission; above it the sample is taken as the law. A priority gets a
// service law of its own once its sample holds this many.
const BootstrapServiceBelow = 50

// serviceModel picks the service law of a roll: the observed sample once it
// holds minSamples completions (MethodForecast), bootstrapped per replica
// while it has fewer than BootstrapServiceBelow, else an exponential prior
// (MethodAPriori) of mean priorMean seconds or, failing that, the mean
// maximum execution time of the known workloads (maxExecSum over
// maxExecCount: an upper bound, so the forecast errs long); nil when there
// is nothing to go on.
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
		prior = maxExecSum / float64(maxExecCount)
	}
	if prior > 0 {
		if m, err := forecast.NewExponential(prior); err == nil {
			return MethodAPriori, m
		}
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
