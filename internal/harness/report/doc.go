// Package report is the evaluation harness's reports: what the runner
// (internal/harness/runner) observed of a scenario's replicas (ReplicaRun,
// WorkloadRun) and the estimator's ledger scores (ScoreRecorder), joined
// into a Report (Build) that scores every predictor, the exact oracle
// among them, on the same workloads and writes itself as markdown, JSON,
// a per-workload CSV and plots; and, from the files of earlier runs, the
// summary of a results directory (WriteDirSummary: coverage targets,
// MAE-ratio targets, coverage over the run) and the replay of the
// estimator's calibrators (WriteCalibrationReplay).
package report
