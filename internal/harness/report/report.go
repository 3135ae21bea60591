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
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/scenario"
	"github.com/kueue-waittime/kueue-waittime/pkg/accuracy"
	"sigs.k8s.io/kueue/pkg/scheduler/waittime/estimator"
)

// batchesPerReplica is how many time-ordered batches each replica's scored
// workloads are cut into for the batch-means confidence intervals.
const batchesPerReplica = 5

// Report is the result of a scenario.
type Report struct {
	Spec *scenario.Spec `json:"scenario"`
	// WallTime is how long the scenario ran.
	WallTime string `json:"wallTime"`
	// SchedulingCyclesPerSecond is the rate of Kueue's scheduling cycles
	// that tried to admit a workload (kueue_admission_attempts_total) over
	// the run, all replicas together.
	SchedulingCyclesPerSecond float64 `json:"schedulingCyclesPerSecond"`
	// Refreshes summarizes the estimator's refreshes over the run, all
	// replicas together; nil when none was reported.
	Refreshes *RefreshSummary `json:"refreshes,omitempty"`
	Levels    []LevelResult   `json:"levels"`
	// Samples are the scored workloads (after the warm-up), for the CSV
	// and the plots.
	Samples []ScoredSample `json:"-"`
}

// RefreshSummary is how long the estimator's refreshes took during a run.
type RefreshSummary struct {
	Count              int     `json:"count"`
	MedianMilliseconds float64 `json:"medianMilliseconds"`
	P90Milliseconds    float64 `json:"p90Milliseconds"`
	MaxMilliseconds    float64 `json:"maxMilliseconds"`
	// BudgetMilliseconds is the longest refresh that keeps the refresh
	// period under the estimator's CPU budget, and OverBudget how many
	// refreshes took longer (each stretched the wait before the next);
	// both are omitted when the budget is not known.
	BudgetMilliseconds float64 `json:"budgetMilliseconds,omitempty"`
	OverBudget         *int    `json:"overBudget,omitempty"`
}

// SummarizeRefreshes summarizes refresh durations against budget (the
// longest refresh that keeps the period; 0 when not known); nil without
// any duration.
func SummarizeRefreshes(durations []time.Duration, budget time.Duration) *RefreshSummary {
	if len(durations) == 0 {
		return nil
	}
	ms := make([]float64, len(durations))
	over := 0
	for i, d := range durations {
		ms[i] = float64(d) / float64(time.Millisecond)
		if budget > 0 && d > budget {
			over++
		}
	}
	slices.Sort(ms)
	s := &RefreshSummary{
		Count:              len(ms),
		MedianMilliseconds: ms[len(ms)/2],
		P90Milliseconds:    ms[min(len(ms)-1, int(math.Ceil(0.9*float64(len(ms))))-1)],
		MaxMilliseconds:    ms[len(ms)-1],
	}
	if budget > 0 {
		s.BudgetMilliseconds = float64(budget) / float64(time.Millisecond)
		s.OverBudget = &over
	}
	return s
}

// sentence says it in words for the scenario's text.
func (s *RefreshSummary) sentence() string {
	if s == nil {
		return ""
	}
	out := fmt.Sprintf(" The estimator refreshed %d times, median %.1f ms, P90 %.1f ms, longest %.1f ms", s.Count, s.MedianMilliseconds, s.P90Milliseconds, s.MaxMilliseconds)
	if s.OverBudget != nil {
		out += fmt.Sprintf("; %d took longer than the %.0f ms its CPU budget allows a refresh period and stretched it", *s.OverBudget, s.BudgetMilliseconds)
	}
	return out + "."
}

