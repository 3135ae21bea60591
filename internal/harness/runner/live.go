package runner

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	visibility "sigs.k8s.io/kueue/apis/visibility/v1beta2"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/report"
)

// renderLive redraws the terminal with the pending workloads as the
// visibility API serves them, and the running and finished counts.
func renderLive(w io.Writer, cq string, summary *visibility.PendingWorkloadsSummary, runs []*report.WorkloadRun, now time.Time) {
	created, running, finished := 0, 0, 0
	for _, r := range runs {
		if r.Created.IsZero() {
			continue
		}
		created++
		switch {
		case r.Finished:
			finished++
		case r.Admitted:
			running++
		}
	}
	if !isTerminal(w) {
		// A log, not a screen: one plain line per redraw, with the ETAs of
		// the first pending workloads in queue order.
		line := fmt.Sprintf("%s %s: submitted %d/%d, running %d, finished %d, pending %d", now.Format("15:04:05"), cq, created, len(runs), running, finished, len(summary.Items))
		if len(summary.Items) > 0 {
			line += "; ETA P50/P90: " + logETAs(summary.Items, maxLogETAs)
		}
		fmt.Fprintln(w, line)
		return
	}
	fmt.Fprint(w, "\033[H\033[2J")
	fmt.Fprintf(w, "ClusterQueue %s — %s — submitted %d/%d, running %d, finished %d, pending %d\n\n",
		cq, now.Format("15:04:05"), created, len(runs), running, finished, len(summary.Items))
	if m := summary.QueueModel; m != nil {
		fmt.Fprintf(w, "queue model: k_eff %d (bottleneck %s/%s)", m.EffectiveServers, m.BottleneckFlavor, m.BottleneckResource)
		if m.UtilizationMilli != nil {
			fmt.Fprintf(w, ", utilization %.2f", float64(*m.UtilizationMilli)/1000)
		}
		if m.MeanWaitMilliseconds != nil {
			fmt.Fprintf(w, ", a-priori mean wait %.1fs", float64(*m.MeanWaitMilliseconds)/1000)
		} else if m.Stable != nil && !*m.Stable {
			fmt.Fprint(w, ", unstable: no a-priori mean wait")
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "POSITION\tWORKLOAD\tWAITING\tADMISSIBILITY\tETA P50\tETA P90\tMETHOD\tREASON")
	const maxRows = 20
	for i := range summary.Items {
		if i == maxRows {
			fmt.Fprintf(tw, "…\t%d more\t\t\t\t\t\t\n", len(summary.Items)-maxRows)
			break
		}
		item := &summary.Items[i]
		waiting := now.Sub(item.CreationTimestamp.Time).Round(time.Second)
		adm, p50, p90, method, reason := "—", "—", "—", "—", ""
		if est := item.WaitTimeEstimate; est != nil {
			adm, method, reason = string(est.Admissibility), string(est.Method), est.Reason
			if est.P50WaitMilliseconds != nil {
				p50 = (time.Duration(*est.P50WaitMilliseconds) * time.Millisecond).Round(100 * time.Millisecond).String()
			}
			if est.P90WaitMilliseconds != nil {
				p90 = (time.Duration(*est.P90WaitMilliseconds) * time.Millisecond).Round(100 * time.Millisecond).String()
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", item.PositionInClusterQueue, item.Name, waiting, adm, p50, p90, method, reason)
	}
	tw.Flush()
}

// maxLogETAs is how many pending workloads a log line of the live view
// names with their ETAs.
const maxLogETAs = 5

// logETAs lists the first n pending workloads as "name P50/P90", a
// workload without a P50 and P90 as "name —" with its admissibility when
// it has one (an Unfeasible workload has no ETA), and how many more.
func logETAs(items []visibility.PendingWorkload, n int) string {
	var b strings.Builder
	for i := range items {
		if i == n {
			fmt.Fprintf(&b, " (+%d more)", len(items)-n)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		item := &items[i]
		b.WriteString(item.Name)
		est := item.WaitTimeEstimate
		switch {
		case est != nil && est.P50WaitMilliseconds != nil && est.P90WaitMilliseconds != nil:
			fmt.Fprintf(&b, " %s/%s",
				(time.Duration(*est.P50WaitMilliseconds) * time.Millisecond).Round(100*time.Millisecond),
				(time.Duration(*est.P90WaitMilliseconds) * time.Millisecond).Round(100*time.Millisecond))
		case est != nil && est.Admissibility != "":
			fmt.Fprintf(&b, " — (%s)", est.Admissibility)
		default:
			b.WriteString(" —")
		}
	}
	return b.String()
}

// isTerminal reports whether w is a character device (a terminal), where
// the table is redrawn in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
