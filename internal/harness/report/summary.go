package report

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"sigs.k8s.io/kueue/pkg/scheduler/waittime/estimator"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/scenario"
	"github.com/kueue-waittime/kueue-waittime/pkg/accuracy"
)

// csvSuffix names the per-scenario CSV of scored admissions (WriteCSV).
const csvSuffix = "-workloads.csv"

// WriteDirSummary reads every <scenario>-workloads.csv of dir (as eval
// --out writes them) and writes dir/summary.md: one row per scenario and
// level, and the forecast's quantile coverage pooled over everything. It
// reads the CSVs, not a run, so it summarizes exactly the published
// per-workload results. Each subdirectory of dir/reruns (see rerunsDir)
// holds the CSVs of some scenarios run again with the same model; the
// summary then also sets each of their coverage slices beside its other
// runs.
func WriteDirSummary(dir string) error {
	files, err := scoredCSVs(dir)
	if err != nil {
		return err
	}
	reruns, err := readReruns(filepath.Join(dir, rerunsDir))
	if err != nil {
		return err
	}
	seeds := map[string]uint64{}
	queues := map[string]reportedQueues{}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), csvSuffix)
		if seeds[name], err = reportSeed(dir, name); err != nil {
			return err
		}
		if queues[name], err = reportQueues(dir, name); err != nil {
			return err
		}
	}
	f, err := os.Create(filepath.Join(dir, "summary.md"))
	if err != nil {
		return err
	}
	return errors.Join(writeSummary(f, files, reruns, seeds, queues), f.Close())
}

// scoredCSVs returns the per-workload CSVs of dir in name order, or an
// error if it holds none.
func scoredCSVs(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*"+csvSuffix))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s holds no *%s: run eval with --out %s first", dir, csvSuffix, dir)
	}
	slices.Sort(files)
	return files, nil
}

