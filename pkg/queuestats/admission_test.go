package queuestats

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestObserveAdmission(t *testing.T) {
	at := t0.Add(time.Minute)
	type observed struct {
		Wait                                     float64
		Latencies, FirstAttempts, Delays, Reacts int
		FreedCleared, PreemptedCleared           bool
	}
	cases := map[string]struct {
		freedAt, preemptedAt time.Time
		preemptedPriority    int32
		a                    Admission
		want                 observed
	}{
		"a wait and nothing else": {
			a:    Admission{At: at, QueuedSince: at.Add(-10 * time.Second)},
			want: observed{Wait: 10, FreedCleared: true, PreemptedCleared: true},
		},
		"after quota was freed": {
			freedAt: at.Add(-time.Second),
			a:       Admission{At: at, QueuedSince: at},
			want:    observed{Latencies: 1, FreedCleared: true, PreemptedCleared: true},
		},
		"an untried workload that arrived after the last release": {
			a:    Admission{At: at, QueuedSince: at, Arrived: at.Add(-2 * time.Second), HasArrival: true, Untried: true, LastRelease: at.Add(-time.Hour)},
			want: observed{FirstAttempts: 1, FreedCleared: true, PreemptedCleared: true},
		},
		"an untried workload that arrived before the last release": {
			a:    Admission{At: at, QueuedSince: at, Arrived: at.Add(-2 * time.Second), HasArrival: true, Untried: true, LastRelease: at.Add(-time.Second)},
			want: observed{FreedCleared: true, PreemptedCleared: true},
		},
		"a tried workload": {
			a:    Admission{At: at, QueuedSince: at, Arrived: at.Add(-2 * time.Second), HasArrival: true},
			want: observed{FreedCleared: true, PreemptedCleared: true},
		},
		"a preemptor of a higher priority that arrived before the preemption": {
			preemptedAt: at.Add(-time.Second), preemptedPriority: 1,
			a:    Admission{At: at, QueuedSince: at, Arrived: at.Add(-3 * time.Second), HasArrival: true, Priority: 2},
			want: observed{Delays: 1, Reacts: 1, FreedCleared: true, PreemptedCleared: true},
		},
		"an admission after a preemption by a workload of the same priority": {
			preemptedAt: at.Add(-time.Second), preemptedPriority: 2,
			a:    Admission{At: at, QueuedSince: at, Arrived: at.Add(-3 * time.Second), HasArrival: true, Priority: 2},
			want: observed{Delays: 1, FreedCleared: true, PreemptedCleared: true},
		},
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
			s := mustQueue(t, c)
			s.FreedAt, s.PreemptedAt, s.PreemptedPriority = tc.freedAt, tc.preemptedAt, tc.preemptedPriority
			sh.observeAdmission(s, tc.a)
			var got observed
			got.Wait, _ = s.Waits.Value()
			got.Latencies, got.FirstAttempts = s.AdmissionLatency.Len(), s.FirstAttemptLatency.Len()
			got.Delays, got.Reacts = s.PreemptionDelays.Len(), s.PreemptionReaction.Len()
			got.FreedCleared, got.PreemptedCleared = s.FreedAt.IsZero(), s.PreemptedAt.IsZero()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("observed (-want,+got):\n%s", diff)
			}
			if n := s.Admissions.Count(); n != 1 {
				t.Errorf("%d admissions counted, want 1", n)
			}
			if sh.AdmissionLatency.Len() != got.Latencies || sh.FirstAttemptLatency.Len() != got.FirstAttempts {
				t.Error("the pooled latencies differ from the ClusterQueue's")
			}
		})
	}
}
