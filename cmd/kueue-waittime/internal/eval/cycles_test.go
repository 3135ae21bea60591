package eval

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
)

// entryStatus stands for Kueue's own string type of a head's status.
type entryStatus string

func TestCycleSinkRecordsTheSchedulersCyclesAndTheHeadsItPutBack(t *testing.T) {
	at := time.Date(2026, 11, 30, 1, 0, 0, 500_000_000, time.UTC)
	now := at
	r := &cycleRecorder{now: func() time.Time { return now }}
	log := logr.New(r.sink()).WithName("scheduler").WithValues("replica-role", "standalone")
	cycle := log.WithValues("schedulingCycle", int64(7))
	cycle.V(2).Info(cycleMessage, "headCount", 5, "waitDuration", 5*time.Millisecond)
	cycle.V(2).Info("Attempting to schedule workload", "headCount", 1, "waitDuration", time.Millisecond)
	cycle.V(2).Info("Snapshot taken", "duration", 2*time.Millisecond)
	cycle.V(2).Info("Nomination done", "entries", 4, "inadmissibleEntries", 1, "duration", 10*time.Millisecond)
	cycle.V(2).Info("Workload processing done", "duration", 30*time.Millisecond)
	cycle.V(3).Info("Workload processing done", "duration", time.Second)
	cycle.V(2).Info(requeueMessage, "workload", "ns/a", "status", entryStatus(""))
	cycle.V(2).Info(requeueMessage, "workload", "ns/b", "status", entryStatus("skipped"))
	cycle.V(2).Info(requeueMessage, "workload", "ns/c", "status", entryStatus("nominated"))
	cycle.V(2).Info(requeueMessage, "workload", "ns/d", "status", "")
	cycle.V(2).Info(requeueMessage, "workload", "ns/f", "status", entryStatus("preemptionGated"))
	cycle.V(3).Info(requeueMessage, "workload", "ns/e", "status", entryStatus("skipped"))
	log.WithValues("schedulingCycle", int64(6)).V(2).Info(requeueMessage, "status", entryStatus("skipped"))
	log.V(2).Info(requeueMessage, "status", entryStatus("skipped"))
	cycle.V(3).Info(cycleMessage, "headCount", 4, "waitDuration", time.Millisecond)
	cycle.V(2).Info(cycleMessage, "headCount", "3", "waitDuration", time.Millisecond)
	cycle.V(2).Info(cycleMessage, "headCount", 3)
	cycle.Error(errors.New("boom"), cycleMessage, "headCount", 3, "waitDuration", time.Millisecond)
	now = at.Add(40 * time.Millisecond)
	log.V(2).Info(cycleMessage, "headCount", 2, "waitDuration", time.Duration(0))
	// The last cycle carries no number: nothing is counted in it.
	log.V(2).Info(requeueMessage, "status", entryStatus("skipped"))

	want := []schedulingCycle{
		{at: at, number: 7, heads: 5, wait: 5 * time.Millisecond, phases: [cyclePhases]time.Duration{2 * time.Millisecond, 10 * time.Millisecond, 30 * time.Millisecond}, notNominated: 2, skipped: 1, requeue: 2},
		{at: now, number: 0, heads: 2, wait: 0},
	}
	if diff := cmp.Diff(want, r.cycles, cmp.AllowUnexported(schedulingCycle{})); diff != "" {
		t.Errorf("cycles (-want +got):\n%s", diff)
	}
	var b strings.Builder
	if err := r.writeCSV(&b); err != nil {
		t.Fatal(err)
	}
	wantCSV := "at_unix_s,cycle,heads,wait_s,snapshot_s,nomination_s,processing_s,not_nominated,skipped,requeued_other\n" +
		"1796000400.500000,7,5,0.005000,0.002000,0.010000,0.030000,2,1,2\n" +
		"1796000400.540000,0,2,0.000000,0.000000,0.000000,0.000000,0,0,0\n"
	if diff := cmp.Diff(wantCSV, b.String()); diff != "" {
		t.Errorf("CSV (-want +got):\n%s", diff)
	}
}
