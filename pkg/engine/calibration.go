package engine

import (
	"math"

	"github.com/kueue-waittime/kueue-waittime/pkg/calibration"
)

// Calibration is how one refresh turns the roll's P50 and P90 into the
// published ones: Q50 and Q90 are the adjustments of the ClusterQueue's
// conformal calibrators (0 while they have too few scores) and Eps their
// scale floor, seconds (see calibration.Quantile).
type Calibration struct {
	Q50, Q90, Eps float64
	// Priorities are the adjustments of the ClusterQueue's per-priority
	// calibrators at that moment; those with enough scores (Applied) are
	// published in place of Q50 and Q90 for workloads of their priority.
	Priorities map[int32]PriorityAdjustment
}

// PriorityAdjustment is one priority's calibrators' adjustments.
type PriorityAdjustment struct {
	Q50, Q90 float64
	Applied  bool
}

// Publish returns the published P50 and P90 of raw ones (seconds) with the
// ClusterQueue's adjustments: each adjusted, and P90 never below P50.
func (c Calibration) Publish(rawP50, rawP90 float64) (p50, p90 float64) {
	return publishWith(c.Q50, c.Q90, c.Eps, rawP50, rawP90)
}

// PublishFor is Publish for a workload of the given priority: with its
// priority's adjustments once they apply, else the ClusterQueue's. Kueue
// admits by priority first, so the waits of the priorities of one
// ClusterQueue err differently (the higher ones pass the others), and one
// adjustment for all cannot calibrate each.
func (c Calibration) PublishFor(priority int32, rawP50, rawP90 float64) (p50, p90 float64) {
	if a, ok := c.Priorities[priority]; ok && a.Applied {
		return publishWith(a.Q50, a.Q90, c.Eps, rawP50, rawP90)
	}
	return c.Publish(rawP50, rawP90)
}

// PublishMeanFor returns the published expected wait of a workload of the
// given priority from the roll's mean (seconds): the mean takes the
// adjustment its P50 takes (the priority's once it applies, else the
// ClusterQueue's),
//
//	m' = max((m + ε)·e^{q50} − ε, 0).
//
// e^{q50} is the weighted median of (x + ε)/(r + ε) over the recent scored
// workloads, x the wait that happened and r the roll's P50: the factor by
// which the roll's time scale errs for this ClusterQueue. A roll whose
// whole distribution is stretched or squeezed — by capacity it cannot see,
// such as quota neighbours return or reclaim, or a cycle slower than
// measured — errs by that factor in its mean as in its median, so the
// mean is rescaled with it. While the calibrators have too few scores
// q50 = 0 and the mean is published as rolled; a NaN mean stays NaN.
func (c Calibration) PublishMeanFor(priority int32, rawMean float64) float64 {
	q50 := c.Q50
	if a, ok := c.Priorities[priority]; ok && a.Applied {
		q50 = a.Q50
	}
	if math.IsNaN(rawMean) {
		return rawMean
	}
	return calibration.Adjust(rawMean, q50, c.Eps)
}

// PublishWith is Publish with a priority's adjustments a, applied or not:
// what that priority's calibrators would have published.
func (c Calibration) PublishWith(a PriorityAdjustment, rawP50, rawP90 float64) (p50, p90 float64) {
	return publishWith(a.Q50, a.Q90, c.Eps, rawP50, rawP90)
}

func publishWith(q50, q90, eps, rawP50, rawP90 float64) (p50, p90 float64) {
	p50 = calibration.Adjust(rawP50, q50, eps)
	p90 = max(calibration.Adjust(rawP90, q90, eps), p50)
	return p50, p90
}

// CalibrationScale is the scale floor ε of a ClusterQueue's conformity
// scores: a tenth of its mean service time (seconds), so that waits much
// shorter than a service count as about equal (and zero waits stay finite),
// at least a millisecond; a second when no mean service is known.
func CalibrationScale(meanService float64) float64 {
	if !(meanService > 0) {
		return 1
	}
	return max(meanService/10, 0.001)
}
