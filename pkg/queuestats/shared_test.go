package queuestats

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A ClusterQueue rolls with the pooled latencies until it measured
// MinOwnLatencySamples of its own, and every latency it measures is pooled.
func TestSharedLatenciesUntilEnoughOwn(t *testing.T) {
	type latency struct {
		Mean   float64
		Sample int
		Own    bool
	}
	cases := map[string]struct {
		own, others int
		want        latency
	}{
		"nothing measured":             {want: latency{}},
		"only others measured":         {others: 3, want: latency{Mean: 2, Sample: 3}},
		"fewer than enough of its own": {own: MinOwnLatencySamples - 1, others: 1, want: latency{Mean: 1.125, Sample: MinOwnLatencySamples}},
		"enough of its own":            {own: MinOwnLatencySamples, others: 1, want: latency{Mean: 1, Sample: MinOwnLatencySamples, Own: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := newConfig(validConfig())
			if err != nil {
				t.Fatal(err)
			}
			sh, err := c.newShared()
			if err != nil {
				t.Fatal(err)
			}
			s, other := mustQueue(t, c), mustQueue(t, c)
			for range tc.own {
				sh.ObserveAdmissionLatency(s, t0, 1)
				sh.ObserveFirstAttemptLatency(s, t0, 1)
			}
			for range tc.others {
				sh.ObserveAdmissionLatency(other, t0, 2)
				sh.ObserveFirstAttemptLatency(other, t0, 2)
			}
			var got latency
			var sample []float64
			got.Mean, sample = sh.Latency(s)
			got.Sample, got.Own = len(sample), sh.latencyReservoirOf(s) == s.AdmissionLatency
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("admission latency (-want,+got):\n%s", diff)
			}
			if ownFirst := sh.FirstAttemptReservoirOf(s) == s.FirstAttemptLatency; ownFirst != tc.want.Own {
				t.Errorf("first-attempt latencies of its own = %v, want %v", ownFirst, tc.want.Own)
			}
			if v := sh.View(s); v.AdmissionLatency != tc.want.Mean || len(v.FirstAttemptLatencySample) != tc.want.Sample {
				t.Errorf("view: latency %v and %d first-attempt samples, want %v and %d", v.AdmissionLatency, len(v.FirstAttemptLatencySample), tc.want.Mean, tc.want.Sample)
			}
		})
	}
}

func mustQueue(t *testing.T, c config) *Queue {
	t.Helper()
	s, err := c.newQueue()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