// LevelResult is one level, pooled over its seeds and queues, then broken
// down by ClusterQueue and by priority class.
type LevelResult struct {
	TargetUtilization float64 `json:"targetUtilization"`
	// ObservedUtilization is the offered work of the feasible arrivals
	// over the nominal k_eff and the arrival span, pooled over the queues.
	ObservedUtilization float64 `json:"observedUtilization"`
	Seeds               int     `json:"seeds"`
	Workloads           int     `json:"workloads"`
	Warmup              int     `json:"warmup"`
	Unfeasible          int     `json:"unfeasible"`
	// UnfeasibleLabelled counts the unfeasible workloads the estimator
	// published as Unfeasible; QuotableMislabelled the feasible ones.
	UnfeasibleLabelled  int `json:"unfeasibleLabelled"`
	QuotableMislabelled int `json:"quotableMislabelled"`
	// The keys of earlier reports, now on the ledger's scored set:
	// forecasted is scored, the MAEs are predictors' (nil: no answer).
	Forecasted  int      `json:"forecasted"`
	MAEForecast *float64 `json:"maeForecast"`
	MAEEMA      *float64 `json:"maeEMA"`
	MAEPaper    *float64 `json:"maePaper"`
	MAEWhitt    *float64 `json:"maeWhitt"`
	Figures
	Queues     []GroupResult `json:"queues"`
	Priorities []GroupResult `json:"priorities,omitempty"`
	// ReplicaAgreement compares the P50s of a second, non-scheduling
	// estimator with the scheduling one's (eval --replica); nil without.
	ReplicaAgreement *ReplicaAgreement `json:"replicaAgreement,omitempty"`
}

// ReplicaAgreement is how the P50 admission times a replica that does not
// schedule published agree with the scheduling replica's, over every poll
// of every pending workload both gave a wait: |t₁ − t₂| / P50₁.
type ReplicaAgreement struct {
	Samples int `json:"samples"`
	// MedianRelativeDifference is the median of the relative differences;
	// Within10Percent the fraction of samples at most 0.1.
	MedianRelativeDifference float64 `json:"medianRelativeDifference"`
	Within10Percent          float64 `json:"within10Percent"`
}

