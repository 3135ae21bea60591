package engine

import "github.com/kueue-waittime/kueue-waittime/pkg/calibration"

// Calibration is how one refresh turns the roll's P50 and P90 into the
// published ones: Q50 and Q90 are the adjustments it applies to the
// ClusterQueue's workloads (see [Calibration.Publish]) and Eps the scale
// floor of the conformity scores, seconds (see calibration.Quantile).
//
// Q50 and Q90 are those of the ClusterQueue's own conformal calibrators
// once they have enough scores; before that, those of the calibrators that
// every ClusterQueue feeds together (Pooled), once these have enough; 0
// before either has. The scores are log-ratios of realized to predicted
// waits, free of each ClusterQueue's time scale, so the pool is a fair
// prior: a ClusterQueue's first scored workloads are otherwise published
// uncalibrated, and the roll's raw quantiles err the same way in most
// ClusterQueues of a manager (they share its scheduler, its API server
// and the model's simplifications).
type Calibration struct {
	Q50, Q90, Eps float64
	// Pooled is the pooled calibrators' adjustment at that moment, applied
	// or not: what they would have published.
	Pooled Adjustment
	// Priorities are the adjustments of the ClusterQueue's per-priority
	// calibrators at that moment; those with enough scores (Applied) are
	// published in place of Q50 and Q90 for workloads of their priority.
	Priorities map[int32]Adjustment
}

// Adjustment is one pair of calibrators' adjustments of the P50 and P90;
// Applied says that both have enough scores to act.
type Adjustment struct {
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

// PublishWith is Publish with the adjustments a (a priority's, or the
// pool's), applied or not: what those calibrators would have published.
func (c Calibration) PublishWith(a Adjustment, rawP50, rawP90 float64) (p50, p90 float64) {
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
