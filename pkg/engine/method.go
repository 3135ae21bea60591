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
	// MethodImmediate: nothing is known yet about service times, but the
	// workload would be at the head of the queue and fits the quota free
	// now, so its wait is only the time to its admission: the scheduling
	// cycle's phase and one admission latency (given only by a what-if,
	// see Engine.WhatIf: a pending workload that fits is admitted, not
	// forecast).
	MethodImmediate Method = "Immediate"
	// MethodNone: no wait is given: the workload is Unfeasible, or nothing
	// is known yet about service times and it would not be admitted at
	// once.
	MethodNone Method = "None"
)