// replicaAgreement summarizes relative differences; nil for none.
func replicaAgreement(diffs []float64) *ReplicaAgreement {
	if len(diffs) == 0 {
		return nil
	}
	sorted := slices.Sorted(slices.Values(diffs))
	within := 0
	for _, d := range sorted {
		if d <= 0.1 {
			within++
		}
	}
	median := sorted[len(sorted)/2]
	if len(sorted)%2 == 0 {
		median = (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
	}
	return &ReplicaAgreement{Samples: len(sorted), MedianRelativeDifference: median, Within10Percent: float64(within) / float64(len(sorted))}
}

// GroupResult is the figures of one ClusterQueue or priority class of a
// level.
type GroupResult struct {
	Name string `json:"name"`
	// For a ClusterQueue: its nominal k_eff, bottleneck, target and
	// observed utilization, and Little's L/(λW) from sampled pending counts.
	KEff                int      `json:"kEff,omitempty"`
	Bottleneck          string   `json:"bottleneck,omitempty"`
	TargetUtilization   float64  `json:"targetUtilization,omitempty"`
	ObservedUtilization float64  `json:"observedUtilization,omitempty"`
	LittleRatio         *float64 `json:"littleRatio,omitempty"`
	Figures
}

// Figures are the accuracy of every predictor over one set of scored
// workloads, counted after the warm-up. Every predictor is scored on the
// same workloads, from the same moment (their first published estimate);
// a predictor that had no answer for some of them is scored on the others
// and says how many it answered (n).
type Figures struct {
	Feasible               int `json:"feasible"`
	Scored                 int `json:"scored"`
	AdmittedBeforeEstimate int `json:"admittedBeforeEstimate"`
	// ObservedMeanWait is the mean whole wait (creation to first
	// admission) of the feasible workloads; ScoredMeanRemaining the mean
	// wait that remained from the first estimate of the scored ones.
	ObservedMeanWait    float64                    `json:"observedMeanWait"`
	ScoredMeanRemaining float64                    `json:"scoredMeanRemaining"`
	Predictors          map[string]PredictorResult `json:"predictors"`
	// ForecastMAERatio is the forecast's MAE over each baseline's, on the
	// workloads both answered, with a batch-means 95% interval.
	ForecastMAERatio map[string]RatioResult `json:"forecastMAERatio,omitempty"`
	P50Coverage      *float64               `json:"p50Coverage"`
	P50CoverageCI95  *[2]float64            `json:"p50CoverageCI95"`
	P90Coverage      *float64               `json:"p90Coverage"`
	P90CoverageCI95  *[2]float64            `json:"p90CoverageCI95"`
	// PinballP50 and PinballP90 are the quantile losses of the forecast's
	// P50 and P90 (seconds).
	PinballP50 *float64 `json:"pinballP50"`
	PinballP90 *float64 `json:"pinballP90"`
}

// PredictorResult is one predictor's accuracy.
type PredictorResult struct {
	N              int         `json:"n"`
	MAE            float64     `json:"mae"`
	MAECI95        *[2]float64 `json:"maeCI95"`
	MedianAbsError float64     `json:"medianAbsError"`
	Bias           float64     `json:"bias"`
	BiasCI95       *[2]float64 `json:"biasCI95"`
	// RelativeError is the mean |error|/actual over the workloads that
	// waited at least RelativeFloor seconds (half the mean service).
	RelativeError  *float64 `json:"relativeError"`
	RelativeN      int      `json:"relativeN"`
	RelativeFloorS float64  `json:"relativeFloorSeconds"`
}

// RatioResult is a ratio of MAEs with its interval.
type RatioResult struct {
	N      int         `json:"n"`
	Ratio  float64     `json:"ratio"`
	CI95   *[2]float64 `json:"ci95"`
	Better bool        `json:"forecastBetter"`
}

// ScoredSample is one scored admission of a workload: what each predictor
// said at its first published estimate and the wait that remained.
type ScoredSample struct {
	Level         float64
	Seed          int
	Queue         string
	Class         string
	PriorityClass string
	Workload      string
	// Batch is the batch-means label (replica × time-ordered batch).
	Batch int
	Score estimator.Score
	// Oracle is the oracle's point (oracle.go) for the same workload at
	// the same moment, where its ClusterQueue has one.
	Oracle estimator.Prediction
	// Replayable says that Score has the raw quantiles and EstimatedAt
	// (read from a CSV with the replay columns, or made by a run).
	Replayable bool `json:"-"`
}

// PredictorOracle names the oracle (oracle.go) among the predictors a
// report scores: the harness computes it, the estimator does not publish it.
const PredictorOracle estimator.Predictor = "oracle"

// reportPredictors are the predictors a report scores, the forecast first.
var reportPredictors = append(estimator.Predictors[:len(estimator.Predictors):len(estimator.Predictors)], PredictorOracle)

// prediction is the answer of p for this sample.
func (s ScoredSample) prediction(p estimator.Predictor) estimator.Prediction {
	if p == PredictorOracle {
		return s.Oracle
	}
	return s.Score.Prediction(p)
}

// interval turns an accuracy.Interval into the JSON pair.
func interval(i accuracy.Interval) *[2]float64 {
	if !i.Defined {
		return nil
	}
	return &[2]float64{i.Low, i.High}
}

func ptr(v float64) *float64 { return &v }

// Build joins what the replicas observed with the ledger's scores.
func Build(spec *scenario.Spec, replicas []*ReplicaRun, scores *ScoreRecorder) *Report {
	r := &Report{Spec: spec}
	levels := map[int]*levelAcc{}
	for ri, rr := range replicas {
		p := rr.Plan
		la := levels[p.LevelIndex]
		if la == nil {
			la = &levelAcc{result: LevelResult{TargetUtilization: p.Level}, queues: map[string]*groupAcc{}, prios: map[string]*groupAcc{}}
			levels[p.LevelIndex] = la
		}
		la.result.Seeds++
		queuePlans := map[string]scenario.QueuePlan{}
		for _, q := range p.Queues {
			queuePlans[q.Name] = q
			g := la.queue(q)
			g.target = q.Rho
		}
		la.replicaDiffs = append(la.replicaDiffs, rr.ReplicaP50Diffs...)
		var replicaSamples []ScoredSample
		oracles := replicaOracles(spec, p, rr.Runs)
		for _, run := range rr.Runs {
			a := run.Arrival
			la.result.Workloads++
			if a.Unfeasible {
				la.result.Unfeasible++
				if run.Label == estimator.Unfeasible.String() {
					la.result.UnfeasibleLabelled++
				}
				continue
			}
			if run.Label == estimator.Unfeasible.String() {
				la.result.QuotableMislabelled++
			}
			q := queuePlans[a.Queue]
			g := la.queue(q)
			g.work += a.Service
			la.work += a.Service
			la.meanS = append(la.meanS, a.Service)
			taken := scores.take(run.Key)
			if a.Warmup {
				la.result.Warmup++
				continue
			}
			pg := la.prio(a.PriorityClass)
			before := max(len(run.Admissions)-len(taken), 0)
			la.before += before
			g.before += before
			pg.before += before
			g.feasible++
			pg.feasible++
			if len(run.Admissions) > 0 {
				w := run.Admissions[0].Sub(run.Created).Seconds()
				la.waits = append(la.waits, w)
				g.waits = append(g.waits, w)
				pg.waits = append(pg.waits, w)
			}
			for _, sc := range taken {
				s := ScoredSample{
					Level: p.Level, Seed: p.SeedIndex, Queue: a.Queue, Class: a.Class, PriorityClass: a.PriorityClass,
					Workload: string(run.Key), Score: sc, Replayable: true,
				}
				if oq := oracles[a.Queue]; oq != nil {
					if at, ok := admissionAfter(run.Admissions, sc.EstimatedAt); ok {
						s.Oracle = estimator.Prediction{Wait: oq.prediction(string(run.Key), sc.EstimatedAt, at, oq.rng), OK: true}
					}
				}
				replicaSamples = append(replicaSamples, s)
			}
		}
		for _, q := range p.Queues {
			g := la.queue(q)
			span := max(p.Span, 1e-9)
			g.servers += float64(q.KEff.Servers) * span
			la.servers += float64(q.KEff.Servers) * span
			g.pending = append(g.pending, meanInts(rr.PendingSamples[q.Name]))
			g.lambda = append(g.lambda, float64(q.Arrivals)/span)
		}
		// Batches: contiguous in time within the replica.
		slices.SortStableFunc(replicaSamples, func(a, b ScoredSample) int { return a.Score.EstimatedAt.Compare(b.Score.EstimatedAt) })
		for i, b := range accuracy.Batches(len(replicaSamples), batchesPerReplica) {
			replicaSamples[i].Batch = ri*batchesPerReplica + b
		}
		for _, s := range replicaSamples {
			la.samples = append(la.samples, s)
			la.queues[s.Queue].samples = append(la.queues[s.Queue].samples, s)
			la.prios[s.PriorityClass].samples = append(la.prios[s.PriorityClass].samples, s)
		}
	}
	for _, li := range slices.Sorted(maps.Keys(levels)) {
		la := levels[li]
		lr := la.result
		if la.servers > 0 {
			lr.ObservedUtilization = la.work / la.servers
		}
		floor := mean(la.meanS) / 2
		lr.Figures = figures(la.samples, la.waits, la.before, floor)
		lr.Forecasted = lr.Scored
		for p, dst := range map[estimator.Predictor]**float64{
			estimator.PredictorForecast: &lr.MAEForecast, estimator.PredictorEMA: &lr.MAEEMA,
			estimator.PredictorPaper: &lr.MAEPaper, estimator.PredictorWhitt: &lr.MAEWhitt,
		} {
			if pr, ok := lr.Predictors[string(p)]; ok {
				*dst = ptr(pr.MAE)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(la.queues)) {
			g := la.queues[name]
			gr := GroupResult{Name: name, KEff: g.keff, Bottleneck: g.bottleneck, TargetUtilization: g.target}
			if g.servers > 0 {
				gr.ObservedUtilization = g.work / g.servers
			}
			if l, lam, w := mean(g.pending), mean(g.lambda), mean(g.waits); lam > 0 && w > 0 && l > 0 {
				gr.LittleRatio = ptr(l / (lam * w))
			}
			gr.Figures = figures(g.samples, g.waits, g.before, g.meanService/2)
			lr.Queues = append(lr.Queues, gr)
		}
		if len(la.prios) > 1 {
			for _, name := range slices.Sorted(maps.Keys(la.prios)) {
				g := la.prios[name]
				gr := GroupResult{Name: name}
				if name == "" {
					gr.Name = "(none)"
				}
				gr.Figures = figures(g.samples, g.waits, g.before, floor)
				lr.Priorities = append(lr.Priorities, gr)
			}
		}
		lr.ReplicaAgreement = replicaAgreement(la.replicaDiffs)
		r.Levels = append(r.Levels, lr)
		r.Samples = append(r.Samples, la.samples...)
	}
	return r
}

// groupAcc accumulates one ClusterQueue's or priority class's samples.
type groupAcc struct {
	samples          []ScoredSample
	waits            []float64
	before, feasible int
	keff             int
	bottleneck       string
	target           float64
	meanService      float64
	work, servers    float64
	pending, lambda  []float64
}

// levelAcc accumulates one level over its replicas.
type levelAcc struct {
	result  LevelResult
	samples []ScoredSample
	waits   []float64 // whole first waits of feasible non-warm-up workloads
	before  int
	queues  map[string]*groupAcc
	prios   map[string]*groupAcc
	work    float64
	servers float64
	meanS   []float64
	// replicaDiffs pool the replicas' P50 differences (eval --replica).
	replicaDiffs []float64
}

func (la *levelAcc) queue(q scenario.QueuePlan) *groupAcc {
	g := la.queues[q.Name]
	if g == nil {
		g = &groupAcc{keff: q.KEff.Servers, bottleneck: q.KEff.Resource, meanService: q.MeanService}
		la.queues[q.Name] = g
	}
	return g
}

func (la *levelAcc) prio(name string) *groupAcc {
	g := la.prios[name]
	if g == nil {
		g = &groupAcc{}
		la.prios[name] = g
	}
	return g
}

// figures scores every predictor on samples; waits are the whole waits of
// the feasible workloads, before how many were admitted with no estimate.
func figures(samples []ScoredSample, waits []float64, before int, relativeFloor float64) Figures {
	f := Figures{
		Feasible: len(waits), Scored: len(samples), AdmittedBeforeEstimate: before,
		ObservedMeanWait: mean(waits), Predictors: map[string]PredictorResult{},
	}
	// The feasible count is of workloads; a preempted workload may be
	// admitted, and scored, more than once.
	var remaining []float64
	for _, s := range samples {
		remaining = append(remaining, s.Score.Actual.Seconds())
	}
	f.ScoredMeanRemaining = mean(remaining)
	answered := func(p estimator.Predictor) []accuracy.Sample {
		var out []accuracy.Sample
		for _, s := range samples {
			if pred := s.prediction(p); pred.OK {
				out = append(out, accuracy.Sample{Predicted: pred.Wait.Seconds(), Actual: s.Score.Actual.Seconds(), Batch: s.Batch})
			}
		}
		return out
	}
	for _, p := range reportPredictors {
		set := answered(p)
		if len(set) == 0 {
			continue
		}
		sum := accuracy.Summarize(set, relativeFloor)
		pr := PredictorResult{
			N: sum.N, MAE: sum.MAE, MAECI95: interval(sum.MAEInterval), MedianAbsError: sum.MedianAbsoluteError,
			Bias: sum.Bias, BiasCI95: interval(sum.BiasInterval), RelativeN: sum.RelativeN, RelativeFloorS: sum.RelativeFloor,
		}
		if sum.RelativeN > 0 {
			pr.RelativeError = ptr(sum.MeanRelativeError)
		}
		f.Predictors[string(p)] = pr
	}
	// The forecast against each baseline, on the workloads both answered.
	for _, base := range reportPredictors[1:] {
		var num, den []accuracy.Sample
		for _, s := range samples {
			fp, bp := s.Score.Forecast, s.prediction(base)
			if !fp.OK || !bp.OK {
				continue
			}
			actual := s.Score.Actual.Seconds()
			num = append(num, accuracy.Sample{Predicted: fp.Wait.Seconds(), Actual: actual, Batch: s.Batch})
			den = append(den, accuracy.Sample{Predicted: bp.Wait.Seconds(), Actual: actual, Batch: s.Batch})
		}
		if ratio, ok := accuracy.CompareMAE(num, den); ok {
			if f.ForecastMAERatio == nil {
				f.ForecastMAERatio = map[string]RatioResult{}
			}
			f.ForecastMAERatio[string(base)] = RatioResult{N: ratio.N, Ratio: ratio.Ratio, CI95: interval(ratio.Interval),
				Better: ratio.Interval.Defined && ratio.Interval.High < 1}
		}
	}
	for _, q := range []struct {
		level             float64
		pred              func(estimator.Score) estimator.Prediction
		coverage, pinball **float64
		ci                **[2]float64
	}{
		{0.5, func(s estimator.Score) estimator.Prediction { return s.P50 }, &f.P50Coverage, &f.PinballP50, &f.P50CoverageCI95},
		{0.9, func(s estimator.Score) estimator.Prediction { return s.P90 }, &f.P90Coverage, &f.PinballP90, &f.P90CoverageCI95},
	} {
		var set, hits []accuracy.Sample
		for _, s := range samples {
			if pred := q.pred(s.Score); pred.OK {
				set = append(set, accuracy.Sample{Predicted: pred.Wait.Seconds(), Actual: s.Score.Actual.Seconds(), Batch: s.Batch})
				hits = append(hits, accuracy.Sample{Predicted: indicator(s.Score.Actual <= pred.Wait), Batch: s.Batch})
			}
		}
		score, ok := accuracy.ScoreQuantile(set, q.level)
		if !ok {
			continue
		}
		*q.coverage, *q.pinball = ptr(score.Coverage), ptr(score.PinballLoss)
		// Coverage is the mean of hit indicators: its interval is the
		// batch-means one (successive waits are correlated, so a Wilson
		// interval, which assumes independence, would be too narrow).
		*q.ci = interval(accuracy.Summarize(hits, 0).BiasInterval)
	}
	return f
}

func indicator(ok bool) float64 {
	if ok {
		return 1
	}
	return 0
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func meanInts(v []int) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += float64(x)
	}
	return s / float64(len(v))
}

// cell formats an optional figure.
func cell(v *float64, format string) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf(format, *v)
}