// writeSummary writes the summary of the CSV files, and of the reruns of
// their scenarios; seeds holds the base seed each scenario's file was run
// with, which tells the reruns that repeated its arrivals from those that
// drew others.
func writeSummary(w io.Writer, files []string, reruns []rerun, seeds map[string]uint64, queues map[string]reportedQueues) error {
	fmt.Fprintln(w, "### Summary of every scenario")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Written by `kueue-waittime eval --summarize DIR` (run by `make eval`) from the per-workload CSVs beside it.")
	fmt.Fprintln(w, "Remaining waits after each workload's first estimate; MAE ratios below 1 favour the forecast, with batch-means 95% intervals.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| scenario | level | scored | MAE forecast (s) | forecast ÷ EMA | forecast ÷ paper | forecast ÷ Whitt | forecast ÷ oracle | P50 coverage | P90 coverage |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	var pooled []ScoredSample
	var targets []coverageSlice
	var phases []scenarioPhases
	var ratios []ratioRow
	var longWaits []longWaitRow
	var priorityBias, classBias []priorityBiasRow
	for i, file := range files {
		samples, err := readScoredCSV(file)
		if err != nil {
			return err
		}
		name := strings.TrimSuffix(filepath.Base(file), csvSuffix)
		levels := samplesByLevel(samples)
		for _, s := range samples {
			// Batch labels stay distinct across scenarios.
			s.Batch += i * 1_000_000
			pooled = append(pooled, s)
		}
		for _, level := range slices.Sorted(maps.Keys(levels)) {
			f := figures(levels[level], nil, 0, 0)
			fmt.Fprintf(w, "| %s | %.2f | %d | %s | %s | %s | %s | %s | %s | %s |\n", name, level, f.Scored,
				f.maeCell(estimator.PredictorForecast), f.ratioCell(estimator.PredictorEMA), f.ratioCell(estimator.PredictorPaper),
				f.ratioCell(estimator.PredictorWhitt), f.ratioCell(PredictorOracle), coverageCell(f.P50Coverage, f.P50CoverageCI95), coverageCell(f.P90Coverage, f.P90CoverageCI95))
		}
		targets = append(targets, scenarioCoverageSlices(name, levels)...)
		ratios = append(ratios, ratioRows(name, levels, queues[name])...)
		longWaits = append(longWaits, longWaitRows(name, levels, queues[name])...)
		priorityBias = append(priorityBias, priorityBiasRows(name, levels)...)
		classBias = append(classBias, demandClassBiasRows(name, levels)...)
		phases = append(phases, scenarioPhases{name: name, coverage: coverageOverTheRun(samples)})
	}
	f := figures(pooled, nil, 0, 0)
	fmt.Fprintf(w, "| **all** | | %d | | | | | | %s | %s |\n", f.Scored,
		coverageCell(f.P50Coverage, f.P50CoverageCI95), coverageCell(f.P90Coverage, f.P90CoverageCI95))
	writeCoverageTargets(w, targets)
	same, other := splitBySeed(reruns, seeds)
	for _, section := range []struct {
		title, intro string // intro's %s: the reruns' names
		reruns       []rerun
	}{
		{"Run to run", "The slices above whose scenario was run again with the same model and seed " +
			"(reruns/: %s; `make eval-rerun`), with their coverage in this run first and then in each rerun that scored enough of them. " +
			"A rerun with the scenario's seed draws the same arrivals and service times: what changes is the run's timing. " +
			"The intervals above are within one run; how far a slice moves from one run to the next is the part of its uncertainty they leave out.", same},
		{"Other arrival sequences", "The slices above whose scenario was run again with the same model and another base seed " +
			"(reruns/: %s; `make eval-rerun SEED=N`): other arrivals and service times from the same distributions, this run's coverage first. " +
			"A slice that misses its target with the scenario's own seed and meets it with others missed on that one sequence; " +
			"one that misses with every seed is the model's.", other},
	} {
		if len(section.reruns) > 0 {
			writeRunToRun(w, section.title, fmt.Sprintf(section.intro, rerunNames(section.reruns)), targets, section.reruns)
		}
	}
	writeCoverageOverTheRun(w, phases)
	writeRatios(w, ratios)
	writeLongWaits(w, longWaits)
	writePriorityBias(w, priorityBias)
	writeDemandClassBias(w, classBias)
	return nil
}

// splitBySeed splits the reruns into those of scenarios run with the seed
// of seeds (the first run's) and those run with another; a rerun holding
// scenarios of both kinds is in both, with its scenarios of each kind. Only
// the second keep their seeds.
func splitBySeed(reruns []rerun, seeds map[string]uint64) (same, other []rerun) {
	for _, r := range reruns {
		s := rerun{name: r.name, slices: map[string][]coverageSlice{}}
		o := rerun{name: r.name, slices: map[string][]coverageSlice{}, seeds: map[string]uint64{}}
		for scenario, ss := range r.slices {
			if seed, ok := seeds[scenario]; ok && r.seeds[scenario] != seed {
				o.slices[scenario], o.seeds[scenario] = ss, r.seeds[scenario]
				continue
			}
			s.slices[scenario] = ss
		}
		if len(s.slices) > 0 {
			same = append(same, s)
		}
		if len(o.slices) > 0 {
			other = append(other, o)
		}
	}
	return same, other
}

// rerunNames lists the reruns by name, each with its seeds where it was
// run with another than a scenario's own: "run-4 (seed 7)".
func rerunNames(reruns []rerun) string {
	names := make([]string, len(reruns))
	for i, r := range reruns {
		names[i] = r.name
		var seeds []string
		for _, seed := range slices.Compact(slices.Sorted(maps.Values(r.seeds))) {
			seeds = append(seeds, strconv.FormatUint(seed, 10))
		}
		if len(seeds) > 0 {
			names[i] += " (seed " + strings.Join(seeds, ", ") + ")"
		}
	}
	return strings.Join(names, ", ")
}

// reportSeed reads the base seed that the run of scenarioName in dir used from
// its report (<scenarioName>.json, which eval --out writes beside the CSV).
func reportSeed(dir, scenarioName string) (uint64, error) {
	path := filepath.Join(dir, scenarioName+".json")
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("the seed of %s's run: %w", scenarioName, err)
	}
	var report struct {
		Scenario *scenario.Spec `json:"scenario"`
	}
	if err := json.Unmarshal(data, &report); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	if report.Scenario == nil {
		return 0, fmt.Errorf("%s holds no scenario, so no seed", path)
	}
	return report.Scenario.Seed, nil
}

