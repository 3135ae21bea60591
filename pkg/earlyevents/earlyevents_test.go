package earlyevents

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWarmReplaysWhatTheReadDoesNotHold(t *testing.T) {
	cases := map[string]struct {
		kind   Kind
		listed map[string]Listed
		want   bool
	}{
		"arrival of a workload not listed":        {kind: Arrival, want: true},
		"arrival of a listed workload":            {kind: Arrival, listed: map[string]Listed{"w": {}}},
		"admission of one listed pending":         {kind: Admission, listed: map[string]Listed{"w": {}}, want: true},
		"admission of one listed admitted":        {kind: Admission, listed: map[string]Listed{"w": {Admitted: true}}},
		"admission of one listed finished":        {kind: Admission, listed: map[string]Listed{"w": {Finished: true}}},
		"release of one listed admitted":          {kind: Release, listed: map[string]Listed{"w": {Admitted: true}}, want: true},
		"release of one listed without quota":     {kind: Release, listed: map[string]Listed{"w": {}}},
		"finish of one listed running":            {kind: Finish, listed: map[string]Listed{"w": {Admitted: true}}, want: true},
		"finish of one listed finished":           {kind: Finish, listed: map[string]Listed{"w": {Finished: true}}},
		"preemption of one listed running":        {kind: Preemption, listed: map[string]Listed{"w": {Admitted: true}}, want: true},
		"preemption of one listed evicted by one": {kind: Preemption, listed: map[string]Listed{"w": {EvictedByPreemption: true}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var b Buffer[string, string]
			got := false
			if b.ApplyOrKeep(Event[string, string]{Key: "w", ClusterQueue: "cq", Kind: tc.kind, Apply: func() { got = true }}) || got {
				t.Fatal("applied while cold")
			}
			kept, applied, dropped := b.Warm(tc.listed)
			if diff := cmp.Diff([]int{1, boolInt(tc.want), 0}, []int{kept, applied, dropped}); diff != "" {
				t.Errorf("kept, applied, dropped (-want,+got):\n%s", diff)
			}
			if got != tc.want {
				t.Errorf("applied = %v, want %v", got, tc.want)
			}
			if !b.Warmed() || b.Len() != 0 {
				t.Errorf("after Warm: warmed %v with %d events waiting", b.Warmed(), b.Len())
			}
			now := false
			if !b.ApplyOrKeep(Event[string, string]{Key: "w", Kind: tc.kind, Apply: func() { now = true }}) || !now {
				t.Error("a warm buffer did not apply an event at once")
			}
		})
	}
}

func TestBufferDropsBeyondMaxEvents(t *testing.T) {
	var b Buffer[int, string]
	for i := range MaxEvents + 3 {
		b.ApplyOrKeep(Event[int, string]{Key: i, Apply: func() {}})
	}
	kept, applied, dropped := b.Warm(nil)
	if diff := cmp.Diff([]int{MaxEvents, MaxEvents, 3}, []int{kept, applied, dropped}); diff != "" {
		t.Errorf("kept, applied, dropped (-want,+got):\n%s", diff)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
