package estimator

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
	"github.com/kueue-waittime/kueue-waittime/pkg/published"
)

func TestNeedsRefresh(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	withWaits := func(p50s ...time.Duration) *Results {
		estimates := make(map[workload.Reference]WorkloadEstimate, len(p50s))
		for i, p50 := range p50s {
			estimates[workload.Reference("ns/w"+string(rune('a'+i)))] = WorkloadEstimate{ClusterQueue: "cq", EstimatedAt: t0,
				Admissibility: Quotable, Method: MethodForecast, HasWait: true, P50: p50, P90: 2 * p50, ExpectedWait: p50}
		}
		return NewResults(t0, estimates, nil)
	}
	unfeasible := NewResults(t0, map[workload.Reference]WorkloadEstimate{
		"ns/huge": {ClusterQueue: "cq", EstimatedAt: t0, Admissibility: Unfeasible, Reason: "too big"},
	}, nil)
	const staleness = 10 * time.Second
	cases := map[string]struct {
		dirty   bool
		now     time.Time
		results *Results
		want    bool
	}{
		"nothing published yet":                         {now: t0, results: nil, want: true},
		"something observed":                            {dirty: true, now: t0.Add(time.Second), results: withWaits(time.Minute), want: true},
		"nothing observed, fresh, admission to come":    {now: t0.Add(5 * time.Second), results: withWaits(time.Minute, 30*time.Second), want: false},
		"nothing observed, the earliest P50 has passed": {now: t0.Add(31 * time.Second), results: withWaits(time.Minute, 30*time.Second), want: true},
		"nothing observed, older than max staleness":    {now: t0.Add(staleness), results: withWaits(time.Hour), want: true},
		"an Unfeasible workload predicts no admission":  {now: t0.Add(5 * time.Second), results: unfeasible, want: false},
		"no pending workload":                           {now: t0.Add(5 * time.Second), results: NewResults(t0, nil, nil), want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := published.NeedsRefresh(tc.dirty, tc.now, tc.results, staleness); got != tc.want {
				t.Errorf("needsRefresh = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRefreshScratchKeepsNoWorkloadAfterDrop: what a ClusterQueue's refresh
// wrote into the scratch (names, the pending workloads appended to the room
// take gave, the running workloads' usages handed out) is cleared by drop,
// and the next take gives room of its own size.
func TestRefreshScratchKeepsNoWorkloadAfterDrop(t *testing.T) {
	var s refreshScratch
	names, pending := s.Take(3)
	for i, name := range []string{"a", "b", "c"} {
		names[i] = workloadName{Namespace: "ns", Name: name}
		pending = append(pending, engine.Pending{ID: name, Class: 1, Priority: 5})
	}
	running := workload.NewInfo(utiltestingapi.MakeWorkload("r", "ns").Request(corev1.ResourceCPU, "1").
		ReserveQuotaAt(utiltestingapi.MakeAdmission("cq").PodSets(utiltestingapi.MakePodSetAssignment(kueue.DefaultPodSetName).
			Assignment(corev1.ResourceCPU, "default", "1").Obj()).Obj(), time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)).Obj())
	usage := s.runningUsages().Of(running)
	s.drop()
	// The usages handed out are forgotten: the same usage asked for again
	// comes back as a map of its own, not the one the scratch kept
	// (identity by address, %p).
	if again := s.runningUsages().Of(running); fmt.Sprintf("%p", again) == fmt.Sprintf("%p", usage) {
		t.Errorf("after drop the scratch still holds the usage it handed out before (%v)", usage)
	}
	if diff := cmp.Diff(make([]workloadName, 3), s.Names[:3], cmp.AllowUnexported(workloadName{})); diff != "" {
		t.Errorf("names after drop (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(make([]engine.Pending, 3), pending[:3]); diff != "" {
		t.Errorf("pending workloads after drop (-want,+got):\n%s", diff)
	}
	names, pending = s.Take(2)
	if len(names) != 2 || len(pending) != 0 || cap(pending) < 2 {
		t.Errorf("take(2) after drop: %d names, %d pending of room %d; want 2, 0, at least 2", len(names), len(pending), cap(pending))
	}
}
