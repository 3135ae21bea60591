package eval

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/queueing"
	"github.com/kueue-waittime/kueue-waittime/pkg/stats"
)

// Report is the result of a scenario.
type Report struct {
	Scenario   *Scenario        `json:"scenario"`
	KEff       int              `json:"kEff"`
	Bottleneck string           `json:"bottleneck"`
	Levels     []LevelResult    `json:"levels"`
	Workloads  []WorkloadResult `json:"-"`
}

// LevelResult compares the predictors at one utilization level. Waits are
// seconds from creation to quota reservation, as the harness observed them
// (watch events; API timestamps have whole-second resolution).
type LevelResult struct {
	TargetUtilization   float64 `json:"targetUtilization"`
	ObservedUtilization float64 `json:"observedUtilization"`
	Workloads           int     `json:"workloads"`
	Unfeasible          int     `json:"unfeasible"`
	// UnfeasibleLabelled counts the unfeasible workloads the visibility API
	// labelled Unfeasible; QuotableMislabelled the feasible ones it
	// labelled Unfeasible.
	UnfeasibleLabelled  int `json:"unfeasibleLabelled"`
	QuotableMislabelled int `json:"quotableMislabelled"`
	// PaperMeanWait is the paper's Approximation 1 at the target
	// utilization; PaperMeanWaitObserved at the observed one (nil when ≥ 1).
	PaperMeanWait         *float64 `json:"paperMeanWait"`
	PaperMeanWaitObserved *float64 `json:"paperMeanWaitObserved"`
	WhittMeanWait         *float64 `json:"whittMeanWait"`
	ForecastMeanWait      *float64 `json:"forecastMeanWait"`
	ObservedMeanWait      float64  `json:"observedMeanWait"`
	// ForecastedMeanWait is the observed mean wait of the forecasted
	// workloads (the ones seen waiting), to set against ForecastMeanWait.
	ForecastedMeanWait *float64 `json:"forecastedMeanWait"`
	// Forecasted is how many feasible workloads were seen pending with a
	// forecast; the MAEs below are over those, for every predictor alike.
	Forecasted  int      `json:"forecasted"`
	MAEForecast *float64 `json:"maeForecast"`
	MAEPaper    float64  `json:"maePaper"`
	MAEWhitt    float64  `json:"maeWhitt"`
	MAEEMA      float64  `json:"maeEMA"`
	// P90Coverage is the fraction of forecasted workloads whose wait was at
	// most the forecast P90.
	P90Coverage *float64 `json:"p90Coverage"`
	// LittleRatio is L/(λW) with L the time-average pending count sampled
	// through the visibility API.
	LittleRatio *float64 `json:"littleRatio"`
}

// WorkloadResult is one row of the per-workload CSV.
type WorkloadResult struct {
	Level         float64
	Name          string
	Unfeasible    bool
	Admissibility string
	CreatedAt     float64 // seconds from the level's first arrival
	Wait          float64
	Service       float64
	Forecast      *float64
	P50, P90      *float64
	Method        string
	EMA           float64
	Paper         float64
}