// maeCell is "MAE [lo, hi]" of a predictor, with its n when it answered
// fewer than scored.
func (f Figures) maeCell(p estimator.Predictor) string {
	pr, ok := f.Predictors[string(p)]
	if !ok {
		return "—"
	}
	out := fmt.Sprintf("%.2f", pr.MAE)
	if pr.MAECI95 != nil {
		out += fmt.Sprintf(" [%.2f, %.2f]", pr.MAECI95[0], pr.MAECI95[1])
	}
	if pr.N != f.Scored {
		out += fmt.Sprintf(" (n %d)", pr.N)
	}
	return out
}

func (f Figures) ratioCell(base estimator.Predictor) string {
	r, ok := f.ForecastMAERatio[string(base)]
	if !ok {
		return "—"
	}
	return ratioCellOf(r)
}

// ratioCellOf is "ratio [lo, hi]".
func ratioCellOf(r RatioResult) string {
	out := fmt.Sprintf("%.2f", r.Ratio)
	if r.CI95 != nil {
		out += fmt.Sprintf(" [%.2f, %.2f]", r.CI95[0], r.CI95[1])
	}
	return out
}

func coverageCell(v *float64, ci *[2]float64) string { return coverageCellOf("%.2f", v, ci) }

// coverageCellOf is a coverage cell with its point in pointFormat.
func coverageCellOf(pointFormat string, v *float64, ci *[2]float64) string {
	if v == nil {
		return "—"
	}
	out := fmt.Sprintf(pointFormat, *v)
	if ci != nil {
		out += fmt.Sprintf(" [%.2f, %.2f]", max(ci[0], 0), min(ci[1], 1))
	}
	return out
}

