package published

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kueue-waittime/kueue-waittime/pkg/estimates"
	"github.com/kueue-waittime/kueue-waittime/pkg/positions"
)

// The tests name ClusterQueues, cohort roots and workloads with strings of
// their own types, as the estimator does with Kueue's.
type (
	clusterQueue string
	cohort       string
	workloadKey  string
	testResults  = Results[clusterQueue, cohort, workloadKey, struct{}]
	testPart     = Part[clusterQueue, cohort, struct{}]
)

func newTestPart(n int) *testPart { return NewPart[clusterQueue, cohort, struct{}](n) }

func keyOf(n positions.Name) workloadKey { return workloadKey(n.Namespace + "/" + n.Name) }

func waitOf(d time.Duration) estimates.Stored[clusterQueue] {
	return estimates.Store(estimates.WorkloadEstimate[clusterQueue]{HasWait: true, ExpectedWait: d}, nil)
}

// A ClusterQueue's results find each pending workload by namespace and
// name, also when one name is pending in several of its namespaces, and
// nothing for a name pending only in another namespace.
func TestResultsFindEachWorkloadOfANameInSeveralNamespaces(t *testing.T) {
	q := newTestPart(4)
	added := []positions.Name{{Namespace: "ns-a", Name: "x"}, {Namespace: "ns-a", Name: "y"}, {Namespace: "ns-b", Name: "x"}, {Namespace: "ns-c", Name: "x"}}
	for i, name := range added {
		q.Add(name, waitOf(time.Duration(1000*(i+1))*time.Millisecond), "")
	}
	for i, name := range added {
		got, ok := q.Estimate(positions.NameOfKey(keyOf(name)))
		if want := time.Duration(i+1) * time.Second; !ok || got.ExpectedWait != want {
			t.Errorf("estimate(%s) = %v, %v; want %v", keyOf(name), got.ExpectedWait, ok, want)
		}
	}
	for _, key := range []workloadKey{"ns-b/y", "ns-d/x", "ns-a/z", "ns-a"} {
		if _, ok := q.Estimate(positions.NameOfKey(key)); ok {
			t.Errorf("estimate(%s) found one; want none", key)
		}
	}
	var names []positions.Name
	for name := range q.AllNames() {
		names = append(names, name)
	}
	less := func(a, b positions.Name) bool { return keyOf(a) < keyOf(b) }
	if diff := cmp.Diff(added, names, cmpopts.SortSlices(less)); diff != "" {
		t.Errorf("allNames() (-want,+got):\n%s", diff)
	}
}

// A ClusterQueue's part finds each of its workloads after its index grew
// past the size it was made for.
func TestResultsFindEveryWorkloadAfterTheirIndexGrew(t *testing.T) {
	q := newTestPart(0)
	var added []positions.Name
	for i := range 1000 {
		name := positions.Name{Namespace: fmt.Sprint("ns-", i%3), Name: fmt.Sprint("w-", i/3)}
		added = append(added, name)
		q.Add(name, waitOf(time.Duration(i+1)*time.Millisecond), "")
	}
	for i, name := range added {
		got, ok := q.Position(name)
		if !ok || got != int32(i) {
			t.Fatalf("position(%v) = %d, %v; want %d", name, got, ok, i)
		}
	}
	var names []positions.Name
	for name := range q.AllNames() {
		names = append(names, name)
	}
	if diff := cmp.Diff(added, names); diff != "" {
		t.Errorf("allNames() (-want,+got):\n%s", diff)
	}
	if _, ok := q.Position(positions.Name{Namespace: "ns-0", Name: "w-1000"}); ok {
		t.Error("position found a workload never added")
	}
}

// Results look a workload up in the part of its ClusterQueue, or in any
// part, by its key; a nil Results finds nothing.
func TestResultsLookUpWorkloadsByKey(t *testing.T) {
	a, b := newTestPart(0), newTestPart(0)
	a.Add(positions.Name{Namespace: "ns", Name: "x"}, waitOf(time.Second), "")
	b.Add(positions.Name{Namespace: "ns", Name: "y"}, waitOf(2*time.Second), "")
	b.Model, b.HasModel = estimates.QueueModel[clusterQueue]{ClusterQueue: "b"}, true
	r := Build[clusterQueue, cohort, workloadKey](time.Unix(100, 0), map[clusterQueue]*testPart{"a": a, "b": b})
	type found struct {
		Wait time.Duration
		OK   bool
	}
	cases := map[string]struct {
		results *testResults
		cq      clusterQueue
		key     workloadKey
		wantIn  found
		wantAny found
	}{
		"in its ClusterQueue":        {results: r, cq: "a", key: "ns/x", wantIn: found{time.Second, true}, wantAny: found{time.Second, true}},
		"in another ClusterQueue":    {results: r, cq: "a", key: "ns/y", wantAny: found{2 * time.Second, true}},
		"in an unknown ClusterQueue": {results: r, cq: "c", key: "ns/x", wantAny: found{time.Second, true}},
		"nowhere":                    {results: r, cq: "a", key: "ns/z"},
		"nil results":                {cq: "a", key: "ns/x"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			est, ok := tc.results.WorkloadIn(tc.cq, tc.key)
			if diff := cmp.Diff(tc.wantIn, found{est.ExpectedWait, ok}); diff != "" {
				t.Errorf("WorkloadIn (-want,+got):\n%s", diff)
			}
			est, ok = tc.results.Workload(tc.key)
			if diff := cmp.Diff(tc.wantAny, found{est.ExpectedWait, ok}); diff != "" {
				t.Errorf("Workload (-want,+got):\n%s", diff)
			}
		})
	}
	if got := r.PendingCount(); got != 2 {
		t.Errorf("PendingCount() = %d, want 2", got)
	}
	if _, ok := r.Queue("a"); ok {
		t.Error("Queue(a) found a model; a has none")
	}
	if m, ok := r.Queue("b"); !ok || m.ClusterQueue != "b" {
		t.Errorf("Queue(b) = %+v, %v; want b's model", m, ok)
	}
}