func summarize(sc *Scenario, level float64, keff int, runs []*workloadRun, pendingSamples []int) (LevelResult, []WorkloadResult) {
	lr := LevelResult{TargetUtilization: level, Workloads: len(runs)}
	meanS, scv := sc.MeanService.Seconds(), sc.serviceSCV()
	if d, err := queueing.PaperApproximation1(keff, level, meanS, scv); err == nil && d.Stable {
		lr.PaperMeanWait = ptr(d.MeanWait)
	}
	if d, err := queueing.WhittGIGkWait(keff, level, meanS, sc.arrivalSCV(), scv); err == nil && d.Stable {
		lr.WhittMeanWait = ptr(d.MeanWait)
	}
	var first, last time.Time
	var serviceSum float64
	var feasible []*workloadRun
	for _, r := range runs {
		if first.IsZero() || r.created.Before(first) {
			first = r.created
		}
		if r.created.After(last) {
			last = r.created
		}
		if r.unfeasible {
			lr.Unfeasible++
			if r.admissibility == "Unfeasible" {
				lr.UnfeasibleLabelled++
			}
			continue
		}
		if r.admissibility == "Unfeasible" {
			lr.QuotableMislabelled++
		}
		serviceSum += r.service
		feasible = append(feasible, r)
	}
	arrivalSpan := last.Sub(first).Seconds()
	lambdaObs := 0.0
	if arrivalSpan > 0 {
		lambdaObs = float64(len(feasible)-1) / arrivalSpan
	}
	if len(feasible) > 0 {
		lr.ObservedUtilization = lambdaObs * serviceSum / float64(len(feasible)) / float64(keff)
	}
	if d, err := queueing.PaperApproximation1(keff, lr.ObservedUtilization, meanS, scv); err == nil && d.Stable {
		lr.PaperMeanWaitObserved = ptr(d.MeanWait)
	}

	// The EMA baseline predicts each arrival's wait from the waits of the
	// workloads admitted before it arrived, in admission order.
	admitted := append([]*workloadRun(nil), feasible...)
	sort.Slice(admitted, func(i, j int) bool { return admitted[i].admitted.Before(admitted[j].admitted) })
	emaAt := func(t time.Time) float64 {
		e, _ := stats.NewEMA(stats.DefaultEMAAlpha)
		for _, a := range admitted {
			if !a.admitted.Before(t) {
				break
			}
			e.Observe(a.admitted.Sub(a.created).Seconds())
		}
		v, _ := e.Value()
		return v
	}

	var rows []WorkloadResult
	var waitSum, fSum, fWaitSum, fErr, pErr, wErr, eErr float64
	covered := 0
	for _, r := range runs {
		row := WorkloadResult{Level: level, Name: r.name, Unfeasible: r.unfeasible, Admissibility: r.admissibility,
			CreatedAt: r.created.Sub(first).Seconds(), Service: r.service}
		if lr.PaperMeanWait != nil {
			row.Paper = *lr.PaperMeanWait
		}
		if r.unfeasible {
			rows = append(rows, row)
			continue
		}
		row.Wait = max(r.admitted.Sub(r.created).Seconds(), 0)
		row.EMA = emaAt(r.created)
		waitSum += row.Wait
		if est := r.estimate; est != nil && est.ExpectedWaitMilliseconds != nil {
			// The estimate is the remaining wait from estimatedAt (when it
			// was computed); without it, from when it was read.
			from := r.seenAt
			if est.EstimatedAt != nil {
				from = est.EstimatedAt.Time
			}
			elapsed := max(from.Sub(r.created).Seconds(), 0)
			row.Forecast = ptr(elapsed + float64(*est.ExpectedWaitMilliseconds)/1000)
			if est.P50WaitMilliseconds != nil {
				row.P50 = ptr(elapsed + float64(*est.P50WaitMilliseconds)/1000)
			}
			if est.P90WaitMilliseconds != nil {
				row.P90 = ptr(elapsed + float64(*est.P90WaitMilliseconds)/1000)
			}
			row.Method = string(est.Method)
			lr.Forecasted++
			fSum += *row.Forecast
			fWaitSum += row.Wait
			fErr += math.Abs(*row.Forecast - row.Wait)
			pErr += math.Abs(row.Paper - row.Wait)
			if lr.WhittMeanWait != nil {
				wErr += math.Abs(*lr.WhittMeanWait - row.Wait)
			}
			eErr += math.Abs(row.EMA - row.Wait)
			if row.P90 != nil && row.Wait <= *row.P90 {
				covered++
			}
		}
		rows = append(rows, row)
	}
	if len(feasible) > 0 {
		lr.ObservedMeanWait = waitSum / float64(len(feasible))
	}
	if n := float64(lr.Forecasted); n > 0 {
		lr.MAEForecast = ptr(fErr / n)
		lr.MAEPaper, lr.MAEWhitt, lr.MAEEMA = pErr/n, wErr/n, eErr/n
		lr.ForecastMeanWait = ptr(fSum / n)
		lr.ForecastedMeanWait = ptr(fWaitSum / n)
		lr.P90Coverage = ptr(float64(covered) / n)
	}
	if len(pendingSamples) > 0 && lambdaObs > 0 && lr.ObservedMeanWait > 0 {
		l := 0.0
		for _, s := range pendingSamples {
			l += float64(s)
		}
		l /= float64(len(pendingSamples))
		lr.LittleRatio = ptr(l / (lambdaObs * lr.ObservedMeanWait))
	}
	return lr, rows
}

func ptr(v float64) *float64 { return &v }

