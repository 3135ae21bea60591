package queuestats

import (
	"math"
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
	"github.com/kueue-waittime/kueue-waittime/pkg/estimates"
)

// ModelOf is the queue model a refresh at at publishes for ClusterQueue
// cq, of pending workloads, rolled as rolled from the statistics' view v:
// the roll's a-priori model with the EMA baseline, the realized coverage
// and the calibration v holds. The caller sets what the statistics do not
// know (UnmodelledOrdering).
func ModelOf[Q ~string](cq Q, at time.Time, v View, rolled *engine.Rolled, pending int) estimates.QueueModel[Q] {
	model := estimates.QueueModel[Q]{ClusterQueue: cq, At: at, APriori: rolled.Model,
		PendingWorkloads: pending, UnfeasibleWorkloads: rolled.UnfeasibleWorkloads}
	if v.HasEMA {
		model.EMAWait, model.HasEMA = engine.Seconds(v.EMA), true
	}
	model.P50Coverage, model.P90Coverage, model.HasCoverage = v.P50Coverage, v.P90Coverage, v.HasCoverage
	model.ScoredWorkloads = v.Scored
	if v.Calibrated {
		model.Calibrated = true
		model.P50Adjustment, model.P90Adjustment = math.Exp(v.Calibration.Q50), math.Exp(v.Calibration.Q90)
	}
	return model
}
