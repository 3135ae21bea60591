package score

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
)

// rows lists the report's rows in table order: each ClusterQueue by name
// followed by its priorities, then the pool and its priorities.
func (r Report) rows() []Row {
	var out []Row
	for _, cq := range r.ClusterQueues {
		out = append(out, cq)
		out = append(out, cq.Priorities...)
	}
	out = append(out, r.Pooled)
	return append(out, r.Pooled.Priorities...)
}

// hasPriorities tells whether any row is split by priority.
func (r Report) hasPriorities() bool {
	return len(r.Pooled.Priorities) > 0
}

// writeTable prints the report for people: the window, the error table
// (one line per predictor), the coverage table, then one verdict per row.
func writeTable(w io.Writer, r Report) error {
	fmt.Fprintf(w, "window: %s\n\n", describeWindow(r.Window))
	rows := r.rows()
	prio := r.hasPriorities()
	name := func(row Row) string {
		if row.ClusterQueue == "" {
			return "(all)"
		}
		return row.ClusterQueue
	}
	head := func(cols ...string) string {
		if prio {
			cols = append([]string{cols[0], "PRIORITY"}, cols[1:]...)
		}
		return strings.Join(cols, "\t") + "\n"
	}
	cells := func(row Row, first bool, cols ...string) string {
		lead := []string{name(row)}
		if prio {
			lead = append(lead, dash(row.Priority))
		}
		if !first { // the row's name once
			lead = make([]string, len(lead))
		}
		return strings.Join(append(lead, cols...), "\t") + "\n"
	}

	tw := cli.NewTable(w)
	fmt.Fprint(tw, head("CLUSTERQUEUE", "SCORED", "PREDICTOR", "ANSWERED", "MAE", "≈ MEDIAN (FROM BUCKETS)", "FORECAST MAE ÷ THIS"))
	for _, row := range rows {
		for i, p := range orderedPredictors(row) {
			pr := row.Predictors[p]
			scored := thousands(row.Scored)
			if i > 0 {
				scored = ""
			}
			ratio := "-"
			if v := row.ForecastMAERatio[p]; v != nil {
				ratio = strconv.FormatFloat(*v, 'f', 2, 64) + "×"
			}
			fmt.Fprint(tw, cells(row, i == 0, scored, p, thousands(pr.N), cli.SecondsOrDash(pr.MAE), cli.SecondsOrDash(pr.MedianAbsErrorApprox), ratio))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w)
	tw = cli.NewTable(w)
	fmt.Fprint(tw, head("CLUSTERQUEUE", "P50 COVERAGE [95% CI]", "P90 COVERAGE [95% CI]", "RECENT P50/P90", "CALIBRATION P50/P90", "ADMITTED BEFORE ESTIMATE", "DELETED BEFORE ADMISSION"))
	for _, row := range rows {
		fmt.Fprint(tw, cells(row, true, coverageCell(row.P50), coverageCell(row.P90),
			cli.NumberOrDash(row.P50.RecentCoverage)+"/"+cli.NumberOrDash(row.P90.RecentCoverage),
			cli.NumberOrDash(row.P50.CalibrationFactor)+"/"+cli.NumberOrDash(row.P90.CalibrationFactor),
			thousands(row.AdmittedBeforeEstimate), thousands(row.DeletedBeforeAdmission)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w)
	for _, row := range rows {
		if _, err := fmt.Fprintln(w, row.Verdict); err != nil {
			return err
		}
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// coverageCell renders "0.91 [0.89, 0.93] of 1,240", or "-".
func coverageCell(c Coverage) string {
	if c.Coverage == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f [%.2f, %.2f] of %s", *c.Coverage, c.CI95[0], c.CI95[1], thousands(c.Predictions))
}

// describeWindow says in words what was scored.
func describeWindow(w Window) string {
	if w.Scrapes < 2 {
		return fmt.Sprintf("everything since the manager started (one scrape: %s); all ClusterQueues last", strings.Join(w.Sources, ""))
	}
	apart := ""
	if w.Seconds != nil {
		apart = ", " + time.Duration(*w.Seconds*float64(time.Second)).Round(time.Millisecond).String() + " apart"
	}
	return fmt.Sprintf("the difference between %s and %s%s; all ClusterQueues last", w.Sources[0], w.Sources[1], apart)
}
