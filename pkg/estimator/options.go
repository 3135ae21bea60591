package estimator

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
)

// Defaults of an [Estimator] built without options (see [engine.Settings]).
const (
	DefaultRefreshPeriod      = engine.DefaultRefreshPeriod
	DefaultStatisticsHalfLife = engine.DefaultStatisticsHalfLife
	DefaultMinServiceSamples  = engine.DefaultMinServiceSamples
	DefaultServiceSampleSize  = engine.DefaultServiceSampleSize
	DefaultEMAAlpha           = engine.DefaultEMAAlpha
	DefaultForecastSamples    = engine.DefaultForecastSamples
	DefaultForecastDepth      = engine.DefaultForecastDepth
	DefaultHorizon            = engine.DefaultHorizon
	// DefaultRefreshCPUMillicores: see [WithRefreshCPU].
	DefaultRefreshCPUMillicores = engine.DefaultRefreshCPUMillicores
)

// options are an estimator's plain settings (validated by
// engine.Settings.Validate) and what it is given to work with.
type options struct {
	engine.Settings
	clock         clock.PassiveClock
	rng           *rand.Rand
	log           logr.Logger
	reporter      MetricsReporter
	warmStartFrom client.Reader
	// waitForPodsReady is the manager's: the queue models list it as a
	// feature the forecast does not model (see WithWaitForPodsReady).
	waitForPodsReady bool
}

func defaultOptions() options {
	return options{Settings: engine.DefaultSettings(), clock: clock.RealClock{}, log: logr.Discard()}
}

// Option configures an [Estimator].
type Option func(*options)

// WithClock sets the clock every timestamp is read from (default: the real
// clock). Tests pass a fake clock.
func WithClock(c clock.PassiveClock) Option { return func(o *options) { o.clock = c } }

// WithRand sets the random source of the Monte Carlo forecasts and the
// service-time reservoir (default: a PCG source seeded from the clock at
// construction). It is used under the estimator's lock only.
func WithRand(r *rand.Rand) Option { return func(o *options) { o.rng = r } }

// WithLogger sets the logger. Per-workload messages are logged at V(3),
// per-refresh messages at V(4) and above.
func WithLogger(l logr.Logger) Option { return func(o *options) { o.log = l } }

// WithMetricsReporter sets where the published queue models and the
// prediction errors observed at admission are reported (default: nowhere).
func WithMetricsReporter(r MetricsReporter) Option { return func(o *options) { o.reporter = r } }

// WithRefreshPeriod sets how often the background loop may recompute the
// forecasts when something changed (default 1s, must be > 0). The loop
// stretches it when refreshes are slow: see [WithRefreshCPU].
func WithRefreshPeriod(d time.Duration) Option { return func(o *options) { o.RefreshPeriod = d } }

// WithRefreshCPU sets the CPU the refresh loop may use on average, in
// millicores of one core (default [DefaultRefreshCPUMillicores], in
// [1, 1000]): the loop skips refresh ticks while the time its refreshes
// took exceeds that share of the wall time passed (saving up at most one
// period's share), though it never waits longer than the maximum
// staleness, which wins over the budget. At the default, 1 % of a core, a
// refresh of 10 ms keeps the 1s period, one of 12 ms skips about one tick
// in six and one of 50 ms runs every 5s; the age of an estimate is
// published with it (estimatedAt).
func WithRefreshCPU(millicores int) Option {
	return func(o *options) { o.RefreshMillicores = millicores }
}

// WithMaxStaleness sets how old published results may get when nothing
// changed before they are recomputed anyway, so that running workloads'
// ages advance (must be ≥ the refresh period). Zero, the default, derives it
// from the refresh period by the one staleness rule,
// [refreshschedule.MaxStalenessFor]: 10s
// at the default period of 1s.
func WithMaxStaleness(d time.Duration) Option { return func(o *options) { o.MaxStaleness = d } }

// WithStatisticsHalfLife sets the half-life of the time-decayed arrival,
// preemption and throughput rates (default 30m, must be > 0).
func WithStatisticsHalfLife(d time.Duration) Option { return func(o *options) { o.HalfLife = d } }

// WithMinServiceSamples sets how many observed service times a
// ClusterQueue needs before its forecasts use them (method Forecast) rather
// than the a-priori prior (method APriori) (default 10, must be ≥ 1).
func WithMinServiceSamples(n int) Option { return func(o *options) { o.MinServiceSamples = n } }

// WithServiceSampleSize sets the size of the bounded per-ClusterQueue
// service-time sample (default 512, must be ≥ 1).
func WithServiceSampleSize(n int) Option { return func(o *options) { o.ServiceSampleSize = n } }

// WithEMAAlpha sets α of the paper's EMA baseline of observed waits
// (default 0.3, must be in (0, 1]).
func WithEMAAlpha(a float64) Option { return func(o *options) { o.EMAAlpha = a } }

// WithForecastSamples sets the Monte Carlo replica count of a forecast
// (default [DefaultForecastSamples], in [1, forecast.MaxSamples]).
func WithForecastSamples(n int) Option { return func(o *options) { o.ForecastSamples = n } }

// WithForecastDepth sets how many quotable pending workloads per
// ClusterQueue are rolled forward; deeper ones are extrapolated from the
// simulated throughput (default 128, in [1, forecast.MaxHorizonCount]).
func WithForecastDepth(n int) Option { return func(o *options) { o.ForecastDepth = n } }

// WithHorizon sets the longest wait a forecast reports; longer ones are
// reported as the horizon and flagged (default 7 days, must be > 0).
func WithHorizon(d time.Duration) Option { return func(o *options) { o.Horizon = d } }

// WithPriorMeanService sets the mean service time assumed, as an exponential
// law, before a ClusterQueue has enough observed completions (method
// APriori). Zero (the default) means no prior: until then only workloads
// with maximumExecutionTimeSeconds (an upper bound) give the prior, and
// without any a ClusterQueue's workloads get their admissibility but no wait.
func WithPriorMeanService(d time.Duration) Option {
	return func(o *options) { o.PriorMeanService = d }
}

// WithFairSharing tells the estimator that the manager orders admissions
// within cohorts by fair sharing (the Configuration's fairSharing), which
// the forecast does not model: the queue models of ClusterQueues in a
// cohort then say so (QueueModel.UnmodelledOrdering, QueueModel.Features).
func WithFairSharing(enabled bool) Option { return func(o *options) { o.FairSharing = enabled } }

// WithAdmissionFairSharing tells the estimator that the manager orders the
// pending workloads of ClusterQueues whose admissionScope's admissionMode
// is UsageBasedAdmissionFairSharing by their LocalQueues' usage (the Configuration's admissionFairSharing), which the
// forecast does not model: their queue models then say so.
func WithAdmissionFairSharing(enabled bool) Option {
	return func(o *options) { o.AdmissionFairSharing = enabled }
}

// WithWaitForPodsReady tells the estimator that the manager evicts and
// requeues admitted workloads whose pods are not ready in time (the
// Configuration's waitForPodsReady), which the forecast does not model:
// every queue model then says so (QueueModel.Features).
func WithWaitForPodsReady(enabled bool) Option {
	return func(o *options) { o.waitForPodsReady = enabled }
}

// WithWarmStart makes [Estimator.Start] call [Estimator.WarmStart] with
// reader (the manager's cache, already synced when runnables start) before
// its first refresh.
func WithWarmStart(reader client.Reader) Option { return func(o *options) { o.warmStartFrom = reader } }

func (o *options) validate() error {
	if o.clock == nil {
		return fmt.Errorf("estimator: nil clock")
	}
	return o.Settings.Validate()
}
