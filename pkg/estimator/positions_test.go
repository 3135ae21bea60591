package estimator

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/estimates"
)

// trackedOf is what e tracks of the pending workload key (zero if
// nothing).
func trackedOf(e *Estimator, key workload.Reference) trackedWorkload {
	p, _ := e.pending.Get(nameFromReference(key))
	return p
}

// A ClusterQueue's part finds each of its workloads after its index grew
// past the size it was made for.
func TestResultsFindEveryWorkloadAfterTheirIndexGrew(t *testing.T) {
	q := newQueueResults(0)
	var added []workloadName
	for i := range 1000 {
		name := workloadName{Namespace: fmt.Sprint("ns-", i%3), Name: fmt.Sprint("w-", i/3)}
		added = append(added, name)
		q.add(name, estimates.Store(WorkloadEstimate{HasWait: true, ExpectedWait: time.Duration(i+1) * time.Millisecond}, nil), "")
	}
	for i, name := range added {
		got, ok := q.position(name)
		if !ok || got != int32(i) {
			t.Fatalf("position(%v) = %d, %v; want %d", name, got, ok, i)
		}
	}
	var names []workloadName
	for name := range q.allNames() {
		names = append(names, name)
	}
	if diff := cmp.Diff(added, names, cmp.AllowUnexported(workloadName{})); diff != "" {
		t.Errorf("allNames() (-want,+got):\n%s", diff)
	}
	if _, ok := q.position(workloadName{Namespace: "ns-0", Name: "w-1000"}); ok {
		t.Error("position found a workload never added")
	}
}
