package queuestats

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kueue-waittime/kueue-waittime/pkg/stats"
)

func mustQueues(t *testing.T) *Queues[string, string, string] {
	t.Helper()
	c, err := newConfig(validConfig())
	if err != nil {
		t.Fatal(err)
	}
	qs, err := newQueues[string, string, string](c)
	if err != nil {
		t.Fatal(err)
	}
	return qs
}

func TestObserveCycleMeasuresBusyTimeNotIdleTime(t *testing.T) {
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	type cycle struct{ waitStart, start time.Time }
	cases := map[string]struct {
		cycles []cycle
		want   float64 // seconds; <0: no measurement
	}{
		"first cycle has no predecessor": {
			cycles: []cycle{{at(0), at(5)}},
			want:   -1,
		},
		// Each cycle worked 4ms, then the scheduler blocked 2s for heads:
		// the busy time is 4ms, the interval between starts 2.004s.
		"idle blocking is not busy time": {
			cycles: []cycle{{at(0), at(0)}, {at(4), at(2004)}, {at(2008), at(4008)}},
			want:   0.004,
		},
		"back-to-back cycles": {
			cycles: []cycle{{at(0), at(0)}, {at(10), at(10)}},
			want:   0.010,
		},
		"out of order times are ignored": {
			cycles: []cycle{{at(100), at(100)}, {at(50), at(60)}},
			want:   -1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			qs := mustQueues(t)
			for _, c := range tc.cycles {
				qs.ObserveCycle(c.waitStart, c.start)
			}
			got, ok := qs.cycleBusy.Value()
			if tc.want < 0 {
				if ok {
					t.Errorf("busy time = %v, want none", got)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); !ok || diff != "" {
				t.Errorf("busy time (-want,+got), measured %v:\n%s", ok, diff)
			}
		})
	}
}

// TestCohortReleaseTimesAreForgottenWithTheirLastClusterQueue: the release
// time kept for a cohort goes when its last ClusterQueue is deleted or
// moves to another cohort, and stays while one is left in it.
func TestCohortReleaseTimesAreForgottenWithTheirLastClusterQueue(t *testing.T) {
	cases := map[string]struct {
		// leave is done to the ClusterQueues named, in order: "delete" or
		// the name of the cohort it moves to.
		leave []struct{ cq, to string }
		want  map[string]bool
	}{
		"both still in the cohort": {want: map[string]bool{"team": true}},
		"one deleted":              {leave: []struct{ cq, to string }{{"a", "delete"}}, want: map[string]bool{"team": true}},
		"both deleted": {
			leave: []struct{ cq, to string }{{"a", "delete"}, {"b", "delete"}},
			want:  map[string]bool{},
		},
		"one deleted, the other moved": {
			leave: []struct{ cq, to string }{{"a", "delete"}, {"b", "elsewhere"}},
			want:  map[string]bool{},
		},
		"one moved": {leave: []struct{ cq, to string }{{"b", "elsewhere"}}, want: map[string]bool{"team": true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			qs := mustQueues(t)
			qs.SetCohort("a", "team")
			qs.SetCohort("b", "team")
			qs.noteRelease("a", t0)
			for _, l := range tc.leave {
				if l.to == "delete" {
					qs.Forget(l.cq)
					continue
				}
				qs.SetCohort(l.cq, l.to)
			}
			got := map[string]bool{}
			for c := range qs.cohortReleases {
				got[c] = true
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("cohorts with a release time kept (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatsInvariantPanicsOnlyOnAnError(t *testing.T) {
	cases := map[string]struct {
		err       error
		wantPanic bool
	}{
		"no error": {},
		"an error": {err: errors.New("broken"), wantPanic: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got any
			func() {
				defer func() { got = recover() }()
				statsInvariant(tc.err)
			}()
			if diff := cmp.Diff(tc.wantPanic, got != nil); diff != "" {
				t.Errorf("panic %v (-want +got):\n%s", got, diff)
			}
		})
	}
}

// A workload's sightings: the informer's admission after the scheduler's
// measures the write lag, a release after a preemption the release delay,
// a finish its service time from the admission seen; none is left after.
func TestQueuesFollowAWorkloadsRun(t *testing.T) {
	sec := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	cases := map[string]struct {
		run          func(qs *Queues[string, string, string])
		wantWriteLag float64
		wantRelease  float64
		wantService  float64
		wantPreempt  float64
	}{
		"the scheduler's then the informer's admission, a finish": {
			run: func(qs *Queues[string, string, string]) {
				if qs.Admit("w", "cq", sec(0), false) {
					t.Error("a first admission was recorded already")
				}
				if !qs.Admit("w", "cq", sec(0.25), true) {
					t.Error("the informer's admission was not recorded already")
				}
				got, ok := qs.End("w", "cq", sec(10.25), End{Finished: true, Span: stats.Span{Start: sec(0), End: sec(11)}, HasSpan: true})
				if !ok || got.Seconds() != 10 {
					t.Errorf("service %v, %v; want 10s from the admission seen", got, ok)
				}
			},
			wantWriteLag: 0.25, wantRelease: -1, wantService: 10, wantPreempt: -1,
		},
		"a preemption, released later": {
			run: func(qs *Queues[string, string, string]) {
				qs.Admit("w", "cq", sec(0), true)
				qs.End("w", "cq", sec(5), End{Preempted: true, EvictedAt: sec(5), InClusterQueue: true})
				qs.Release("w", "cq", sec(5.5))
			},
			wantWriteLag: -1, wantRelease: 0.5, wantService: -1, wantPreempt: 1,
		},
		"a preemption released with the eviction": {
			run: func(qs *Queues[string, string, string]) {
				qs.Admit("w", "cq", sec(0), true)
				qs.End("w", "cq", sec(5), End{Preempted: true, EvictedAt: sec(5), Released: true})
			},
			wantWriteLag: -1, wantRelease: 0, wantService: -1, wantPreempt: 1,
		},
		"deleted while running": {
			run: func(qs *Queues[string, string, string]) {
				qs.Admit("w", "cq", sec(0), true)
				if !qs.ForgetWorkload("w") {
					t.Error("a workload seen admitted was forgotten as not admitted")
				}
			},
			wantWriteLag: -1, wantRelease: -1, wantService: -1, wantPreempt: -1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			qs := mustQueues(t)
			tc.run(qs)
			s := qs.Of("cq")
			value := func(v float64, ok bool) float64 {
				if !ok {
					return -1
				}
				return v
			}
			service := -1.0
			if s.Service.Count() > 0 {
				service, _ = s.Service.Mean()
			}
			preemptions := -1.0
			if n := s.Preemptions.Count(); n > 0 {
				preemptions = float64(n)
			}
			got := []float64{value(s.WriteLag.Value()), value(s.ReleaseDelay.Value()), service, preemptions}
			want := []float64{tc.wantWriteLag, tc.wantRelease, tc.wantService, tc.wantPreempt}
			if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("write lag, release delay, service, preemptions (-want +got):\n%s", diff)
			}
			if len(qs.AdmittedAt) != 0 || len(qs.evictedAt) != 0 {
				t.Errorf("sightings left: admitted %v, evicted %v", qs.AdmittedAt, qs.evictedAt)
			}
		})
	}
}
