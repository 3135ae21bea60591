package engine

import (
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSmallServiceSampleIsBootstrapped: below BootstrapServiceBelow
// completions the roll resamples the service sample per replica; from
// there on it takes the sample as the law — the pooled sample, and a
// demand shape's alike (none below MinServiceSamples).
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
			s := sample(tc.n)
			_, m := serviceModel(s, minSamples, 0, 0, 0)
			if diff := cmp.Diff(tc.want, fmt.Sprintf("%T", m)); diff != "" {
				t.Errorf("service model type (-want +got):\n%s", diff)
			}
			laws := newShapeLaws(cpuQueue(4000), []ShapeService{{Demand: cpuShape(500), Sample: s.ServiceSample}}, 1, minSamples)
			shape := "<nil>"
			if classes := laws.serviceClasses(); len(classes) == 1 {
				shape = fmt.Sprintf("%T", classes[0])
			}
			if diff := cmp.Diff(tc.want, shape); diff != "" {
				t.Errorf("a shape's service model type (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPriorityServiceModelsLeaveOutSamplesOfNoPositiveMean: a priority's
// sample of zeros (service times read from whole-second conditions can
// all be 0) or with no value makes no law, which the roll would refuse and
// then forecast nothing; the other priorities keep theirs.
func TestPriorityServiceModelsLeaveOutSamplesOfNoPositiveMean(t *testing.T) {
	got := priorityServiceModels(map[int32][]float64{0: {0, 0, 0}, 1: nil, 5: {1, 3}})
	means := make(map[int32]float64, len(got))
	for p, m := range got {
		means[p] = m.Mean()
	}
	if diff := cmp.Diff(map[int32]float64{5: 2}, means); diff != "" {
		t.Errorf("laws' means by priority (-want +got):\n%s", diff)
	}
	if got := priorityServiceModels(map[int32][]float64{0: {0}}); got != nil {
		t.Errorf("only a sample of zeros: %v, want no laws", got)
	}
}

// The a-priori mean from a bound is finite and positive whatever the
// ClusterQueue has observed, and lies between the prior and the largest
// usable observation.
func FuzzBoundPosteriorMean(f *testing.F) {
	f.Add(30.0, 1.0, 2.0, 3.0)
	f.Add(1e-9, math.Inf(1), math.NaN(), -1.0)
	f.Add(1e300, 1e300, 1e300, 0.0)
	f.Fuzz(func(t *testing.T, prior, x1, x2, x3 float64) {
		if !(prior > 0) || math.IsInf(prior, 0) || prior > 1e300 {
			t.Skip()
		}
		sample := []float64{x1, x2, x3}
		got := boundPosteriorMean(sample, prior)
		if !(got > 0) || math.IsInf(got, 0) || math.IsNaN(got) {
			t.Fatalf("boundPosteriorMean(%v, %v) = %v, want finite and positive", sample, prior, got)
		}
		lo, hi := prior, prior
		for _, x := range sample {
			if x >= 0 && !math.IsInf(x, 0) {
				lo, hi = min(lo, x), max(hi, x)
			}
		}
		if got < lo*(1-1e-12) || got > hi*(1+1e-12) {
			t.Fatalf("boundPosteriorMean(%v, %v) = %v, outside [%v, %v]", sample, prior, got, lo, hi)
		}
	})
}