func cell(v *float64, format string) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf(format, *v)
}

// WriteMarkdown writes the per-level table.
func (r *Report) WriteMarkdown(w io.Writer) error {
	fmt.Fprintf(w, "### %s\n\n", r.Scenario.Name)
	if r.Scenario.Description != "" {
		fmt.Fprintf(w, "%s\n\n", r.Scenario.Description)
	}
	fmt.Fprintf(w, "k_eff = %d (bottleneck %s), E[S] = %s, %d workloads per level.\n\n", r.KEff, r.Bottleneck, r.Scenario.MeanService, r.Scenario.JobsPerLevel)
	if d := r.Scenario.DRA; d != nil {
		fmt.Fprintf(w, "Each workload claims %d device(s) of DeviceClass %s through a ResourceClaimTemplate; Kueue's DRA integration counts them as %s.\n\n", d.Count, d.DeviceClass, d.Resource)
	}
	fmt.Fprintln(w, "| ρ target | ρ observed | Ŵ paper (s) | Ŵ Whitt (s) | observed W (s) | forecasted | mean forecast (s) | their W (s) | MAE forecast | MAE EMA | MAE paper | MAE Whitt | P90 coverage | Little |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, l := range r.Levels {
		fmt.Fprintf(w, "| %.2f | %.2f | %s | %s | %.2f | %d/%d | %s | %s | %s | %.2f | %.2f | %.2f | %s | %s |\n",
			l.TargetUtilization, l.ObservedUtilization, cell(l.PaperMeanWait, "%.2f"), cell(l.WhittMeanWait, "%.2f"),
			l.ObservedMeanWait, l.Forecasted, l.Workloads-l.Unfeasible, cell(l.ForecastMeanWait, "%.2f"), cell(l.ForecastedMeanWait, "%.2f"),
			cell(l.MAEForecast, "%.2f"), l.MAEEMA, l.MAEPaper, l.MAEWhitt, cell(l.P90Coverage, "%.2f"), cell(l.LittleRatio, "%.3f"))
	}
	for _, l := range r.Levels {
		if l.Unfeasible > 0 || l.QuotableMislabelled > 0 {
			fmt.Fprintf(w, "\nρ %.2f: %d of %d unfeasible workloads labelled Unfeasible; %d feasible workloads mislabelled.\n",
				l.TargetUtilization, l.UnfeasibleLabelled, l.Unfeasible, l.QuotableMislabelled)
		}
	}
	return nil
}

// WriteJSON writes the report as JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteCSV writes one row per workload.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"level", "workload", "unfeasible", "admissibility", "created_s", "wait_s", "service_s", "forecast_s", "p50_s", "p90_s", "method", "ema_s", "paper_s"})
	opt := func(v *float64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(*v, 'f', 3, 64)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	for _, row := range r.Workloads {
		_ = cw.Write([]string{f(row.Level), row.Name, strconv.FormatBool(row.Unfeasible), row.Admissibility, f(row.CreatedAt),
			f(row.Wait), f(row.Service), opt(row.Forecast), opt(row.P50), opt(row.P90), row.Method, f(row.EMA), f(row.Paper)})
	}
	cw.Flush()
	return cw.Error()
}

// WriteSummary writes a short predicted-versus-actual summary (the demo's
// closing screen).
func (r *Report) WriteSummary(w io.Writer) error {
	for _, l := range r.Levels {
		fmt.Fprintf(w, "Summary: %d workloads (%d Unfeasible, %d labelled so by the API), target utilization %.2f, observed %.2f, k_eff %d (bottleneck %s).\n",
			l.Workloads, l.Unfeasible, l.UnfeasibleLabelled, l.TargetUtilization, l.ObservedUtilization, r.KEff, r.Bottleneck)
		fmt.Fprintf(w, "Observed mean wait %.2fs. Forecast seen for %d workloads that waited.\n", l.ObservedMeanWait, l.Forecasted)
		fmt.Fprintf(w, "Mean absolute error over those: forecast %s, EMA baseline %.2fs, paper's Erlang-C %.2fs (it predicts %s for everyone). P90 coverage %s.\n",
			fmtOpt(l.MAEForecast), l.MAEEMA, l.MAEPaper, cell(l.PaperMeanWait, "%.2fs"), cell(l.P90Coverage, "%.2f"))
	}
	return nil
}