// samplesByLevel groups a scenario's samples by level.
func samplesByLevel(samples []ScoredSample) map[float64][]ScoredSample {
	levels := map[float64][]ScoredSample{}
	for _, s := range samples {
		levels[s.Level] = append(levels[s.Level], s)
	}
	return levels
}

// scenarioCoverageSlices is coverageSlices of every level of a scenario,
// in order of level.
func scenarioCoverageSlices(scenario string, levels map[float64][]ScoredSample) []coverageSlice {
	var out []coverageSlice
	for _, level := range slices.Sorted(maps.Keys(levels)) {
		out = append(out, coverageSlices(scenario, level, levels[level])...)
	}
	return out
}

// The coverage targets of the published quantiles (issue 12): the P50 should
// cover 0.45–0.55 of the remaining waits and the P90 0.85–0.95, for every
// level and for every ClusterQueue and priority class of a level, judged
// where at least minTargetScored workloads were scored.
const (
	p50CoverageLow, p50CoverageHigh = 0.45, 0.55
	p90CoverageLow, p90CoverageHigh = 0.85, 0.95
	minTargetScored                 = 50
)

// coverageSlice is one level of a scenario, or one ClusterQueue or priority
// class of it, with its coverage.
type coverageSlice struct {
	scenario string
	level    float64
	// of is "all", "ClusterQueue X" or "priority X".
	of     string
	scored int
	// p50 and p90 are nil where no quantile was published.
	p50, p90     *float64
	p50CI, p90CI *[2]float64
	// p50Chance and p90Chance are the probabilities that a forecast
	// calibrated exactly would have its coverage within the target here
	// (see inTargetChance).
	p50Chance, p90Chance float64
}

// coverageSlices is the level's slices with at least minTargetScored
// scored workloads: the level itself, each ClusterQueue and each priority
// class (when the scenario names any); a slice that is the whole level
// (one ClusterQueue, one priority class) is given once.
func coverageSlices(scenario string, level float64, samples []ScoredSample) []coverageSlice {
	var out []coverageSlice
	add := func(of string, ss []ScoredSample) {
		if len(ss) < minTargetScored {
			return
		}
		f := figures(ss, nil, 0, 0)
		out = append(out, coverageSlice{scenario: scenario, level: level, of: of, scored: f.Scored,
			p50: f.P50Coverage, p90: f.P90Coverage, p50CI: f.P50CoverageCI95, p90CI: f.P90CoverageCI95,
			p50Chance: inTargetChance(ss, func(s ScoredSample) estimator.Prediction { return s.Score.P50 }, 0.5, p50CoverageLow, p50CoverageHigh),
			p90Chance: inTargetChance(ss, func(s ScoredSample) estimator.Prediction { return s.Score.P90 }, 0.9, p90CoverageLow, p90CoverageHigh)})
	}
	add("all", samples)
	byKey := func(label string, key func(ScoredSample) string) {
		groups := map[string][]ScoredSample{}
		for _, s := range samples {
			if k := key(s); k != "" {
				groups[k] = append(groups[k], s)
			}
		}
		if len(groups) < 2 {
			return
		}
		for _, k := range slices.Sorted(maps.Keys(groups)) {
			add(label+" "+k, groups[k])
		}
	}
	byKey("ClusterQueue", func(s ScoredSample) string { return s.Queue })
	byKey("priority", func(s ScoredSample) string { return s.PriorityClass })
	return out
}

