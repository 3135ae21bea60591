package engine

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSettingsValidate(t *testing.T) {
	cases := map[string]struct {
		change  func(*Settings)
		wantErr bool
	}{
		"defaults":                         {change: func(*Settings) {}},
		"no refresh period":                {change: func(s *Settings) { s.RefreshPeriod = 0 }, wantErr: true},
		"no refresh CPU":                   {change: func(s *Settings) { s.RefreshMillicores = 0 }, wantErr: true},
		"more than a core":                 {change: func(s *Settings) { s.RefreshMillicores = 1001 }, wantErr: true},
		"staleness below the period":       {change: func(s *Settings) { s.MaxStaleness = s.RefreshPeriod / 2 }, wantErr: true},
		"no half-life":                     {change: func(s *Settings) { s.HalfLife = 0 }, wantErr: true},
		"no service samples":               {change: func(s *Settings) { s.MinServiceSamples = 0 }, wantErr: true},
		"no service sample":                {change: func(s *Settings) { s.ServiceSampleSize = 0 }, wantErr: true},
		"EMA alpha above one":              {change: func(s *Settings) { s.EMAAlpha = 1.5 }, wantErr: true},
		"EMA alpha zero":                   {change: func(s *Settings) { s.EMAAlpha = 0 }, wantErr: true},
		"no horizon":                       {change: func(s *Settings) { s.Horizon = 0 }, wantErr: true},
		"negative prior mean service":      {change: func(s *Settings) { s.PriorMeanService = -time.Second }, wantErr: true},
		"a prior mean service and a scale": {change: func(s *Settings) { s.PriorMeanService = time.Minute; s.RefreshMillicores = 1000 }},
		"negative AFS half-life":           {change: func(s *Settings) { s.AdmissionFairSharingHalfLife = -time.Second }, wantErr: true},
		"negative AFS sampling interval":   {change: func(s *Settings) { s.AdmissionFairSharingSamplingInterval = -time.Second }, wantErr: true},
		"an infinite AFS resource weight": {change: func(s *Settings) {
			s.AdmissionFairSharingResourceWeights = map[string]float64{"cpu": math.Inf(1)}
		}, wantErr: true},
		"a NaN AFS resource weight": {change: func(s *Settings) {
			s.AdmissionFairSharingResourceWeights = map[string]float64{"memory": math.NaN()}
		}, wantErr: true},
		"AFS with no half-life, no sampling interval and weights": {change: func(s *Settings) {
			s.AdmissionFairSharingResourceWeights = map[string]float64{"cpu": 2, "memory": 0}
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := DefaultSettings()
			s.MaxStaleness = 10 * s.RefreshPeriod
			tc.change(&s)
			err := s.Validate()
			if diff := cmp.Diff(tc.wantErr, err != nil); diff != "" {
				t.Errorf("error %v (-want +got):\n%s", err, diff)
			}
		})
	}
}
