package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kueue-waittime/kueue-waittime/pkg/accuracy"
	"sigs.k8s.io/kueue/pkg/scheduler/waittime/estimator"
)

// The summary's sections on the accuracy targets of issue 12 that are not
// coverage: the forecast's MAE against its baselines per ClusterQueue, the
// relative error of long waits in transient overload and the bias of each
// priority class.

// Target ρ of the levels the transient-overload target covers.
const overloadLow, overloadHigh = 1.1, 1.3

// minBiasSlice is the fewest scored workloads a priority class of a level
// needs for its bias row (as the coverage targets count slices).
const minBiasSlice = 50

// queueFacts are what a scenario's report says of one ClusterQueue at one
// level beyond its scores: its mean service, seconds (each ClusterQueue's
// figures count relative errors from half of it; 0: not known), and its
// target utilization.
type queueFacts struct {
	meanService, target float64
}

// reportedQueues are a scenario's ClusterQueues by level and name.
type reportedQueues map[float64]map[string]queueFacts

// reportQueues reads a scenario's ClusterQueues from its report
// (<scenario>.json beside its CSV).
func reportQueues(dir, scenario string) (reportedQueues, error) {
	path := filepath.Join(dir, scenario+".json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the ClusterQueues of %s: %w", scenario, err)
	}
	var report struct {
		Levels []struct {
			Target float64 `json:"targetUtilization"`
			Queues []struct {
				Name       string  `json:"name"`
				Target     float64 `json:"targetUtilization"`
				Predictors map[string]struct {
					RelativeFloorS float64 `json:"relativeFloorSeconds"`
				} `json:"predictors"`
			} `json:"queues"`
		} `json:"levels"`
	}
	if err := json.Unmarshal(data, &report); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := reportedQueues{}
	for _, l := range report.Levels {
		level := roundLevel(l.Target)
		out[level] = map[string]queueFacts{}
		for _, q := range l.Queues {
			facts := queueFacts{target: q.Target}
			if pr, ok := q.Predictors[string(estimator.PredictorForecast)]; ok {
				facts.meanService = 2 * pr.RelativeFloorS
			}
			out[level][q.Name] = facts
		}
	}
	return out, nil
}

// roundLevel is a level as the CSV writes it (two decimals), so that the
// report's and the CSV's levels compare equal.
func roundLevel(l float64) float64 { return math.Round(l*100) / 100 }

// longWaitRow is one overload level's relative errors over the remaining
// waits of at least twice their ClusterQueue's mean service.
type longWaitRow struct {
	scenario string
	level    float64
	scored   int // workloads of the level whose ClusterQueue's mean service is known
	long     int // of them, remaining waits ≥ 2 E[S]
	relative map[estimator.Predictor]*float64
}

// longWaitRows are a scenario's rows for its levels of target ρ 1.1–1.3.
func longWaitRows(scenario string, levels map[float64][]ScoredSample, queues reportedQueues) []longWaitRow {
	var rows []longWaitRow
	for _, level := range slices.Sorted(maps.Keys(levels)) {
		if level < overloadLow-1e-9 || level > overloadHigh+1e-9 {
			continue
		}
		row := longWaitRow{scenario: scenario, level: level, relative: map[estimator.Predictor]*float64{}}
		sums := map[estimator.Predictor]float64{}
		counts := map[estimator.Predictor]int{}
		for _, s := range levels[level] {
			es := queues[roundLevel(level)][s.Queue].meanService
			if es <= 0 {
				continue
			}
			row.scored++
			actual := s.Score.Actual.Seconds()
			if actual < 2*es {
				continue
			}
			row.long++
			for _, p := range estimator.Predictors {
				if pred := s.Score.Prediction(p); pred.OK {
					sums[p] += math.Abs(pred.Wait.Seconds()-actual) / actual
					counts[p]++
				}
			}
		}
		for p, n := range counts {
			row.relative[p] = ptr(sums[p] / float64(n))
		}
		rows = append(rows, row)
	}
	return rows
}

// writeSectionHead writes a summary section's title and its introduction
// (format and args, as fmt.Fprintf takes them), each after a blank line,
// and the blank line before its table.
func writeSectionHead(w io.Writer, title, intro string, args ...any) {
	fmt.Fprintf(w, "\n### %s\n\n", title)
	fmt.Fprintf(w, intro+"\n\n", args...)
}