// inTargetChance is the probability that a quantile forecast calibrated
// exactly at level p0 would show a coverage within [low, high] on samples
// like ss: as many scores, as correlated. With n scores, an observed
// coverage p̂ whose batch-means standard error is se (the half-width of
// its 95 % interval over the Student t quantile of its batches), the
// design effect is D = se² / (p̂(1 − p̂)/n), floored at 1 (independent
// scores); the calibrated coverage is then about normal with mean p0 and
// variance D·p0(1 − p0)/n, and the chance is
//
//	Φ((high − p0)/σ) − Φ((low − p0)/σ),  σ = √(D·p0(1 − p0)/n).
//
// With p̂ at 0 or 1, a single batch or no quantile published, D is 1. The
// answer is in [0, 1]; it is the normal approximation, and D is itself
// estimated from few batches.
func inTargetChance(ss []ScoredSample, pred func(ScoredSample) estimator.Prediction, p0, low, high float64) float64 {
	var hits []accuracy.Sample
	for _, s := range ss {
		if p := pred(s); p.OK {
			hits = append(hits, accuracy.Sample{Predicted: indicator(s.Score.Actual <= p.Wait), Batch: s.Batch})
		}
	}
	n := float64(len(hits))
	if n == 0 {
		return 0
	}
	design := 1.0
	sum := accuracy.Summarize(hits, 0)
	if pHat := sum.Bias; sum.BiasInterval.Defined && sum.Batches >= 2 && pHat > 0 && pHat < 1 {
		se := (sum.BiasInterval.High - sum.BiasInterval.Low) / 2 / accuracy.StudentT975(sum.Batches-1)
		design = max(1, se*se/(pHat*(1-pHat)/n))
	}
	sigma := math.Sqrt(design * p0 * (1 - p0) / n)
	normal := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	return normal((high-p0)/sigma) - normal((low-p0)/sigma)
}

// within says whether a coverage is in [low, high]; none is not.
func within(v *float64, low, high float64) bool { return v != nil && *v >= low && *v <= high }

// writeCoverageTargets writes the slices judged against the coverage
// targets, misses first counted, then every slice.
func writeCoverageTargets(w io.Writer, targets []coverageSlice) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "### Coverage targets")
	fmt.Fprintln(w)
	var p50In, p90In int
	for _, t := range targets {
		if within(t.p50, p50CoverageLow, p50CoverageHigh) {
			p50In++
		}
		if within(t.p90, p90CoverageLow, p90CoverageHigh) {
			p90In++
		}
	}
	var p50Chance, p90Chance float64
	for _, t := range targets {
		p50Chance += t.p50Chance
		p90Chance += t.p90Chance
	}
	fmt.Fprintf(w, "Every level, and every ClusterQueue and priority class of a level, with at least %d scored workloads: "+
		"the P90 covers %.2f–%.2f of the remaining waits in %d of %d, the P50 %.2f–%.2f in %d of %d "+
		"(judged on the point estimate, given to three decimals; the intervals are batch-means 95%%).\n",
		minTargetScored, p90CoverageLow, p90CoverageHigh, p90In, len(targets), p50CoverageLow, p50CoverageHigh, p50In, len(targets))
	if len(targets) > 0 {
		fmt.Fprintf(w, "\nA forecast calibrated exactly (its P90 covering 0.9 and its P50 0.5 of every slice's remaining waits), "+
			"scored on slices of these sizes with the correlation their intervals show, would meet the P90 target in about %.1f "+
			"of the %d and the P50 target in about %.1f: the column \"chance\" is each slice's probability, P50 / P90 "+
			"(the normal approximation with each slice's design effect; see inTargetChance in summary.go).\n",
			p90Chance, len(targets), p50Chance)
	}
	if len(targets) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| scenario | level | of | scored | P50 coverage | P90 coverage | P50 target | P90 target | chance |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	verdict := func(v *float64, low, high float64) string {
		if within(v, low, high) {
			return "met"
		}
		return "**missed**"
	}
	for _, t := range targets {
		fmt.Fprintf(w, "| %s | %.2f | %s | %d | %s | %s | %s | %s | %.2f / %.2f |\n", t.scenario, t.level, t.of, t.scored,
			preciseCoverageCell(t.p50, t.p50CI), preciseCoverageCell(t.p90, t.p90CI),
			verdict(t.p50, p50CoverageLow, p50CoverageHigh), verdict(t.p90, p90CoverageLow, p90CoverageHigh),
			t.p50Chance, t.p90Chance)
	}
}

