package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
)

// runPhases is how many parts of a replica's run coverageOverTheRun tells
// apart, and minPhaseGroup how many scored workloads a replica's
// ClusterQueue needs to be split into them.
const (
	runPhases     = 5
	minPhaseGroup = 10
)

// phaseCoverage counts, per part of the runs, the scored workloads and
// those whose remaining wait the roll's raw P50 and P90 and the published
// (calibrated) ones covered.
type phaseCoverage struct {
	scored, raw50, published50, raw90, published90 [runPhases]int
}

// coverageOverTheRun splits the scored workloads of each replica's
// ClusterQueue (a level, seed and ClusterQueue), in the order of their
// first estimates, into runPhases parts of equal size (within one when they
// do not divide evenly) and counts the coverage of each
// part. Only workloads read with the roll's raw quantiles and with both
// published quantiles count, and only replicas' ClusterQueues with at least
// minPhaseGroup of them.
func coverageOverTheRun(samples []ScoredSample) phaseCoverage {
	type replicaQueue struct {
		level float64
		seed  int
		queue string
	}
	groups := map[replicaQueue][]ScoredSample{}
	for _, s := range samples {
		sc := s.Score
		if !s.Replayable || !sc.RawP50.OK || !sc.RawP90.OK || !sc.P50.OK || !sc.P90.OK {
			continue
		}
		k := replicaQueue{s.Level, s.Seed, s.Queue}
		groups[k] = append(groups[k], s)
	}
	var c phaseCoverage
	for _, g := range groups {
		if len(g) < minPhaseGroup {
			continue
		}
		slices.SortStableFunc(g, func(a, b ScoredSample) int { return a.Score.EstimatedAt.Compare(b.Score.EstimatedAt) })
		for i, s := range g {
			p := i * runPhases / len(g)
			sc := s.Score
			c.scored[p]++
			c.raw50[p] += boolCount(sc.Actual <= sc.RawP50.Wait)
			c.published50[p] += boolCount(sc.Actual <= sc.P50.Wait)
			c.raw90[p] += boolCount(sc.Actual <= sc.RawP90.Wait)
			c.published90[p] += boolCount(sc.Actual <= sc.P90.Wait)
		}
	}
	return c
}

// total is the number of workloads c counted.
func (c phaseCoverage) total() int {
	n := 0
	for _, v := range c.scored {
		n += v
	}
	return n
}

// cells are the "raw → published" coverage cells of c's parts for one
// quantile.
func (c phaseCoverage) cells(raw, published *[runPhases]int) []string {
	out := make([]string, runPhases)
	for p := range out {
		if c.scored[p] == 0 {
			out[p] = "—"
			continue
		}
		n := float64(c.scored[p])
		out[p] = fmt.Sprintf("%.2f → %.2f", float64(raw[p])/n, float64(published[p])/n)
	}
	return out
}

// add adds o's counts to c's.
func (c *phaseCoverage) add(o phaseCoverage) {
	for p := range runPhases {
		c.scored[p] += o.scored[p]
		c.raw50[p] += o.raw50[p]
		c.published50[p] += o.published50[p]
		c.raw90[p] += o.raw90[p]
		c.published90[p] += o.published90[p]
	}
}

// scenarioPhases is one scenario's coverageOverTheRun.
type scenarioPhases struct {
	name     string
	coverage phaseCoverage
}

// writeCoverageOverTheRun writes the coverage of the raw and the published
// quantiles per part of the runs (see coverageOverTheRun), a row per
// scenario with any such workload and one for all of them; nothing when
// none has.
func writeCoverageOverTheRun(w io.Writer, scenarios []scenarioPhases) {
	scenarios = slices.DeleteFunc(slices.Clone(scenarios), func(s scenarioPhases) bool { return s.coverage.total() == 0 })
	if len(scenarios) == 0 {
		return
	}
	slices.SortFunc(scenarios, func(a, b scenarioPhases) int { return cmp.Compare(a.name, b.name) })
	fmt.Fprintln(w)
	fmt.Fprintln(w, "### Coverage over each run")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "The scored workloads of each replica's ClusterQueue (those with at least %d, the CSV keeping the roll's raw quantiles), "+
		"in the order of their first estimates, split into %d parts of equal size: in each part, the coverage of the roll's raw quantile → "+
		"of the published (calibrated) one. Each replica's ClusterQueues are new when it starts, and the calibrators learn from the waits "+
		"that have ended: a raw coverage that moves from part to part is a bias of the roll that drifts while the replica runs, "+
		"and a published coverage that moves the other way is the calibration following it late.\n", minPhaseGroup, runPhases)
	fmt.Fprintln(w)
	var head, rule strings.Builder
	head.WriteString("| scenario | scored |")
	rule.WriteString("|---|---|")
	for _, q := range []string{"P50", "P90"} {
		for p := range runPhases {
			fmt.Fprintf(&head, " %s, part %d |", q, p+1)
			rule.WriteString("---|")
		}
	}
	fmt.Fprintln(w, head.String())
	fmt.Fprintln(w, rule.String())
	var all phaseCoverage
	row := func(name string, c phaseCoverage) {
		cells := append(c.cells(&c.raw50, &c.published50), c.cells(&c.raw90, &c.published90)...)
		fmt.Fprintf(w, "| %s | %d | %s |\n", name, c.total(), strings.Join(cells, " | "))
	}
	for _, s := range scenarios {
		row(s.name, s.coverage)
		all.add(s.coverage)
	}
	row("**all**", all)
}
