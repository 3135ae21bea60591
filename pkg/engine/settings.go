package engine

import (
	"fmt"
	"math"
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
	"github.com/kueue-waittime/kueue-waittime/pkg/stats"
)

// Defaults of the [Settings] of an estimator built without options.
const (
	DefaultRefreshPeriod      = time.Second
	DefaultStatisticsHalfLife = stats.DefaultHalfLife
	DefaultMinServiceSamples  = 10
	DefaultServiceSampleSize  = stats.DefaultReservoirCapacity
	DefaultEMAAlpha           = stats.DefaultEMAAlpha
	DefaultForecastSamples    = forecast.DefaultSamples
	DefaultForecastDepth      = forecast.DefaultHorizonCount
	DefaultHorizon            = 7 * 24 * time.Hour
	// DefaultRefreshCPUMillicores: see Settings.RefreshMillicores.
	DefaultRefreshCPUMillicores = 10
)

// Settings are the plain settings of an estimator, which its options set
// (each option sets one field): the refresh loop's pacing, the
// statistics', the forecast's and the admission orderings the manager
// uses. Validate states each field's range.
type Settings struct {
	// RefreshPeriod is how often the refresh loop may recompute the
	// forecasts when something changed (default 1s, > 0); the loop
	// stretches it when refreshes are slow (RefreshMillicores).
	RefreshPeriod time.Duration
	// RefreshMillicores is the CPU the refresh loop may use on average,
	// in millicores of one core (default DefaultRefreshCPUMillicores, in
	// [1, 1000]): the loop skips ticks while the time its refreshes took
	// exceeds that share of the wall time passed (saving up at most one
	// period's share), though never past MaxStaleness, which wins over
	// the budget. At the default, 1 % of a core, a refresh of 10 ms keeps
	// the 1s period, one of 12 ms skips about one tick in six and one of
	// 50 ms runs every 5s; an estimate is published with its age
	// (estimatedAt).
	RefreshMillicores int
	// MaxStaleness is how old published results may get when nothing
	// changed before they are recomputed anyway, so that running
	// workloads' ages advance (≥ RefreshPeriod). Zero derives it from the
	// period by the one staleness rule, refreshschedule.MaxStalenessFor:
	// 10s at the default period.
	MaxStaleness time.Duration
	// HalfLife is the half-life of the time-decayed arrival, preemption
	// and throughput rates (default 30m, > 0).
	HalfLife time.Duration
	// MinServiceSamples is how many observed service times a ClusterQueue
	// needs before its forecasts use them (method Forecast) rather than
	// the a-priori prior (method APriori) (default 10, ≥ 1).
	MinServiceSamples int
	// ServiceSampleSize is the size of the bounded per-ClusterQueue
	// service-time sample (default 512, ≥ 1).
	ServiceSampleSize int
	// EMAAlpha is α of the paper's EMA baseline of observed waits
	// (default 0.3, in (0, 1]).
	EMAAlpha float64
	// ForecastSamples is the Monte Carlo replica count of a forecast
	// (default DefaultForecastSamples, in [1, forecast.MaxSamples]).
	ForecastSamples int
	// ForecastDepth is how many quotable pending workloads per
	// ClusterQueue are rolled forward; deeper ones are extrapolated from
	// the simulated throughput (default 128, in [1,
	// forecast.MaxHorizonCount]).
	ForecastDepth int
	// Horizon is the longest wait a forecast reports; longer ones are
	// reported as the horizon and flagged (default 7 days, > 0).
	Horizon time.Duration
	// PriorMeanService is the mean service time assumed, as an
	// exponential law, before a ClusterQueue has enough observed
	// completions (method APriori). Zero, the default, means no prior:
	// until then only workloads with maximumExecutionTimeSeconds (an
	// upper bound) give the prior, and without any a ClusterQueue's
	// workloads get their admissibility but no wait.
	PriorMeanService time.Duration
	// FairSharing is the manager's fair sharing within cohorts (the
	// Configuration's fairSharing): the queue models of ClusterQueues in a
	// cohort say the forecast does not model that order.
	FairSharing bool
	// AdmissionFairSharing is the manager's admission fair sharing (the
	// Configuration's admissionFairSharing): the queue models of
	// ClusterQueues whose admissionScope's admissionMode is
	// UsageBasedAdmissionFairSharing say the forecast does not model their
	// order by LocalQueue usage.
	AdmissionFairSharing bool
	// AdmissionFairSharingHalfLife, AdmissionFairSharingSamplingInterval
	// and AdmissionFairSharingResourceWeights are the Configuration's
	// admissionFairSharing usageHalfLifeTime, usageSamplingInterval and
	// resourceWeights (by resource name; one not listed weighs 1), read
	// when AdmissionFairSharing is set and its usage is given
	// (AdmissionFairSharingUsage): the roll then orders those
	// ClusterQueues' pending workloads as Kueue does (see
	// forecast.AdmissionFairSharing). Both durations ≥ 0, the weights
	// finite.
	AdmissionFairSharingHalfLife         time.Duration
	AdmissionFairSharingSamplingInterval time.Duration
	AdmissionFairSharingResourceWeights  map[string]float64
	// AdmissionFairSharingUsage says that the LocalQueues' admission fair
	// sharing usage is given to the estimator, so that it rolls
	// admission fair sharing rather than only flag it.
	AdmissionFairSharingUsage bool
}

