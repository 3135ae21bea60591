package engine

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
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
			_, m := serviceModel(sample(tc.n), minSamples, 0, 0, 0)
			if diff := cmp.Diff(tc.want, fmt.Sprintf("%T", m)); diff != "" {
				t.Errorf("service model type (-want +got):\n%s", diff)
			}
		})
	}
}
