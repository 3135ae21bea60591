package engine

// Method says how a wait estimate was computed.
type Method string

const (
	// MethodForecast: a Monte Carlo roll of the live queue with the
	// ClusterQueue's observed service times.
	MethodForecast Method = "Forecast"
	// MethodAPriori: the same roll with an a-priori exponential service law
	// (the configured prior, or the workloads' maximum execution times),
	// because too few completions have been observed.
	MethodAPriori Method = "APriori"
	// MethodNone: no wait is given: the workload is Unfeasible, or nothing
	// is known yet about service times.
	MethodNone Method = "None"
)
