package estimator

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/estimates"
)

func TestWorkloadNameJoinsAndSplitsAsKueuesReference(t *testing.T) {
	wl := utiltestingapi.MakeWorkload("train-7", "team-a").Obj()
	name := nameOf(wl)
	if got, want := referenceOf(name), workload.Key(wl); got != want {
		t.Errorf("reference() = %q, want workload.Key's %q", got, want)
	}
	if got := string(appendReference([]byte("x"), name)); got != "x"+string(workload.Key(wl)) {
		t.Errorf("appendReference appended %q", got)
	}
	if diff := cmp.Diff(name, nameFromReference(workload.Key(wl)), cmp.AllowUnexported(workloadName{})); diff != "" {
		t.Errorf("nameFromReference(Key) (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(workloadName{Namespace: "no-slash"}, nameFromReference("no-slash"), cmp.AllowUnexported(workloadName{})); diff != "" {
		t.Errorf("a Reference without a slash (-want,+got):\n%s", diff)
	}
}

// A pending workload's ledger line is looked up by a key built in a
// reused buffer: the lookup allocates nothing.
func TestLedgerLookupByNameAllocatesNothing(t *testing.T) {
	pending := map[workload.Reference]trackedWorkload{"team-a/train-7": {}}
	name := workloadName{Namespace: "team-a", Name: "train-7"}
	var buf []byte
	found := false
	allocs := testing.AllocsPerRun(100, func() {
		buf = appendReference(buf[:0], name)
		_, found = pending[workload.Reference(buf)]
	})
	if !found || allocs != 0 {
		t.Errorf("lookup found %v with %v allocations per run; want found with 0", found, allocs)
	}
}

// A ClusterQueue's results find each pending workload by namespace and
// name, also when one name is pending in several of its namespaces, and
// nothing for a name pending only in another namespace.
func TestResultsFindEachWorkloadOfANameInSeveralNamespaces(t *testing.T) {
	q := newQueueResults(4)
	added := []workloadName{{Namespace: "ns-a", Name: "x"}, {Namespace: "ns-a", Name: "y"}, {Namespace: "ns-b", Name: "x"}, {Namespace: "ns-c", Name: "x"}}
	for i, name := range added {
		q.add(name, estimates.Store(WorkloadEstimate{HasWait: true, ExpectedWait: time.Duration(1000*(i+1)) * time.Millisecond}, nil), "")
	}
	for i, name := range added {
		got, ok := q.estimate(referenceOf(name))
		if want := time.Duration(i+1) * time.Second; !ok || got.ExpectedWait != want {
			t.Errorf("estimate(%s) = %v, %v; want %v", referenceOf(name), got.ExpectedWait, ok, want)
		}
	}
	for _, key := range []workload.Reference{"ns-b/y", "ns-d/x", "ns-a/z", "ns-a"} {
		if _, ok := q.estimate(key); ok {
			t.Errorf("estimate(%s) found one; want none", key)
		}
	}
	var names []workloadName
	for name := range q.allNames() {
		names = append(names, name)
	}
	less := func(a, b workloadName) bool { return referenceOf(a) < referenceOf(b) }
	if diff := cmp.Diff(added, names, cmp.AllowUnexported(workloadName{}), cmpopts.SortSlices(less)); diff != "" {
		t.Errorf("allNames() (-want,+got):\n%s", diff)
	}
}
