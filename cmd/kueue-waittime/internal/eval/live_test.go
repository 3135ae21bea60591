package eval

import (
	"bytes"
	"strings"
	"testing"
	"time"

	visibility "sigs.k8s.io/kueue/apis/visibility/v1beta2"
)

// Into a log (not a terminal) the live view is one plain line, without
// the escape codes that clear a screen.
func TestRenderLivePrintsPlainLinesIntoALog(t *testing.T) {
	p50, p90 := int64(1500), int64(4000)
	summary := &visibility.PendingWorkloadsSummary{Items: []visibility.PendingWorkload{{
		WaitTimeEstimate: &visibility.WaitTimeEstimate{P50WaitMilliseconds: &p50, P90WaitMilliseconds: &p90},
	}}}
	summary.Items[0].Name = "w0003"
	runs := []*workloadRun{{created: reportT0, admitted: true}, {created: reportT0}, {}}
	var out bytes.Buffer
	renderLive(&out, "demo-eval", summary, runs, reportT0.Add(time.Minute))
	want := "12:01:00 demo-eval: submitted 2/3, running 1, finished 0, pending 1; next w0003: ETA P50 1.5s, P90 4s\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
	if strings.Contains(out.String(), "\033[") {
		t.Error("escape codes in a log")
	}
}
