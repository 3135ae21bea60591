package engine

import (
	"math"
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// Stats is what a roll takes of a ClusterQueue's measured statistics. Rates
// are per second, times in seconds; a zero value means "not measured".
type Stats struct {
	// ArrivalRate is λ, the new workloads per second, with ArrivalSCV the
	// squared coefficient of variation of their intervals (1, Poisson, until
	// measured); valid when HasArrivals.
	ArrivalRate, ArrivalSCV float64
	HasArrivals             bool
	// PriorityRates are the measured arrival rates by priority (those
	// with enough arrivals to tell).
	PriorityRates map[int32]float64
	// PriorityWindows are the spans those rates were measured over
	// (stats.EventRate.Exposure), in seconds: the roll extrapolates a
	// rate no further ahead.
	PriorityWindows map[int32]float64
	// ShapeArrivals split the measured arrival rates of PriorityRates by
	// demand shape, as the ClusterQueue's recent admissions share them out
	// (a priority whose admissions showed one shape has one). A
	// BestEffortFIFO roll gives these of its lowest pending priorities to
	// the pending workloads they can pass (see passingArrivals).
	ShapeArrivals []ShapeArrival
	// PriorityService are the service samples of the priorities with at
	// least BootstrapServiceBelow of them, when the ClusterQueue has seen
	// more than one priority.
	PriorityService map[int32][]float64
	// ShapeService are the service samples of the demand shapes of a
	// priority, for the priorities that have seen more than one shape: a
	// workload of the priority and shape is rolled with its shape's law
	// once the sample holds engineConfig.MinServiceSamples (see newShapeLaws),
	// over its priority's and the pooled one.
	ShapeService []ShapeService
	// PreemptionRate is μ_p, preempted workloads re-entering per second.
	PreemptionRate float64
	// ServiceSample is the observed service times; ServiceMean and
	// ServiceSCV their mean and squared coefficient of variation; valid
	// when HasService.
	ServiceSample           []float64
	ServiceMean, ServiceSCV float64
	HasService              bool
	// AdmissionLatency is the mean delay between a completion that frees
	// quota while workloads are pending and the next admission;
	// AdmissionLatencySample holds the recent delays it is the mean of (the
	// roll draws each admission's latency from them).
	AdmissionLatency       float64
	AdmissionLatencySample []float64
	// FirstAttemptLatencySample holds recent delays from the arrival of a
	// workload the scheduler admitted at its first attempt to that
	// admission (see forecast.Queue.FirstAttemptLatencySample).
	FirstAttemptLatencySample []float64
	// PreemptionDelay is the mean delay between a preemption decision and
	// the preemptor's admission.
	PreemptionDelay float64
	// PreemptionReactionSample holds recent delays from a preemptor's
	// arrival to its preemption decision (see
	// forecast.Queue.PreemptionReactionSample).
	PreemptionReactionSample []float64
	// PreemptionDelaySample holds the recent delays PreemptionDelay is
	// the mean of (see forecast.Queue.PreemptionDelaySample).
	PreemptionDelaySample []float64
	// Calibration is how the roll's P50 and P90 are published.
	Calibration Calibration
}

// Seconds converts s seconds to a Duration: 0 for a non-positive or NaN s,
// the largest Duration for one beyond it.
func Seconds(s float64) time.Duration {
	if !(s > 0) {
		return 0
	}
	if s >= math.MaxInt64/float64(time.Second) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(s * float64(time.Second))
}

// finiteNonNegative is v when it is finite and positive, else 0.
func finiteNonNegative(v float64) float64 {
	if !(v > 0) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// ShapeArrival is the arrivals of one priority and demand shape: their
// rate (per second) and how far back it was measured (seconds; the roll
// extrapolates it no further ahead).
type ShapeArrival struct {
	Priority      int32
	Demand        capacity.Workload
	RatePerSecond float64
	WindowSeconds float64
}

// ShapeService is the service times (seconds) of the workloads of one
// priority and demand shape that completed.
type ShapeService struct {
	Priority int32
	Demand   capacity.Workload
	Sample   []float64
}
