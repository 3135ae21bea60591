// Package score implements `kueue-waittime score`: an operator's accuracy
// report of a running manager's wait time estimates, read from the
// Prometheus metrics the patched Kueue manager exports with the
// WaitTimeEstimation gate on.
//
// The manager's prediction ledger scores every workload at its admission
// against the first estimate published for it, for the forecast and for
// three baselines computed at the same moment (ema, paper, whitt):
// kueue_wait_time_prediction_absolute_error_seconds{predictor} (a
// histogram, so sum/count is an exact MAE and its buckets give an
// approximate median), kueue_wait_time_predictions_unanswered_total,
// kueue_wait_time_quantile_predictions_total{quantile,result} (P50/P90
// coverage) and kueue_wait_time_unscored_workloads_total{reason}, plus the
// queue-model and calibration gauges. score sums those series per
// ClusterQueue, per priority (when a priority or priority_class label is
// present; none is today) and over all ClusterQueues, and derives the
// figures with pkg/accuracy, the one scoring library of the project
// (HistogramQuantile for medians, Wilson for coverage intervals), so that
// they mean what the eval harness's figures mean.
//
// Input is one exposition (everything since the process started) or the
// window between two scrapes of one process: from files, a Kueue
// performance runner's metricsDump.tgz, an HTTP GET of /metrics, or the API
// server's service proxy (client-go). Counters and histograms are
// subtracted series by series; a decrease, or a changed
// process_start_time_seconds, means two processes and is refused.
//
// The package imports no patched Kueue package: it reads only the metric
// names and labels, so it builds against the pristine module.
package score
