package runner

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	visibility "sigs.k8s.io/kueue/apis/visibility/v1beta2"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/report"
)

// reportT0 is the start of the made-up runs (as the report package's tests
// have it).
var reportT0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// Into a log (not a terminal) the live view is one plain line, without
// the escape codes that clear a screen.
func TestRenderLivePrintsPlainLinesIntoALog(t *testing.T) {
	p50, p90 := int64(1500), int64(4000)
	summary := &visibility.PendingWorkloadsSummary{Items: []visibility.PendingWorkload{{
		WaitTimeEstimate: &visibility.WaitTimeEstimate{P50WaitMilliseconds: &p50, P90WaitMilliseconds: &p90},
	}}}
	summary.Items[0].Name = "w0003"
	runs := []*report.WorkloadRun{{Created: reportT0, Admitted: true}, {Created: reportT0}, {}}
	var out bytes.Buffer
	renderLive(&out, "demo-eval", summary, runs, reportT0.Add(time.Minute))
	want := "12:01:00 demo-eval: submitted 2/3, running 1, finished 0, pending 1; ETA P50/P90: w0003 1.5s/4s\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
	if strings.Contains(out.String(), "\033[") {
		t.Error("escape codes in a log")
	}
}

// A log line names the first pending workloads in queue order with their
// ETAs, a workload without one with a dash (and its admissibility when it
// has one), and counts the rest.
func TestRenderLiveLogsTheETAsOfTheFirstPendingWorkloads(t *testing.T) {
	ms := func(v int64) *int64 { return &v }
	var items []visibility.PendingWorkload
	for i := range 7 {
		item := visibility.PendingWorkload{}
		item.Name = fmt.Sprintf("w%d", i)
		switch i {
		case 1:
			item.WaitTimeEstimate = &visibility.WaitTimeEstimate{Admissibility: "Unfeasible"}
		case 2:
		default:
			item.WaitTimeEstimate = &visibility.WaitTimeEstimate{P50WaitMilliseconds: ms(int64(i) * 1000), P90WaitMilliseconds: ms(int64(i) * 2500)}
		}
		items = append(items, item)
	}
	var out bytes.Buffer
	renderLive(&out, "cq", &visibility.PendingWorkloadsSummary{Items: items}, nil, reportT0)
	want := "12:00:00 cq: submitted 0/0, running 0, finished 0, pending 7; ETA P50/P90: w0 0s/0s, w1 — (Unfeasible), w2 —, w3 3s/7.5s, w4 4s/10s (+2 more)\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("log line (-want +got):\n%s", diff)
	}
}
