package engine

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
)

// TestSmallServiceSampleIsBootstrapped: below BootstrapServiceBelow
// completions the roll resamples the service sample per replica; from
// there on it takes the sample as the law.
func TestSmallServiceSampleIsBootstrapped(t *testing.T) {
	const minSamples = 10
	sample := func(n int) Stats {
		v := Stats{HasService: true}
		for i := range n {
			v.ServiceSample = append(v.ServiceSample, float64(1+i%7))
		}
		return v
	}
	cases := map[string]struct {
		n    int
		want string
	}{
		"too few for a sample":     {n: minSamples - 1, want: "<nil>"},
		"smallest sample":          {n: minSamples, want: "*forecast.Bootstrap"},
		"just below the threshold": {n: BootstrapServiceBelow - 1, want: "*forecast.Bootstrap"},
		"at the threshold":         {n: BootstrapServiceBelow, want: "*forecast.Empirical"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, m := serviceModel(sample(tc.n), minSamples, 0, 0, 0, nil)
			if diff := cmp.Diff(tc.want, fmt.Sprintf("%T", m)); diff != "" {
				t.Errorf("service model type (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunningAgesCountOnlyWhileTheSampleIsSmall: the running workloads'
// ages enter the service law as censored service times while the sample is
// bootstrapped, and are not even collected once it is large.
func TestRunningAgesCountOnlyWhileTheSampleIsSmall(t *testing.T) {
	running := []forecast.Running{{AgeSeconds: 30}, {AgeSeconds: 0}, {AgeSeconds: 12}}
	small, large := make([]float64, BootstrapServiceBelow-1), make([]float64, BootstrapServiceBelow)
	if diff := cmp.Diff([]float64{30, 0, 12}, runningAges(running, small)); diff != "" {
		t.Errorf("ages with a small sample (-want +got):\n%s", diff)
	}
	if got := runningAges(running, large); got != nil {
		t.Errorf("ages with a large sample: %v, want none", got)
	}
	if got := runningAges(nil, small); got != nil {
		t.Errorf("ages with nothing running: %v, want none", got)
	}
	// Ten completions of 1 s and a workload running for 30 s: the law's
	// mean is above the sample's 1 s, once the ages are passed.
	stats := Stats{HasService: true, ServiceSample: []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}}
	_, without := serviceModel(stats, 10, 0, 0, 0, nil)
	_, with := serviceModel(stats, 10, 0, 0, 0, runningAges(running, stats.ServiceSample))
	if without.Mean() != 1 || !(with.Mean() > 1) {
		t.Errorf("means without and with the running ages: %v and %v, want 1 and more", without.Mean(), with.Mean())
	}
}
