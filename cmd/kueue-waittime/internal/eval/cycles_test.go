package eval

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
)

func TestCycleSinkKeepsOnlyTheSchedulersCycleLines(t *testing.T) {
	at := time.Date(2026, 11, 30, 1, 0, 0, 500_000_000, time.UTC)
	r := &cycleRecorder{now: func() time.Time { return at }}
	log := logr.New(r.sink()).WithName("scheduler").WithValues("replica-role", "standalone")
	cycle := log.WithValues("schedulingCycle", int64(7))
	cycle.V(2).Info(cycleMessage, "headCount", 3, "waitDuration", 5*time.Millisecond)
	cycle.V(2).Info("Attempting to schedule workload", "headCount", 1, "waitDuration", time.Millisecond)
	cycle.V(3).Info(cycleMessage, "headCount", 4, "waitDuration", time.Millisecond)
	cycle.V(2).Info(cycleMessage, "headCount", "3", "waitDuration", time.Millisecond)
	cycle.V(2).Info(cycleMessage, "headCount", 3)
	cycle.Error(errors.New("boom"), cycleMessage, "headCount", 3, "waitDuration", time.Millisecond)
	log.V(2).Info(cycleMessage, "headCount", 2, "waitDuration", time.Duration(0))

	want := []schedulingCycle{
		{at: at, number: 7, heads: 3, wait: 5 * time.Millisecond},
		{at: at, number: 0, heads: 2, wait: 0},
	}
	if diff := cmp.Diff(want, r.cycles, cmp.AllowUnexported(schedulingCycle{})); diff != "" {
		t.Errorf("cycles (-want +got):\n%s", diff)
	}
	var b strings.Builder
	if err := r.writeCSV(&b); err != nil {
		t.Fatal(err)
	}
	wantCSV := "at_unix_s,cycle,heads,wait_s\n1796000400.500000,7,3,0.005000\n1796000400.500000,0,2,0.000000\n"
	if diff := cmp.Diff(wantCSV, b.String()); diff != "" {
		t.Errorf("CSV (-want +got):\n%s", diff)
	}
}