const figuresHeader = "| scored / feasible | admitted before estimate | W observed (s) | remaining (s) | MAE forecast | MAE EMA | MAE paper | MAE Whitt | MAE oracle | forecast ÷ EMA | forecast ÷ paper | forecast ÷ oracle | P50 coverage | P90 coverage |"

func (f Figures) row() string {
	return fmt.Sprintf("| %d / %d | %d | %.2f | %.2f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |",
		f.Scored, f.Feasible, f.AdmittedBeforeEstimate, f.ObservedMeanWait, f.ScoredMeanRemaining,
		f.maeCell(estimator.PredictorForecast), f.maeCell(estimator.PredictorEMA), f.maeCell(estimator.PredictorPaper), f.maeCell(estimator.PredictorWhitt),
		f.maeCell(PredictorOracle), f.ratioCell(estimator.PredictorEMA), f.ratioCell(estimator.PredictorPaper), f.ratioCell(PredictorOracle),
		coverageCell(f.P50Coverage, f.P50CoverageCI95), coverageCell(f.P90Coverage, f.P90CoverageCI95))
}

// WriteMarkdown writes the scenario's tables: one row per level, then per
// ClusterQueue and per priority class where there are several.
func (r *Report) WriteMarkdown(w io.Writer) error {
	s := r.Spec
	fmt.Fprintf(w, "### %s\n\n", s.Name)
	if s.Description != "" {
		fmt.Fprintf(w, "%s\n\n", s.Description)
	}
	fmt.Fprintf(w, "%d workloads per level and seed, %d seed(s), the first %.0f%% of each run's arrivals discarded as warm-up; wall time %s, %.1f scheduling cycles per second (all replicas).%s "+
		"Every predictor is scored on the same workloads (those pending at an estimator refresh), against the wait that remained from their first published estimate; "+
		"MAEs in seconds with batch-means 95%% intervals, ratios below 1 favour the forecast.\n\n",
		s.Workloads, s.NumSeeds(), 100*s.WarmupFraction(), r.WallTime, r.SchedulingCyclesPerSecond, r.Refreshes.sentence())
	fmt.Fprintln(w, "| ρ target | ρ observed "+figuresHeader)
	fmt.Fprintln(w, "|---|---"+strings.Repeat("|---", 12)+"|")
	for _, l := range r.Levels {
		fmt.Fprintf(w, "| %.2f | %.2f %s\n", l.TargetUtilization, l.ObservedUtilization, l.Figures.row())
	}
	multiQueue := len(s.ClusterQueues) > 1
	for _, l := range r.Levels {
		if multiQueue {
			fmt.Fprintf(w, "\nLevel %.2f by ClusterQueue:\n\n", l.TargetUtilization)
			fmt.Fprintln(w, "| ClusterQueue | k_eff | ρ target | ρ observed "+figuresHeader)
			fmt.Fprintln(w, "|---|---|---|---"+strings.Repeat("|---", 12)+"|")
			for _, q := range l.Queues {
				fmt.Fprintf(w, "| %s | %d | %.2f | %.2f %s\n", q.Name, q.KEff, q.TargetUtilization, q.ObservedUtilization, q.Figures.row())
			}
		}
		if len(l.Priorities) > 1 {
			fmt.Fprintf(w, "\nLevel %.2f by priority class:\n\n", l.TargetUtilization)
			fmt.Fprintln(w, "| priority class "+figuresHeader)
			fmt.Fprintln(w, "|---"+strings.Repeat("|---", 12)+"|")
			for _, p := range l.Priorities {
				fmt.Fprintf(w, "| %s %s\n", p.Name, p.Figures.row())
			}
		}
	}
	for _, l := range r.Levels {
		if l.Unfeasible > 0 || l.QuotableMislabelled > 0 {
			fmt.Fprintf(w, "\nρ %.2f: %d of %d unfeasible workloads labelled Unfeasible; %d feasible workloads mislabelled.\n",
				l.TargetUtilization, l.UnfeasibleLabelled, l.Unfeasible, l.QuotableMislabelled)
		}
	}
	for _, l := range r.Levels {
		if a := l.ReplicaAgreement; a != nil {
			fmt.Fprintf(w, "\nρ %.2f, a replica that does not schedule: its P50 admission times differ from the scheduling replica's by a median %.1f%% of the P50, %.0f%% of %d samples within 10%%.\n",
				l.TargetUtilization, 100*a.MedianRelativeDifference, 100*a.Within10Percent, a.Samples)
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

// csvHeaderWithoutOracle are the columns of WriteCSV (read back by
// readScoredCSV) before the oracle's was added. Their last four (the quantiles before calibration, the scale floor of their
// calibration, and when the first estimate was published, Unix seconds)
// let a calibrator be replayed on the run's outcomes (see
// replayCalibration); CSVs written before them have the others only
// (csvHeaderWithoutReplay).
var csvHeaderWithoutOracle = append(slices.Clone(csvHeaderWithoutReplay), "raw_p50_s", "raw_p90_s", "calibration_eps_s", "estimated_at_unix_s")

// csvHeader are the columns of WriteCSV: csvHeaderWithoutOracle's and the
// oracle's point, empty where the ClusterQueue has no oracle.
var csvHeader = append(slices.Clone(csvHeaderWithoutOracle), "oracle_s")

// csvHeaderWithoutReplay are the columns of the CSVs written before the
// replay columns.
var csvHeaderWithoutReplay = []string{"level", "seed", "queue", "class", "priority_class", "workload", "batch", "method",
	"waited_s", "actual_s", "forecast_s", "p50_s", "p90_s", "ema_s", "paper_s", "whitt_s"}

// WriteCSV writes one row per scored admission.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(csvHeader)
	pred := func(p estimator.Prediction) string {
		if !p.OK {
			return ""
		}
		return strconv.FormatFloat(p.Wait.Seconds(), 'f', 3, 64)
	}
	for _, s := range r.Samples {
		sc := s.Score
		_ = cw.Write([]string{strconv.FormatFloat(s.Level, 'f', 2, 64), strconv.Itoa(s.Seed), s.Queue, s.Class, s.PriorityClass, s.Workload,
			strconv.Itoa(s.Batch), string(sc.Method), strconv.FormatFloat(sc.Waited.Seconds(), 'f', 3, 64), strconv.FormatFloat(sc.Actual.Seconds(), 'f', 3, 64),
			pred(sc.Forecast), pred(sc.P50), pred(sc.P90), pred(sc.EMA), pred(sc.Paper), pred(sc.Whitt),
			pred(sc.RawP50), pred(sc.RawP90), strconv.FormatFloat(sc.CalibrationScale, 'g', -1, 64),
			strconv.FormatFloat(float64(sc.EstimatedAt.UnixMilli())/1000, 'f', 3, 64), pred(s.Oracle)})
	}
	cw.Flush()
	return cw.Error()
}

// WriteSummary writes a short predicted-versus-actual summary (the demo's
// closing screen).
func (r *Report) WriteSummary(w io.Writer) error {
	for _, l := range r.Levels {
		fmt.Fprintf(w, "Summary: %d workloads (%d Unfeasible, %d labelled so), target utilization %.2f, observed %.2f.\n",
			l.Workloads, l.Unfeasible, l.UnfeasibleLabelled, l.TargetUtilization, l.ObservedUtilization)
		fmt.Fprintf(w, "Observed mean wait %.2fs. %d of %d feasible workloads were scored (pending when the estimator refreshed; %d admitted before any estimate).\n",
			l.ObservedMeanWait, l.Scored, l.Feasible, l.AdmittedBeforeEstimate)
		if l.Scored == 0 {
			continue
		}
		fmt.Fprintf(w, "Mean absolute error of the wait that remained from each workload's first estimate: forecast %s s, EMA %s s, paper's Erlang-C %s s, Whitt %s s. P50 coverage %s, P90 coverage %s.\n",
			l.maeCell(estimator.PredictorForecast), l.maeCell(estimator.PredictorEMA), l.maeCell(estimator.PredictorPaper), l.maeCell(estimator.PredictorWhitt),
			coverageCell(l.P50Coverage, l.P50CoverageCI95), coverageCell(l.P90Coverage, l.P90CoverageCI95))
	}
	return nil
}

// WriteFiles creates dir and writes each named file of it with its writer.
func WriteFiles(dir string, files map[string]func(io.Writer) error) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, write := range files {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if err := errors.Join(write(f), f.Close()); err != nil {
			return err
		}
	}
	return nil
}
