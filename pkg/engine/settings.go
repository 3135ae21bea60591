package engine

import (
	"fmt"
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
	// DefaultRefreshCPUMillicores: see the estimator's WithRefreshCPU.
	DefaultRefreshCPUMillicores = 10
)

// Settings are the plain settings of an estimator, which its options set:
// the refresh loop's pacing, the statistics', the forecast's and the
// admission orderings the manager uses that the forecast does not model.
type Settings struct {
	RefreshPeriod        time.Duration
	RefreshMillicores    int
	MaxStaleness         time.Duration
	HalfLife             time.Duration
	MinServiceSamples    int
	ServiceSampleSize    int
	EMAAlpha             float64
	ForecastSamples      int
	ForecastDepth        int
	Horizon              time.Duration
	PriorMeanService     time.Duration
	FairSharing          bool
	AdmissionFairSharing bool
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
	}
	return nil
}
