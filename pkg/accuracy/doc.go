// Package accuracy scores wait-time predictions against the waits that were
// realized. It is the single scoring code path of the evaluation harness,
// the demo summary and the score command, so that every figure they print
// means the same thing.
//
// Several predictors (the state-conditioned forecast, the paper's
// Approximation 1, the EMA baseline, …) are scored on the same set of
// workloads: one []Sample per predictor, aligned index by index, each
// Sample holding the predictor's wait, the realized wait and a batch index.
//
// Conventions used throughout:
//
//   - Times are in seconds (float64). The error of a sample is
//     e = Predicted − Actual, so a positive error (and a positive bias) means
//     the predictor promised a longer wait than the workload had.
//   - A sample with a NaN Predicted or Actual cannot be scored: it is
//     dropped and counted in a Dropped field, never silently. Values beyond
//     ±1e12 s (about 31,700 years), including ±Inf, are clamped to ±1e12 s,
//     so an absurd prediction still counts as a huge but finite error.
//   - Confidence intervals are two-sided at 95%. Waits of successive
//     workloads are correlated (a long queue delays everyone behind it), so
//     intervals for means use batch means: the caller cuts the time-ordered
//     samples into contiguous batches (see Batches), each batch yields one
//     nearly independent figure, and a Student-t interval with B−1 degrees
//     of freedom is formed over the B batches. Ten to thirty batches is the
//     usual choice; batches must be long compared with the correlation time
//     of the queue (a busy period) for the interval to be honest. Coverage
//     intervals (Wilson) assume independent samples and are too narrow when
//     they are not.
//   - A figure that does not exist (an interval from fewer than 2 batches, a
//     ratio over a zero denominator) is reported through an ok result or an
//     Interval with Defined = false, never as NaN or Inf. No function here
//     panics, and no output is NaN or ±Inf, whatever the input.
//
// The package imports only the standard library and knows nothing of
// Kubernetes or Kueue.
package accuracy