func writeLongWaits(w io.Writer, rows []longWaitRow) {
	if len(rows) == 0 {
		return
	}
	writeSectionHead(w, "Long waits in transient overload",
		"Levels of target ρ %.1f–%.1f: the mean relative error |predicted − remaining| / remaining over the scored workloads "+
			"whose remaining wait was at least twice their ClusterQueue's mean service (2 E[S], from the scenario's report), "+
			"each predictor over the same workloads (a predictor without an answer for some: over the others).", overloadLow, overloadHigh)
	fmt.Fprintln(w, "| scenario | level | scored | remaining ≥ 2 E[S] | forecast | EMA | paper | Whitt |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		cell := func(p estimator.Predictor) string {
			if v := r.relative[p]; v != nil {
				return fmt.Sprintf("%.2f", *v)
			}
			return "—"
		}
		fmt.Fprintf(w, "| %s | %.2f | %d | %d | %s | %s | %s | %s |\n", r.scenario, r.level, r.scored, r.long,
			cell(estimator.PredictorForecast), cell(estimator.PredictorEMA), cell(estimator.PredictorPaper), cell(estimator.PredictorWhitt))
	}
}

// priorityBiasRow is the forecast's bias on one group of a level's
// workloads: a priority class, or a demand class of one ClusterQueue.
type priorityBiasRow struct {
	scenario, class string
	level           float64
	summary         accuracy.Summary
	// p50, p90: the published quantiles' coverage of the group.
	p50, p90 float64
}

// priorityBiasRows are a scenario's rows for the priority classes of each
// level with at least minBiasSlice scored workloads (none for a scenario
// with one class or none).
func priorityBiasRows(scenario string, levels map[float64][]ScoredSample) []priorityBiasRow {
	return groupBiasRows(scenario, levels, func(s ScoredSample) (group, within string) { return s.PriorityClass, "" })
}

// demandClassBiasRows are a scenario's rows for the demand classes of each
// ClusterQueue of a level that has more than one, as the scenario names
// them (the CSV's class), with at least minBiasSlice scored workloads.
func demandClassBiasRows(scenario string, levels map[float64][]ScoredSample) []priorityBiasRow {
	return groupBiasRows(scenario, levels, func(s ScoredSample) (group, within string) { return s.Queue + "/" + s.Class, s.Queue })
}

// groupBiasRows groups each level's workloads with a forecast by key's
// group and keeps the groups with at least minBiasSlice workloads whose
// "within" (a ClusterQueue, or "" for the whole level) holds at least two
// groups; an empty group is left out.
func groupBiasRows(scenario string, levels map[float64][]ScoredSample, key func(ScoredSample) (group, within string)) []priorityBiasRow {
	var rows []priorityBiasRow
	for level, samples := range levels {
		type acc struct {
			set              []accuracy.Sample
			p50, p90, within string
			hit50, hit90     int
		}
		groups := map[string]*acc{}
		perWithin := map[string]int{}
		for _, s := range samples {
			if !s.Score.Forecast.OK {
				continue
			}
			group, within := key(s)
			g, ok := groups[group]
			if !ok {
				g = &acc{within: within}
				groups[group] = g
				perWithin[within]++
			}
			g.set = append(g.set, accuracy.Sample{Predicted: s.Score.Forecast.Wait.Seconds(), Actual: s.Score.Actual.Seconds(), Batch: s.Batch})
			if s.Score.P50.OK && s.Score.Actual <= s.Score.P50.Wait {
				g.hit50++
			}
			if s.Score.P90.OK && s.Score.Actual <= s.Score.P90.Wait {
				g.hit90++
			}
		}
		for group, g := range groups {
			if group == "" || strings.HasSuffix(group, "/") || perWithin[g.within] < 2 || len(g.set) < minBiasSlice {
				continue
			}
			n := float64(len(g.set))
			rows = append(rows, priorityBiasRow{scenario: scenario, class: group, level: level, summary: accuracy.Summarize(g.set, 0),
				p50: float64(g.hit50) / n, p90: float64(g.hit90) / n})
		}
	}
	slices.SortFunc(rows, func(a, b priorityBiasRow) int {
		return cmp.Or(cmp.Compare(a.level, b.level), cmp.Compare(a.class, b.class))
	})
	return rows
}

