// Package refreshschedule says when the estimator's refresh loop runs: on
// wall-clock ticks every replica shares ([Next]), as often as a CPU budget
// of a fraction of one core allows and at least once per maximum staleness
// ([Budget]), where the maximum staleness an estimator leaves unset comes
// from its refresh period ([MaxStalenessFor]); [Run] is the loop itself.
//
// It imports nothing of Kueue or Kubernetes and reads no clock of its own:
// the caller passes the times, or to Run the clock it reads.
package refreshschedule
