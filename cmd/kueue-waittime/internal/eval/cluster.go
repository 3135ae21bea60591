package eval

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/score"
	"github.com/kueue-waittime/kueue-waittime/internal/harness/runner"
	"github.com/kueue-waittime/kueue-waittime/internal/harness/scenario"
)

// clusterHarness runs scenarios on a local cluster (runner.ClusterHarness:
// every arrival a Job through Kueue's job integration, run on KWOK nodes)
// and scores them from the manager's own prediction ledger, read from its
// metrics endpoint at the end of the run, as kueue-waittime score reads it.
type clusterHarness struct {
	runner.ClusterHarness
	// metricsURL and metricsToken reach the manager's metrics endpoint, the
	// token authorized by the manifests' metrics-reader ClusterRole.
	metricsURL, metricsToken string
}

// run runs every level × seed replica of a scenario on the cluster, then
// scores them from the manager's metrics.
func (h *clusterHarness) run(ctx context.Context, spec *scenario.Spec) (*ClusterReport, error) {
	results, start, err := h.ClusterHarness.Run(ctx, spec)
	if err != nil {
		return nil, err
	}
	sc, err := score.ScrapeURL(ctx, h.metricsURL, true, h.metricsToken)
	if err != nil {
		return nil, fmt.Errorf("scoring from the manager's metrics: %w", err)
	}
	return &ClusterReport{
		Scenario: spec.Name, WallTime: time.Since(start).Round(time.Second).String(),
		MetricsURL: h.metricsURL, Replicas: results, Score: sc,
	}, nil
}

// ClusterReport is what a scenario did on the cluster and how the
// manager's ledger scored it.
type ClusterReport struct {
	Scenario string `json:"scenario"`
	WallTime string `json:"wallTime"`
	// MetricsURL is the manager's metrics endpoint the score was read from.
	MetricsURL string                        `json:"metricsURL"`
	Replicas   []runner.ClusterReplicaResult `json:"replicas"`
	// Score is the manager's prediction ledger since it started, as
	// `kueue-waittime score --url` reads it: one row per ClusterQueue.
	Score score.Report `json:"score"`
}

// WriteSummary writes what the Jobs did and the manager's scores, for
// people (the demo's closing screen and eval --cluster's report).
func (r *ClusterReport) WriteSummary(w io.Writer) error {
	for _, rr := range r.Replicas {
		fmt.Fprintf(w, "Summary (%s, level %.2f, seed %d): %d Jobs submitted through LocalQueues, %d completed, %d pods Succeeded on KWOK nodes, %d quota reservations.\n",
			rr.Namespace, rr.Level, rr.Seed, rr.Jobs, rr.JobsCompleted, rr.PodsSucceeded, rr.Admissions)
		fmt.Fprintf(w, "Observed mean wait (Job created → quota reserved) %.1fs; the visibility API served a wait estimate for %d of the Jobs while they were pending.\n",
			rr.ObservedMeanWait, rr.EstimatesSeen)
		for _, u := range rr.Unfeasible {
			fmt.Fprintf(w, "Unfeasible Job %s: %s — %s\n", u.Job, cmp.Or(u.Admissibility, "no estimate seen"), cmp.Or(u.Reason, "no reason seen"))
		}
	}
	p := r.Score.Pooled
	fmt.Fprintf(w, "Scored by the manager's prediction ledger (its metrics, %s): %d workloads scored at admission (%d admitted before any estimate).\n",
		r.MetricsURL, p.Scored, p.AdmittedBeforeEstimate)
	if p.Scored > 0 {
		mae := func(name string) string {
			if pr, ok := p.Predictors[name]; ok && pr.MAE != nil {
				return fmt.Sprintf("%.2fs (n=%d)", *pr.MAE, pr.N)
			}
			return "—"
		}
		cov := func(c score.Coverage) string {
			if c.Coverage == nil {
				return "—"
			}
			return fmt.Sprintf("%.2f [%.2f, %.2f] of %d", *c.Coverage, c.CI95[0], c.CI95[1], c.Predictions)
		}
		fmt.Fprintf(w, "Mean absolute error of the wait that remained from each workload's first estimate: forecast %s, EMA %s, paper's Erlang-C %s, Whitt %s. P50 coverage %s, P90 coverage %s.\n",
			mae("forecast"), mae("ema"), mae("paper"), mae("whitt"), cov(p.P50), cov(p.P90))
	}
	return nil
}

// WriteMarkdown writes the scenario's summary and the manager's score
// table (eval --cluster).
func (r *ClusterReport) WriteMarkdown(w io.Writer) error {
	fmt.Fprintf(w, "## %s on the cluster (Jobs through Kueue's job integration, KWOK nodes), wall time %s\n\n", r.Scenario, r.WallTime)
	if err := r.WriteSummary(w); err != nil {
		return err
	}
	fmt.Fprintln(w, "\n```")
	if err := score.WriteTable(w, r.Score); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "```")
	return err
}