func writePriorityBias(w io.Writer, rows []priorityBiasRow) {
	writeGroupBias(w, rows, "Bias by priority class", "priority class",
		"Each priority class of a level with at least %d scored workloads, where a level has more than one")
}

func writeDemandClassBias(w io.Writer, rows []priorityBiasRow) {
	writeGroupBias(w, rows, "Bias by demand class", "ClusterQueue / class",
		"Each demand class (as the scenario names it) of a ClusterQueue with more than one, at each level, with at least %d scored workloads")
}

func writeGroupBias(w io.Writer, rows []priorityBiasRow, title, column, intro string) {
	if len(rows) == 0 {
		return
	}
	writeSectionHead(w, title, intro+": the forecast's mean error (predicted − remaining, "+
		"seconds, batch-means 95%%), that bias over the group's mean remaining wait, and the published quantiles' coverage.", minBiasSlice)
	fmt.Fprintf(w, "| scenario | level | %s | scored | remaining (s) | bias (s) | bias ÷ remaining | P50 coverage | P90 coverage |\n", column)
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		s := r.summary
		bias := fmt.Sprintf("%+.3f", s.Bias)
		if ci := interval(s.BiasInterval); ci != nil {
			bias += fmt.Sprintf(" [%+.3f, %+.3f]", ci[0], ci[1])
		}
		share := "—"
		if s.MeanActual > 0 {
			share = fmt.Sprintf("%+.0f %%", 100*s.Bias/s.MeanActual)
		}
		fmt.Fprintf(w, "| %s | %.2f | %s | %d | %.2f | %s | %s | %.2f | %.2f |\n", r.scenario, r.level, r.class, s.N, s.MeanActual, bias, share, r.p50, r.p90)
	}
}

// The MAE targets, per busy ClusterQueue (a target ρ of at least
// minRatioTarget and at least minRatioScored scored workloads at a level):
// the forecast's MAE at most maxRatioEMA × the EMA's and, where the
// ClusterQueue has an oracle (oracle.go), at most maxRatioOracle × the
// oracle's; pooled over every busy ClusterQueue, forecast ÷ EMA at most
// maxPooledRatioEMA with its interval below maxPooledRatioEMAInterval. The
// paper formula's ratio is reported, not judged.
const (
	minRatioTarget            = 0.7
	minRatioScored            = 30
	maxRatioEMA               = 0.85
	maxRatioOracle            = 1.10
	maxPooledRatioEMA         = 0.65
	maxPooledRatioEMAInterval = 0.75
)

// ratioRow is one ClusterQueue of a level against the MAE targets.
type ratioRow struct {
	scenario, queue string
	level, target   float64
	samples         []ScoredSample
	figures         Figures
}

// ratioRows are a scenario's busy ClusterQueues of each level.
func ratioRows(scenario string, levels map[float64][]ScoredSample, queues reportedQueues) []ratioRow {
	var rows []ratioRow
	for _, level := range slices.Sorted(maps.Keys(levels)) {
		byQueue := map[string][]ScoredSample{}
		for _, s := range levels[level] {
			byQueue[s.Queue] = append(byQueue[s.Queue], s)
		}
		for _, name := range slices.Sorted(maps.Keys(byQueue)) {
			facts, ok := queues[roundLevel(level)][name]
			if !ok || facts.target < minRatioTarget-1e-9 || len(byQueue[name]) < minRatioScored {
				continue
			}
			rows = append(rows, ratioRow{scenario: scenario, queue: name, level: level, target: facts.target,
				samples: byQueue[name], figures: figures(byQueue[name], nil, 0, 0)})
		}
	}
	return rows
}

