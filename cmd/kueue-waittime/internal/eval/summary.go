package eval

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"sigs.k8s.io/kueue/pkg/scheduler/waittime/estimator"
	"slices"
	"strconv"
	"strings"
	"time"
)

// csvSuffix names the per-scenario CSV of scored admissions (WriteCSV).
const csvSuffix = "-workloads.csv"

// WriteDirSummary reads every <scenario>-workloads.csv of dir (as eval
// --out writes them) and writes dir/summary.md: one row per scenario and
// level, and the forecast's quantile coverage pooled over everything. It
// reads the CSVs, not a run, so it summarizes exactly the published
// per-workload results.
func WriteDirSummary(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*"+csvSuffix))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("%s holds no *%s: run eval with --out %s first", dir, csvSuffix, dir)
	}
	slices.Sort(files)
	f, err := os.Create(filepath.Join(dir, "summary.md"))
	if err != nil {
		return err
	}
	return errors.Join(writeSummary(f, files), f.Close())
}

func writeSummary(w io.Writer, files []string) error {
	fmt.Fprintln(w, "### Summary of every scenario")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Written by `kueue-waittime eval --summarize DIR` (run by `make eval`) from the per-workload CSVs beside it.")
	fmt.Fprintln(w, "Remaining waits after each workload's first estimate; MAE ratios below 1 favour the forecast, with batch-means 95% intervals.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| scenario | level | scored | MAE forecast (s) | forecast ÷ EMA | forecast ÷ paper | forecast ÷ Whitt | forecast ÷ before calibration | P50 coverage | P90 coverage |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	var pooled []ScoredSample
	for i, file := range files {
		samples, err := readScoredCSV(file)
		if err != nil {
			return err
		}
		name := strings.TrimSuffix(filepath.Base(file), csvSuffix)
		levels := map[float64][]ScoredSample{}
		for _, s := range samples {
			levels[s.Level] = append(levels[s.Level], s)
			// Batch labels stay distinct across scenarios.
			s.Batch += i * 1_000_000
			pooled = append(pooled, s)
		}
		for _, level := range slices.Sorted(maps.Keys(levels)) {
			f := figures(levels[level], nil, 0, 0)
			fmt.Fprintf(w, "| %s | %.2f | %d | %s | %s | %s | %s | %s | %s | %s |\n", name, level, f.Scored,
				f.maeCell(estimator.PredictorForecast), f.ratioCell(estimator.PredictorEMA), f.ratioCell(estimator.PredictorPaper),
				f.ratioCell(estimator.PredictorWhitt), f.ratioCell(estimator.PredictorForecastUncalibrated), coverageCell(f.P50Coverage, f.P50CoverageCI95), coverageCell(f.P90Coverage, f.P90CoverageCI95))
		}
	}
	f := figures(pooled, nil, 0, 0)
	fmt.Fprintf(w, "| **all** | | %d | | | | | | %s | %s |\n", f.Scored,
		coverageCell(f.P50Coverage, f.P50CoverageCI95), coverageCell(f.P90Coverage, f.P90CoverageCI95))
	return nil
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
	// CSVs written before the mean was calibrated lack the last column:
	// their forecast_s is the roll's own mean, and no uncalibrated one is
	// read.
	legacy := len(rows) > 0 && slices.Equal(rows[0], csvHeader[:len(csvHeader)-1])
	if len(rows) == 0 || !slices.Equal(rows[0], csvHeader) && !legacy {
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
	if len(row) > 16 {
		s.Score.ForecastUncalibrated = pred(row[16])
	}
	return s, errors.Join(errs...)
}
