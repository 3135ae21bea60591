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

// options are an estimator's plain settings (documented, with their
// defaults and ranges, on engine.Settings) and what it is given to work
// with.
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

// Option configures an [Estimator]. An option of a plain setting sets the
// field of [engine.Settings] it names, whose doc gives its default and
// range; [New] rejects a value out of range.
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

// WithRefreshPeriod sets [engine.Settings.RefreshPeriod].
func WithRefreshPeriod(d time.Duration) Option { return func(o *options) { o.RefreshPeriod = d } }

// WithRefreshCPU sets [engine.Settings.RefreshMillicores].
func WithRefreshCPU(millicores int) Option {
	return func(o *options) { o.RefreshMillicores = millicores }
}

// WithMaxStaleness sets [engine.Settings.MaxStaleness].
func WithMaxStaleness(d time.Duration) Option { return func(o *options) { o.MaxStaleness = d } }

// WithStatisticsHalfLife sets [engine.Settings.HalfLife].
func WithStatisticsHalfLife(d time.Duration) Option { return func(o *options) { o.HalfLife = d } }

// WithMinServiceSamples sets [engine.Settings.MinServiceSamples].
func WithMinServiceSamples(n int) Option { return func(o *options) { o.MinServiceSamples = n } }

// WithServiceSampleSize sets [engine.Settings.ServiceSampleSize].
func WithServiceSampleSize(n int) Option { return func(o *options) { o.ServiceSampleSize = n } }

// WithEMAAlpha sets [engine.Settings.EMAAlpha].
func WithEMAAlpha(a float64) Option { return func(o *options) { o.EMAAlpha = a } }

// WithForecastSamples sets [engine.Settings.ForecastSamples].
func WithForecastSamples(n int) Option { return func(o *options) { o.ForecastSamples = n } }

// WithForecastDepth sets [engine.Settings.ForecastDepth].
func WithForecastDepth(n int) Option { return func(o *options) { o.ForecastDepth = n } }

// WithHorizon sets [engine.Settings.Horizon].
func WithHorizon(d time.Duration) Option { return func(o *options) { o.Horizon = d } }

// WithPriorMeanService sets [engine.Settings.PriorMeanService].
func WithPriorMeanService(d time.Duration) Option {
	return func(o *options) { o.PriorMeanService = d }
}

// WithFairSharing sets [engine.Settings.FairSharing].
func WithFairSharing(enabled bool) Option { return func(o *options) { o.FairSharing = enabled } }

// WithAdmissionFairSharing sets [engine.Settings.AdmissionFairSharing].
func WithAdmissionFairSharing(enabled bool) Option {
	return func(o *options) { o.AdmissionFairSharing = enabled }
}

// WithAdmissionFairSharingUsage sets the [engine.Settings] of admission fair
// sharing's usage, the Configuration's admissionFairSharing
// (AdmissionFairSharingHalfLife, AdmissionFairSharingSamplingInterval,
// AdmissionFairSharingResourceWeights), and has the estimator roll that
// order where it holds: with [WithAdmissionFairSharing] on and Kueue's
// queue manager as the queue source (whose AfsUsageLedger holds the
// LocalQueues' usage), a ClusterQueue whose admissionScope is
// UsageBasedAdmissionFairSharing is rolled in the order admission fair
// sharing gives, and its queue model no longer reports that order as
// unmodelled (unless it preempts within itself; see estimates.FeatureUse).
func WithAdmissionFairSharingUsage(halfLife, samplingInterval time.Duration, resourceWeights map[string]float64) Option {
	return func(o *options) {
		o.AdmissionFairSharingUsage = true
		o.AdmissionFairSharingHalfLife, o.AdmissionFairSharingSamplingInterval = halfLife, samplingInterval
		o.AdmissionFairSharingResourceWeights = resourceWeights
	}
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
