package estimator

import (
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/ledger"
)

// The prediction ledger's lines, their stamps and scores are
// [ledger]'s, with Kueue's names of workloads and ClusterQueues.
type (
	// Predictor names one of the predictions the ledger scores.
	Predictor = ledger.Predictor
	// Prediction is one predictor's answer for the wait that remained
	// from a Score's EstimatedAt (see [ledger.Prediction]).
	Prediction = ledger.Prediction
	// Score is the ledger's verdict on one workload, made at its
	// admission (see [ledger.Score]).
	Score = ledger.Score[workload.Reference, kueue.ClusterQueueReference]

	admitted        = ledger.Admitted[workload.Reference, kueue.ClusterQueueReference]
	trackedWorkload = ledger.Line[kueue.ClusterQueueReference]
)

// The predictors, as [ledger.Predictor] defines them.
const (
	PredictorForecast = ledger.PredictorForecast
	PredictorEMA      = ledger.PredictorEMA
	PredictorPaper    = ledger.PredictorPaper
	PredictorWhitt    = ledger.PredictorWhitt
)

// Predictors lists every Predictor, in the order reports show them.
var Predictors = ledger.Predictors

// ledgerWriter writes the ledger's lines during a refresh (see
// ledger.Writer).
type ledgerWriter = ledger.Writer[workload.Reference, kueue.ClusterQueueReference]