// DefaultSettings are the settings of an estimator built without options
// (its maximum staleness, zero, is derived from the refresh period).
func DefaultSettings() Settings {
	return Settings{
		RefreshPeriod:     DefaultRefreshPeriod,
		RefreshMillicores: DefaultRefreshCPUMillicores,
		HalfLife:          DefaultStatisticsHalfLife,
		MinServiceSamples: DefaultMinServiceSamples,
		ServiceSampleSize: DefaultServiceSampleSize,
		EMAAlpha:          DefaultEMAAlpha,
		ForecastSamples:   DefaultForecastSamples,
		ForecastDepth:     DefaultForecastDepth,
		Horizon:           DefaultHorizon,
	}
}

// NewEngine returns the engine s configures: a forecaster of s's sample
// count, depth and horizon, and s's prior mean service time, service
// samples needed and horizon.
func (s *Settings) NewEngine() (*Engine, error) {
	f, err := forecast.New(
		forecast.WithSamples(s.ForecastSamples),
		forecast.WithHorizonCount(s.ForecastDepth),
		forecast.WithHorizonSeconds(s.Horizon.Seconds()),
	)
	if err != nil {
		return nil, err
	}
	return newEngine(f, engineConfig{
		PriorMeanServiceSeconds: s.PriorMeanService.Seconds(),
		MinServiceSamples:       s.MinServiceSamples,
		HorizonSeconds:          s.Horizon.Seconds(),
	})
}

// Validate returns an error for the first setting out of its range, nil
// when all are in theirs. The forecast's sample count and depth are
// checked by forecast.New.
func (s *Settings) Validate() error {
	switch {
	case s.RefreshPeriod <= 0:
		return fmt.Errorf("estimator: refresh period %v must be > 0", s.RefreshPeriod)
	case s.RefreshMillicores < 1 || s.RefreshMillicores > 1000:
		return fmt.Errorf("estimator: refresh CPU %dm must be between 1m and 1000m", s.RefreshMillicores)
	case s.MaxStaleness < s.RefreshPeriod:
		return fmt.Errorf("estimator: max staleness %v must be at least the refresh period %v", s.MaxStaleness, s.RefreshPeriod)
	case s.HalfLife <= 0:
		return fmt.Errorf("estimator: statistics half-life %v must be > 0", s.HalfLife)
	case s.MinServiceSamples < 1:
		return fmt.Errorf("estimator: minimum service samples %d must be ≥ 1", s.MinServiceSamples)
	case s.ServiceSampleSize < 1:
		return fmt.Errorf("estimator: service sample size %d must be ≥ 1", s.ServiceSampleSize)
	case !(s.EMAAlpha > 0 && s.EMAAlpha <= 1):
		return fmt.Errorf("estimator: EMA alpha %v must be in (0, 1]", s.EMAAlpha)
	case s.Horizon <= 0:
		return fmt.Errorf("estimator: horizon %v must be > 0", s.Horizon)
	case s.PriorMeanService < 0:
		return fmt.Errorf("estimator: prior mean service %v must be ≥ 0", s.PriorMeanService)
	case s.AdmissionFairSharingHalfLife < 0:
		return fmt.Errorf("estimator: admission fair sharing half-life %v must be ≥ 0", s.AdmissionFairSharingHalfLife)
	case s.AdmissionFairSharingSamplingInterval < 0:
		return fmt.Errorf("estimator: admission fair sharing sampling interval %v must be ≥ 0", s.AdmissionFairSharingSamplingInterval)
	}
	for r, w := range s.AdmissionFairSharingResourceWeights {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return fmt.Errorf("estimator: admission fair sharing weight %v of resource %q must be finite", w, r)
		}
	}
	return nil
}
