package queuestats

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kueue-waittime/kueue-waittime/pkg/stats"
)

// Seed hands a ClusterQueue's statistics what a warm start read: arrivals,
// preemptions, service times (in all and by priority) and waits (the last
// one read weighs most in the EMA: they are seeded in admission order).
func TestSeedFromAWarmStartRead(t *testing.T) {
	span := func(start, end time.Duration) stats.Span {
		return stats.Span{Start: t0.Add(start), End: t0.Add(end)}
	}
	type seeded struct {
		Arrivals, Preemptions uint64
		Service, P5Service    int
		HasWait               bool
	}
	cases := map[string]struct {
		fill func(*Seeds)
		want seeded
	}{
		"nothing read": {fill: func(*Seeds) {}},
		"arrivals, preemptions, service and waits": {
			fill: func(sd *Seeds) {
				sd.AddArrival(t0.Add(-time.Hour), 5)
				sd.AddArrival(t0.Add(-2*time.Hour), 0)
				sd.AddPreemption(t0.Add(-time.Minute))
				sd.AddService(5, span(-time.Hour, -30*time.Minute))
				sd.AddService(0, span(-2*time.Hour, -time.Hour))
				sd.AddWait(span(-2*time.Hour, -time.Hour))
			},
			want: seeded{Arrivals: 2, Preemptions: 1, Service: 2, P5Service: 1, HasWait: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := newConfig(validConfig())
			if err != nil {
				t.Fatal(err)
			}
			s := mustQueue(t, c)
			var sd Seeds
			tc.fill(&sd)
			s.Seed(&sd)
			got := seeded{Arrivals: s.Arrivals.Count(), Preemptions: s.Preemptions.Count(), Service: s.Service.Len()}
			if p := s.Priority(5); p != nil && p.service != nil {
				got.P5Service = p.service.Len()
			}
			_, got.HasWait = s.Waits.Value()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("seeded statistics (-want,+got):\n%s", diff)
			}
		})
	}
}