// pooledRatio is forecast ÷ base over every row's samples together, each
// (scenario, batch) a batch of its own for the interval.
func pooledRatio(rows []ratioRow, base estimator.Predictor) (RatioResult, bool) {
	type batchKey struct {
		scenario string
		batch    int
	}
	labels := map[batchKey]int{}
	var pooled []ScoredSample
	for _, r := range rows {
		for _, s := range r.samples {
			k := batchKey{r.scenario, s.Batch}
			if _, ok := labels[k]; !ok {
				labels[k] = len(labels)
			}
			s.Batch = labels[k]
			pooled = append(pooled, s)
		}
	}
	ratio, ok := figures(pooled, nil, 0, 0).ForecastMAERatio[string(base)]
	return ratio, ok
}

// ratioVerdict judges a ratio against its bound: met when its interval
// lies below it, "point only" when the ratio does and the interval does
// not, missed otherwise.
func ratioVerdict(r RatioResult, ok bool, bound float64) string {
	switch {
	case !ok:
		return "—"
	case r.Ratio > bound:
		return "**missed**"
	case r.CI95 != nil && r.CI95[1] < bound:
		return "met"
	default:
		return "point only"
	}
}

func writeRatios(w io.Writer, rows []ratioRow) {
	if len(rows) == 0 {
		return
	}
	writeSectionHead(w, "MAE against the baselines and the oracle per ClusterQueue", "Every ClusterQueue of a level with a target ρ of at least %.1f and at least %d scored workloads: the forecast's MAE "+
		"(its mean, the point it publishes) over the EMA's, over the oracle's where the ClusterQueue has one (the median remaining wait given the queue's state and true service law: "+
		"the least MAE any forecaster can reach) and over the paper formula's (measured parameters, reported only), with batch-means 95%% intervals. "+
		"Targets: ÷ EMA at most %.2f and ÷ oracle at most %.2f on each; met when the interval lies below the bound, \"point only\" when only the ratio does.",
		minRatioTarget, minRatioScored, maxRatioEMA, maxRatioOracle)
	fmt.Fprintln(w, "| scenario | level | ClusterQueue | target ρ | scored | forecast ÷ EMA | target | forecast ÷ oracle | target | forecast ÷ paper |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	counts := map[estimator.Predictor]map[string]int{estimator.PredictorEMA: {}, PredictorOracle: {}}
	for _, r := range rows {
		ema, emaOK := r.figures.ForecastMAERatio[string(estimator.PredictorEMA)]
		oracle, oracleOK := r.figures.ForecastMAERatio[string(PredictorOracle)]
		emaVerdict, oracleVerdict := ratioVerdict(ema, emaOK, maxRatioEMA), ratioVerdict(oracle, oracleOK, maxRatioOracle)
		counts[estimator.PredictorEMA][emaVerdict]++
		counts[PredictorOracle][oracleVerdict]++
		fmt.Fprintf(w, "| %s | %.2f | %s | %.2f | %d | %s | %s | %s | %s | %s |\n", r.scenario, r.level, r.queue, r.target, r.figures.Scored,
			r.figures.ratioCell(estimator.PredictorEMA), emaVerdict, r.figures.ratioCell(PredictorOracle), oracleVerdict,
			r.figures.ratioCell(estimator.PredictorPaper))
	}
	fmt.Fprintln(w)
	for _, b := range []struct {
		name  string
		p     estimator.Predictor
		bound float64
	}{{"EMA", estimator.PredictorEMA, maxRatioEMA}, {"oracle", PredictorOracle, maxRatioOracle}} {
		c := counts[b.p]
		if len(rows) == c["—"] {
			continue // no row has this predictor
		}
		fmt.Fprintf(w, "Against the %s (≤ %.2f): met in %d of %d, the ratio alone in %d more, missed in %d.\n",
			b.name, b.bound, c["met"], len(rows)-c["—"], c["point only"], c["**missed**"])
	}
	if pooled, ok := pooledRatio(rows, estimator.PredictorEMA); ok {
		verdict := "**missed**"
		if pooled.Ratio <= maxPooledRatioEMA && pooled.CI95 != nil && pooled.CI95[1] < maxPooledRatioEMAInterval {
			verdict = "met"
		}
		fmt.Fprintf(w, "Pooled over these ClusterQueues, forecast ÷ EMA %s on %d workloads (target at most %.2f, its interval below %.2f): %s.\n",
			ratioCellOf(pooled), pooled.N, maxPooledRatioEMA, maxPooledRatioEMAInterval, verdict)
	}
}
