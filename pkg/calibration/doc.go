// Package calibration keeps a forecaster's predicted quantiles honest
// online: adaptive conformal inference (Gibbs & Candès, "Adaptive
// Conformal Inference Under Distribution Shift", NeurIPS 2021) over a
// time-decayed window of log-ratio conformity scores. It has no Kubernetes
// imports; the estimator keeps one calibrator per ClusterQueue and quantile
// and feeds it the prediction ledger's outcomes.
package calibration