// readScoredCSV reads a CSV written by WriteCSV back into samples.
func readScoredCSV(path string) ([]ScoredSample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) == 0 || !(slices.Equal(rows[0], csvHeader) || slices.Equal(rows[0], csvHeaderWithoutOracle) || slices.Equal(rows[0], csvHeaderWithoutReplay)) {
		return nil, fmt.Errorf("%s: not a CSV of scored workloads (header %v)", path, rows[:min(len(rows), 1)])
	}
	var out []ScoredSample
	for n, row := range rows[1:] {
		s, err := parseScoredRow(row)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, n+2, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func parseScoredRow(row []string) (ScoredSample, error) {
	var errs []error
	num := func(v string) float64 {
		x, err := strconv.ParseFloat(v, 64)
		errs = append(errs, err)
		return x
	}
	dur := func(v string) time.Duration { return time.Duration(num(v) * float64(time.Second)) }
	pred := func(v string) estimator.Prediction {
		if v == "" {
			return estimator.Prediction{}
		}
		return estimator.Prediction{Wait: dur(v), OK: true}
	}
	s := ScoredSample{Level: num(row[0]), Queue: row[2], Class: row[3], PriorityClass: row[4], Workload: row[5]}
	seed, err := strconv.Atoi(row[1])
	errs = append(errs, err)
	batch, err := strconv.Atoi(row[6])
	errs = append(errs, err)
	s.Seed, s.Batch = seed, batch
	s.Score = estimator.Score{
		Method: estimator.Method(row[7]), Waited: dur(row[8]), Actual: dur(row[9]),
		Forecast: pred(row[10]), P50: pred(row[11]), P90: pred(row[12]), EMA: pred(row[13]), Paper: pred(row[14]), Whitt: pred(row[15]),
	}
	if len(row) >= len(csvHeaderWithoutOracle) {
		s.Score.RawP50, s.Score.RawP90, s.Score.CalibrationScale = pred(row[16]), pred(row[17]), num(row[18])
		s.Score.EstimatedAt = time.UnixMilli(int64(math.Round(num(row[19]) * 1000)))
		s.Replayable = true
	}
	if len(row) == len(csvHeader) {
		s.Oracle = pred(row[20])
	}
	return s, errors.Join(errs...)
}

// preciseCoverageCell is coverageCell with the point to three decimals, so
// that a coverage judged against a target shows on which side it lies.
func preciseCoverageCell(v *float64, ci *[2]float64) string { return coverageCellOf("%.3f", v, ci) }

// rerunsDir is the subdirectory of a results directory that holds reruns:
// one subdirectory per rerun (`make eval-rerun` names them run-2, run-3,
// ...), each with the CSVs of the scenarios it ran again with the model of
// the results beside it. `make eval` removes it with the results it
// replaces.
const rerunsDir = "reruns"

// rerun is one rerun's coverage slices, by scenario.
type rerun struct {
	name string
	// slices holds the coverage slices of each scenario the rerun holds.
	slices map[string][]coverageSlice
	// seeds holds the base seed each scenario was run with.
	seeds map[string]uint64
}

// readReruns reads every subdirectory of dir as a rerun, in order of name
// (os.ReadDir's); none when dir does not exist. A subdirectory without CSVs
// is an error: a rerun that wrote nothing is not evidence.
func readReruns(dir string) ([]rerun, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []rerun
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		files, err := filepath.Glob(filepath.Join(dir, e.Name(), "*"+csvSuffix))
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("rerun %s holds no *%s", filepath.Join(dir, e.Name()), csvSuffix)
		}
		r := rerun{name: e.Name(), slices: map[string][]coverageSlice{}, seeds: map[string]uint64{}}
		for _, file := range files {
			samples, err := readScoredCSV(file)
			if err != nil {
				return nil, err
			}
			name := strings.TrimSuffix(filepath.Base(file), csvSuffix)
			r.slices[name] = scenarioCoverageSlices(name, samplesByLevel(samples))
			if r.seeds[name], err = reportSeed(filepath.Join(dir, e.Name()), name); err != nil {
				return nil, err
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// sliceRuns is one coverage slice of the first run with the same slice in
// every rerun of its scenario (nil where a rerun scored too few workloads
// of it to judge).
type sliceRuns struct {
	first  coverageSlice
	others []*coverageSlice
}

// runsOf pairs each slice of targets whose scenario some rerun holds with
// the same slice (scenario, level, of) of every rerun that holds it.
func runsOf(targets []coverageSlice, reruns []rerun) []sliceRuns {
	var out []sliceRuns
	for _, t := range targets {
		sr := sliceRuns{first: t}
		for _, r := range reruns {
			ss, ok := r.slices[t.scenario]
			if !ok {
				continue
			}
			var match *coverageSlice
			for i := range ss {
				if ss[i].level == t.level && ss[i].of == t.of {
					match = &ss[i]
				}
			}
			sr.others = append(sr.others, match)
		}
		if len(sr.others) > 0 {
			out = append(out, sr)
		}
	}
	return out
}

// writeRunToRun writes, under the heading title and the paragraph intro,
// the slices of the coverage targets whose scenario the reruns ran again:
// the coverage in each run and in how many runs the target was met. The
// batch-means intervals of one run leave out what moves a whole run (the
// replicas of a scenario run at once in one manager and share its timing,
// and with the scenario's seed its arrival sequence); this is that part,
// measured.
func writeRunToRun(w io.Writer, title, intro string, targets []coverageSlice, reruns []rerun) {
	rows := runsOf(targets, reruns)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "### "+title)
	fmt.Fprintln(w)
	fmt.Fprintln(w, intro)
	if len(rows) == 0 {
		return
	}
	type tally struct{ every, some, none int }
	var p50, p90 tally
	count := func(t *tally, met, runs int) {
		switch met {
		case runs:
			t.every++
		case 0:
			t.none++
		default:
			t.some++
		}
	}
	var lines []string
	for _, r := range rows {
		p50s, p90s := []string{preciseCoverageCell(r.first.p50, nil)}, []string{preciseCoverageCell(r.first.p90, nil)}
		runs := 1
		met50 := boolCount(within(r.first.p50, p50CoverageLow, p50CoverageHigh))
		met90 := boolCount(within(r.first.p90, p90CoverageLow, p90CoverageHigh))
		for _, o := range r.others {
			if o == nil {
				p50s, p90s = append(p50s, "—"), append(p90s, "—")
				continue
			}
			runs++
			p50s, p90s = append(p50s, preciseCoverageCell(o.p50, nil)), append(p90s, preciseCoverageCell(o.p90, nil))
			met50 += boolCount(within(o.p50, p50CoverageLow, p50CoverageHigh))
			met90 += boolCount(within(o.p90, p90CoverageLow, p90CoverageHigh))
		}
		count(&p50, met50, runs)
		count(&p90, met90, runs)
		lines = append(lines, fmt.Sprintf("| %s | %.2f | %s | %s | %s | %d of %d | %d of %d |", r.first.scenario, r.first.level, r.first.of,
			strings.Join(p50s, ", "), strings.Join(p90s, ", "), met50, runs, met90, runs))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Of these %d slices the P90 met its target in every run in %d, in some runs only in %d and in none in %d; "+
		"the P50 in every run in %d, in some only in %d, in none in %d.\n", len(rows), p90.every, p90.some, p90.none, p50.every, p50.some, p50.none)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| scenario | level | of | P50 coverage per run | P90 coverage per run | P50 target met | P90 target met |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

func boolCount(b bool) int {
	if b {
		return 1
	}
	return 0
}
