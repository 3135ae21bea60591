package plan

import (
	"fmt"
	"io"
	"strings"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// writeTable prints the report for people: per ClusterQueue a summary, a
// table of classes and a table of priority levels.
func writeTable(w io.Writer, r *Report) error {
	tw := cli.NewTable(w)
	for i, q := range r.ClusterQueues {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		fmt.Fprintf(tw, "ClusterQueue %s\n", q.Name)
		row := func(k, v string) { fmt.Fprintf(tw, "  %s\t%s\n", k, v) }
		row("cohort", cmpOr(q.Cohort, "-"))
		row("queueing strategy", q.QueueingStrategy)
		if !q.Active {
			row("status", "inactive: "+q.InactiveReason)
		}
		for j, c := range q.Capacity {
			label := ""
			if j == 0 {
				label = "capacity"
			}
			row(label, fmt.Sprintf("%s/%s: nominal %s, borrowable %s", c.Flavor, c.Resource, c.Nominal, c.Borrowable))
		}
		if q.KEff != nil {
			k := fmt.Sprintf("%d (class mix, %s quota; bottleneck %s/%s)", *q.KEff, r.CapacityBasis, q.BottleneckFlavor, q.BottleneckResource)
			if q.KEffPotential != nil && *q.KEffPotential != *q.KEff {
				k += fmt.Sprintf("; up to %d borrowing", *q.KEffPotential)
			}
			row("k_eff", k)
		}
		if q.ArrivalRate != nil {
			row("arrivals", fmt.Sprintf("λ = %s/s (Quotable classes), E[S] = %s, C_S² = %s, c_a² = %s",
				cli.Number(*q.ArrivalRate), cli.SecondsOrDash(q.MeanServiceSeconds), cli.NumberOrDash(q.ServiceSCV), cli.NumberOrDash(q.ArrivalSCV)))
		}
		if q.Utilization != nil {
			row("utilization ρ_eff", cli.Number(*q.Utilization))
		}
		if q.Stable != nil {
			if *q.Stable {
				row("stability", "stable (ρ < 1)")
				row("P(wait > 0)", cli.NumberOrDash(q.ProbabilityOfWait)+" (Erlang-C)")
				row("mean wait", cli.SecondsOrDash(q.MeanWaitSeconds)+" (paper Approximation 1)")
				row("mean wait, Whitt", cli.SecondsOrDash(q.WhittMeanWaitSeconds)+" (GI/G/k, Allen–Cunneen)")
				row("P90 wait", cli.SecondsOrDash(q.P90WaitSeconds)+" (Approximation 1 law)")
			} else {
				row("stability", "unstable (ρ ≥ 1): no finite mean wait")
			}
		}
		for j, n := range q.Notes {
			label := ""
			if j == 0 {
				label = "notes"
			}
			row(label, n)
		}

		if len(q.Classes) > 0 {
			fmt.Fprintln(tw)
			fmt.Fprintln(tw, "  CLASS\tPRIORITY\tADMISSIBILITY\tK_EFF\tBOTTLENECK\tλ/s\tE[S]\tρ_p\tMEAN WAIT\tWHITT\tP90")
			for _, c := range q.Classes {
				k := "-"
				if c.KEff != nil {
					k = fmt.Sprint(*c.KEff)
				}
				fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
					c.Name, c.Priority, c.Admissibility, k, bottleneck(c.BottleneckFlavor, c.BottleneckResource),
					cli.Number(c.ArrivalRate), cli.Seconds(c.MeanServiceSeconds), utilization(c.Utilization, c.Stable),
					cli.SecondsOrDash(c.MeanWaitSeconds), cli.SecondsOrDash(c.WhittMeanWaitSeconds), cli.SecondsOrDash(c.P90WaitSeconds))
			}
			for _, c := range q.Classes {
				if c.Admissibility == capacity.Unfeasible.String() {
					fmt.Fprintf(tw, "  %s is Unfeasible: %s\n", c.Name, c.Reason)
				}
			}
		}
		if len(q.Priorities) > 0 {
			fmt.Fprintln(tw)
			fmt.Fprintln(tw, "  PRIORITY\tCLASSES\tρ_p\tE[S]\tC_S²\tMEAN WAIT\tWHITT\tP90")
			for _, p := range q.Priorities {
				fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
					p.Priority, strings.Join(p.Classes, ","), utilization(p.Utilization, p.Stable),
					cli.SecondsOrDash(p.MeanServiceSeconds), cli.NumberOrDash(p.ServiceSCV),
					cli.SecondsOrDash(p.MeanWaitSeconds), cli.SecondsOrDash(p.WhittMeanWaitSeconds), cli.SecondsOrDash(p.P90WaitSeconds))
			}
		}
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(tw)
		for _, n := range r.Notes {
			fmt.Fprintf(tw, "note: %s\n", n)
		}
	}
	return tw.Flush()
}

func bottleneck(flavor, resource string) string {
	switch {
	case resource == "":
		return "-"
	case flavor == "":
		return resource + " (not covered)"
	}
	return flavor + "/" + resource
}

// utilization renders ρ, marking an unstable level.
func utilization(rho *float64, stable *bool) string {
	if rho == nil {
		return "-"
	}
	s := cli.Number(*rho)
	if stable != nil && !*stable {
		s += " (unstable)"
	}
	return s
}

func cmpOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
