package estimator

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"
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
