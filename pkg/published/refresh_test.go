package published

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kueue-waittime/kueue-waittime/pkg/estimates"
	"github.com/kueue-waittime/kueue-waittime/pkg/positions"
)

// partAt is a part whose model was computed at at, in the cohort tree of
// root.
func partAt(at time.Time, root cohort) *testPart {
	q := newTestPart(0)
	q.Model, q.HasModel, q.Root = estimates.QueueModel[clusterQueue]{At: at}, true, root
	return q
}

func TestNextReusesThePartsNotRecomputed(t *testing.T) {
	t0 := time.Unix(1000, 0)
	prevParts := map[clusterQueue]*testPart{"a": partAt(t0, "team"), "b": partAt(t0, "team"), "c": partAt(t0, "")}
	prev := Build[clusterQueue, cohort, workloadKey](t0, prevParts)
	cases := map[string]struct {
		places        map[clusterQueue]Place[cohort]
		recompute     map[clusterQueue]Cause
		wantOutputs   []clusterQueue
		wantKept      []clusterQueue
		wantRecompute map[clusterQueue]Cause
	}{
		"the same ClusterQueues, one recomputed": {
			places:        map[clusterQueue]Place[cohort]{"a": {Root: "team"}, "b": {Root: "team"}, "c": {}},
			recompute:     map[clusterQueue]Cause{"c": OwnInputs},
			wantOutputs:   []clusterQueue{"c"},
			wantKept:      []clusterQueue{"a", "b"},
			wantRecompute: map[clusterQueue]Cause{"c": OwnInputs},
		},
		"a ClusterQueue gone and one new": {
			places:        map[clusterQueue]Place[cohort]{"a": {Root: "team"}, "c": {}, "d": {Generation: 2}},
			recompute:     map[clusterQueue]Cause{},
			wantOutputs:   []clusterQueue{"d"},
			wantKept:      []clusterQueue{"a", "c"},
			wantRecompute: map[clusterQueue]Cause{"d": OwnInputs},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			next, outputs := Next(t0.Add(time.Second), prev, tc.places, tc.recompute)
			var gotOutputs, gotKept []clusterQueue
			for cq := range outputs {
				gotOutputs = append(gotOutputs, cq)
				if got, want := outputs[cq].Generation, tc.places[cq].Generation; got != want {
					t.Errorf("%s's new part has generation %d, want %d", cq, got, want)
				}
				if next.Part(cq) != outputs[cq] {
					t.Errorf("%s's output is not its part of the next results", cq)
				}
			}
			for cq := range next.ClusterQueues() {
				if next.Part(cq) == prev.Part(cq) {
					gotKept = append(gotKept, cq)
				}
			}
			sorted := cmpopts.SortSlices(func(a, b clusterQueue) bool { return a < b })
			if diff := cmp.Diff(tc.wantOutputs, gotOutputs, sorted); diff != "" {
				t.Errorf("recomputed parts (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantKept, gotKept, sorted); diff != "" {
				t.Errorf("kept parts (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRecompute, tc.recompute); diff != "" {
				t.Errorf("recompute set after Next (-want,+got):\n%s", diff)
			}
			if got, want := next.Len(), len(tc.places); got != want {
				t.Errorf("next holds %d ClusterQueues, want %d", got, want)
			}
		})
	}
}

func TestRecomputeSetBringsInCohortMembers(t *testing.T) {
	t0 := time.Unix(1000, 0)
	prev := Build[clusterQueue, cohort, workloadKey](t0, map[clusterQueue]*testPart{
		"a": partAt(t0, "team"), "b": partAt(t0, "team"), "c": partAt(t0, ""), "gone": partAt(t0, "other"), "d": partAt(t0, "other")})
	places := map[clusterQueue]Place[cohort]{"a": {Root: "team"}, "b": {Root: "team"}, "c": {}, "d": {Root: "other"}}
	cases := map[string]struct {
		changed []clusterQueue
		all     bool
		now     time.Time
		want    map[clusterQueue]Cause
	}{
		"a member that disappeared": {now: t0, want: map[clusterQueue]Cause{"d": CohortInputs}},
		"an event in a cohort member": {
			changed: []clusterQueue{"a"}, now: t0,
			want: map[clusterQueue]Cause{"a": OwnInputs, "b": CohortInputs, "d": CohortInputs},
		},
		"everything": {all: true, now: t0, want: map[clusterQueue]Cause{"a": OwnInputs, "b": OwnInputs, "c": OwnInputs, "d": OwnInputs}},
		"at the maximum staleness": {
			now:  t0.Add(time.Minute),
			want: map[clusterQueue]Cause{"a": OwnInputs, "b": OwnInputs, "c": OwnInputs, "d": OwnInputs},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			changed := map[clusterQueue]struct{}{}
			for _, cq := range tc.changed {
				changed[cq] = struct{}{}
			}
			got := RecomputeSet(tc.now, places, prev, changed, tc.all, time.Minute)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("RecomputeSet (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestNeedsRefresh(t *testing.T) {
	t0 := time.Unix(1000, 0)
	due := newTestPart(0)
	due.Model.At = t0
	due.Add(positions.Name{Namespace: "ns", Name: "x"}, estimates.Store(estimates.WorkloadEstimate[clusterQueue]{
		HasWait: true, ExpectedWait: 5 * time.Second, P50: 5 * time.Second}, &estimates.Stamp[clusterQueue]{ClusterQueue: "a", At: t0}), "")
	r := Build[clusterQueue, cohort, workloadKey](t0, map[clusterQueue]*testPart{"a": due})
	cases := map[string]struct {
		dirty   bool
		results *testResults
		now     time.Time
		want    bool
	}{
		"nothing published":          {now: t0, want: true},
		"dirty":                      {dirty: true, results: r, now: t0, want: true},
		"fresh":                      {results: r, now: t0.Add(time.Second)},
		"at the maximum staleness":   {results: r, now: t0.Add(time.Minute), want: true},
		"a P50 overdue":              {results: r, now: t0.Add(5 * time.Second), want: true},
		"just before the P50 is due": {results: r, now: t0.Add(5*time.Second - time.Millisecond)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := NeedsRefresh(tc.dirty, tc.now, tc.results, time.Minute); got != tc.want {
				t.Errorf("NeedsRefresh = %v, want %v", got, tc.want)
			}
		})
	}
}
