package score

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
	"github.com/kueue-waittime/kueue-waittime/pkg/accuracy"
)

// Report is the accuracy report of one window. It is what -o json prints.
type Report struct {
	Window Window `json:"window"`
	// ClusterQueues are ordered by name, each with its priorities (when a
	// priority label exists) ordered by name.
	ClusterQueues []Row `json:"clusterQueues"`
	// Pooled sums every ClusterQueue; it comes last in the table.
	Pooled Row `json:"pooled"`
}

// Window says what was subtracted.
type Window struct {
	// Scrapes is 1 (everything since the manager started) or 2 (the
	// difference between two scrapes of one process).
	Scrapes int `json:"scrapes"`
	// Sources names the scrapes, the older first.
	Sources []string `json:"sources"`
	// Seconds between the two scrapes, null when unknown or for one.
	Seconds *float64 `json:"seconds"`
}

// Row is the score of one ClusterQueue, one priority of it, or the pool.
type Row struct {
	// ClusterQueue is empty for the pooled row.
	ClusterQueue string `json:"clusterQueue,omitempty"`
	// Priority is the value of the priority label, empty for a whole
	// ClusterQueue or the whole pool.
	Priority string `json:"priority,omitempty"`
	// Scored is the workloads scored at admission: those the forecast
	// answered plus those it did not.
	Scored int `json:"scored"`
	// Predictors by name: forecast, ema, paper, whitt (always present)
	// and any other the manager reports.
	Predictors map[string]Predictor `json:"predictors"`
	// ForecastMAERatio is, per baseline, the forecast's MAE over the
	// baseline's (below 1: the forecast is better); null when either has
	// no answer or the baseline's MAE is 0.
	ForecastMAERatio map[string]*float64 `json:"forecastMAERatio"`
	// P50 and P90 are the realized coverage of the first published P50 and
	// P90.
	P50 Coverage `json:"p50"`
	P90 Coverage `json:"p90"`
	// AdmittedBeforeEstimate and DeletedBeforeAdmission are the workloads
	// the ledger could not score.
	AdmittedBeforeEstimate int `json:"admittedBeforeEstimate"`
	DeletedBeforeAdmission int `json:"deletedBeforeAdmission"`
	// EffectiveServers (k_eff) and UtilizationEstimate (ρ_eff) are the
	// queue model's at the last scrape; null for the pool, when absent, or
	// when the row's series disagree.
	EffectiveServers    *float64 `json:"effectiveServers"`
	UtilizationEstimate *float64 `json:"utilizationEstimate"`
	// UnfeasiblePending is the pending workloads that can never be
	// admitted, at the last scrape; null when absent.
	UnfeasiblePending *int `json:"unfeasiblePending"`
	// Verdict is the row's one-line summary.
	Verdict string `json:"verdict"`
	// Priorities split the row by the priority label, when there is one.
	Priorities []Row `json:"priorities,omitempty"`
}

// Predictor is one predictor's absolute error.
type Predictor struct {
	// N is the workloads it answered (its histogram's count).
	N int `json:"n"`
	// Unanswered is the scored workloads it had no answer for.
	Unanswered int `json:"unanswered"`
	// MAE is its mean absolute error in seconds, exact (sum/count).
	MAE *float64 `json:"mae"`
	// MedianAbsErrorApprox is its median absolute error in seconds,
	// estimated from the histogram's buckets (histogram_quantile).
	MedianAbsErrorApprox *float64 `json:"medianAbsErrorApprox"`
}

// Coverage is the realized coverage of one published quantile.
type Coverage struct {
	// Predictions is hits + misses; Hits the workloads admitted within the
	// quantile.
	Predictions int `json:"predictions"`
	Hits        int `json:"hits"`
	// Coverage is Hits/Predictions, CI95 its Wilson 95% interval; null
	// without predictions.
	Coverage *float64    `json:"coverage"`
	CI95     *[2]float64 `json:"ci95"`
	// RecentCoverage is the manager's decayed coverage gauge at the last
	// scrape, CalibrationFactor the factor its online calibration applies
	// to the quantile (1: none); null when absent, for the pool, or when
	// the row's series disagree.
	RecentCoverage    *float64 `json:"recentCoverage"`
	CalibrationFactor *float64 `json:"calibrationFactor"`
}

// knownPredictors are the manager's predictors in display order; baselines
// are every predictor but the forecast.
var knownPredictors = []string{predictorForecast, "ema", "paper", "whitt"}

// predictorNames names a predictor in a verdict: subject and possessive.
var predictorNames = map[string][2]string{
	predictorForecast: {"the forecast", "the forecast's"},
	"ema":             {"the EMA", "the EMA's"},
	"paper":           {"the paper formula", "the paper formula's"},
	"whitt":           {"Whitt's formula", "Whitt's"},
	// The forecast's own mean before calibration (a manager that records
	// it): the ratio says what the calibration of the mean does.
	"forecast-uncalibrated": {"the forecast before calibration", "the uncalibrated forecast's"},
}

func predictorName(p string, possessive bool) string {
	n, ok := predictorNames[p]
	if !ok {
		n = [2]string{p, p + "'s"}
	}
	if possessive {
		return n[1]
	}
	return n[0]
}

// groupKey is a row: a ClusterQueue or the pool, whole or one priority.
type groupKey struct {
	pooled       bool
	clusterQueue string
	priority     string
}

// tally accumulates the series of one row.
type tally struct {
	errors       map[string]*histTally
	unanswered   map[string]float64
	hits, misses map[string]float64
	unscored     map[string]float64
	coverage     map[string][]float64
	adjustment   map[string][]float64
	servers      []float64
	utilization  []float64
	unfeasible   *float64
}

func newTally() *tally {
	return &tally{
		errors: map[string]*histTally{}, unanswered: map[string]float64{},
		hits: map[string]float64{}, misses: map[string]float64{}, unscored: map[string]float64{},
		coverage: map[string][]float64{}, adjustment: map[string][]float64{},
	}
}

// histTally sums histograms; their buckets are merged while the bounds
// agree (they do for one manager).
type histTally struct {
	count, sum         float64
	bounds, cumulative []float64
	mismatch           bool
}

func (h *histTally) add(s *series) {
	h.count += s.value
	h.sum += s.sum
	switch {
	case h.mismatch:
	case h.bounds == nil:
		h.bounds, h.cumulative = slices.Clone(s.bounds), slices.Clone(s.cumulative)
	case !slices.Equal(h.bounds, s.bounds):
		h.mismatch = true
	default:
		for i, c := range s.cumulative {
			h.cumulative[i] += c
		}
	}
}

// priorityOf is the series' priority label value, "" without one.
func priorityOf(labels map[string]string) string {
	for _, name := range priorityLabels {
		if v := labels[name]; v != "" {
			return v
		}
	}
	return ""
}

// buildReport scores the window s, its series summed per ClusterQueue,
// per priority and over all ClusterQueues.
func buildReport(w Window, s *scrape) Report {
	tallies := map[groupKey]*tally{}
	for _, key := range slices.Sorted(maps.Keys(s.series)) { // fixed order: reproducible sums
		sr := s.series[key]
		cq := sr.labels[labelClusterQueue]
		if cq == "" {
			continue
		}
		prio := priorityOf(sr.labels)
		keys := []groupKey{{clusterQueue: cq}, {pooled: true}}
		if prio != "" {
			keys = append(keys, groupKey{clusterQueue: cq, priority: prio}, groupKey{pooled: true, priority: prio})
		}
		for _, k := range keys {
			t := tallies[k]
			if t == nil {
				t = newTally()
				tallies[k] = t
			}
			t.add(sr, k.pooled)
		}
	}

	r := Report{Window: w, ClusterQueues: []Row{}}
	row := func(k groupKey) Row {
		out := tallies[k].row()
		out.ClusterQueue, out.Priority = k.clusterQueue, k.priority
		out.Verdict = verdict(rowLabel(k), out)
		return out
	}
	priorities := func(pooled bool, cq string) []Row {
		var rows []Row
		for _, k := range slices.SortedFunc(maps.Keys(tallies), compareKeys) {
			if k.pooled == pooled && k.clusterQueue == cq && k.priority != "" {
				rows = append(rows, row(k))
			}
		}
		return rows
	}
	for _, k := range slices.SortedFunc(maps.Keys(tallies), compareKeys) {
		if !k.pooled && k.priority == "" {
			cq := row(k)
			cq.Priorities = priorities(false, k.clusterQueue)
			r.ClusterQueues = append(r.ClusterQueues, cq)
		}
	}
	if _, ok := tallies[groupKey{pooled: true}]; ok {
		r.Pooled = row(groupKey{pooled: true})
		r.Pooled.Priorities = priorities(true, "")
	} else {
		r.Pooled = newTally().row()
		r.Pooled.Verdict = verdict(rowLabel(groupKey{pooled: true}), r.Pooled)
	}
	return r
}

func compareKeys(a, b groupKey) int {
	if c := strings.Compare(a.clusterQueue, b.clusterQueue); c != 0 {
		return c
	}
	return strings.Compare(a.priority, b.priority)
}

// rowLabel names a row in its verdict.
func rowLabel(k groupKey) string {
	label := k.clusterQueue
	if k.pooled {
		label = "all ClusterQueues"
	}
	if k.priority != "" {
		label += ", priority " + k.priority
	}
	return label
}

// add counts one series into the tally; the pool takes no per-queue gauge.
func (t *tally) add(s *series, pooled bool) {
	l := s.labels
	if (s.family == familyAbsoluteError || s.family == familyUnanswered) && l[labelPredictor] == "" {
		return
	}
	switch s.family {
	case familyAbsoluteError:
		h := t.errors[l[labelPredictor]]
		if h == nil {
			h = &histTally{}
			t.errors[l[labelPredictor]] = h
		}
		h.add(s)
	case familyUnanswered:
		t.unanswered[l[labelPredictor]] += s.value
	case familyQuantile:
		switch l[labelResult] {
		case resultHit:
			t.hits[l[labelQuantile]] += s.value
		case resultMiss:
			t.misses[l[labelQuantile]] += s.value
		}
	case familyUnscored:
		t.unscored[l[labelReason]] += s.value
	case familyUnfeasible:
		t.unfeasible = new(valueOr(t.unfeasible) + s.value)
	}
	if pooled {
		return
	}
	switch s.family {
	case familyCoverage:
		t.coverage[l[labelQuantile]] = append(t.coverage[l[labelQuantile]], s.value)
	case familyAdjustment:
		t.adjustment[l[labelQuantile]] = append(t.adjustment[l[labelQuantile]], s.value)
	case familyServers:
		t.servers = append(t.servers, s.value)
	case familyUtilization:
		t.utilization = append(t.utilization, s.value)
	}
}

func valueOr(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

// count rounds a counter's value (a float in the exposition) to a count.
func count(v float64) int {
	return int(math.Round(max(v, 0)))
}

// single is the value the series agree on, nil when there is none or they
// disagree.
func single(values []float64) *float64 {
	if len(values) == 0 {
		return nil
	}
	for _, v := range values[1:] {
		if v != values[0] {
			return nil
		}
	}
	return cli.Float(values[0])
}

// row computes the figures of a tally.
func (t *tally) row() Row {
	r := Row{Predictors: map[string]Predictor{}, ForecastMAERatio: map[string]*float64{}}
	names := map[string]bool{}
	for _, p := range knownPredictors {
		names[p] = true
	}
	for p := range t.errors {
		names[p] = true
	}
	for p := range t.unanswered {
		names[p] = true
	}
	for p := range names {
		pr := Predictor{Unanswered: count(t.unanswered[p])}
		if h := t.errors[p]; h != nil && count(h.count) > 0 {
			pr.N = count(h.count)
			pr.MAE = cli.Float(max(h.sum, 0) / h.count)
			if !h.mismatch {
				if m, ok := accuracy.HistogramQuantile(0.5, h.bounds, h.cumulative); ok {
					pr.MedianAbsErrorApprox = cli.Float(m)
				}
			}
		}
		r.Predictors[p] = pr
	}
	forecast := r.Predictors[predictorForecast]
	r.Scored = forecast.N + forecast.Unanswered
	for p, pr := range r.Predictors {
		if p == predictorForecast {
			continue
		}
		r.ForecastMAERatio[p] = nil
		if forecast.MAE != nil && pr.MAE != nil && *pr.MAE > 0 {
			r.ForecastMAERatio[p] = cli.Float(*forecast.MAE / *pr.MAE)
		}
	}
	r.P50 = t.quantile("0.5")
	r.P90 = t.quantile("0.9")
	r.AdmittedBeforeEstimate = count(t.unscored[reasonAdmittedBeforeEstimate])
	r.DeletedBeforeAdmission = count(t.unscored[reasonDeletedBeforeAdmission])
	r.EffectiveServers = single(t.servers)
	r.UtilizationEstimate = single(t.utilization)
	if t.unfeasible != nil {
		r.UnfeasiblePending = new(count(*t.unfeasible))
	}
	return r
}

// quantile is the coverage of one quantile ("0.5", "0.9").
func (t *tally) quantile(q string) Coverage {
	c := Coverage{Hits: count(t.hits[q]), RecentCoverage: single(t.coverage[q]), CalibrationFactor: single(t.adjustment[q])}
	c.Predictions = c.Hits + count(t.misses[q])
	if lo, hi, ok := accuracy.Wilson(c.Hits, c.Predictions); ok {
		c.Coverage = cli.Float(float64(c.Hits) / float64(c.Predictions))
		c.CI95 = &[2]float64{lo, hi}
	}
	return c
}

// orderedPredictors lists a row's predictors: the known ones in order, then
// any other by name.
func orderedPredictors(r Row) []string {
	out := slices.Clone(knownPredictors)
	for _, p := range slices.Sorted(maps.Keys(r.Predictors)) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// verdict is the row's one-line summary, such as
//
//	cq-a: on 1,240 workloads the forecast's MAE is 3.10s, 0.62× the EMA's, …; P90 coverage 0.91 [0.89, 0.93]
func verdict(label string, r Row) string {
	if r.Scored == 0 {
		return label + ": no workload scored"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: on %s ", label, workloads(r.Scored))
	forecast := r.Predictors[predictorForecast]
	if forecast.N == 0 || forecast.MAE == nil {
		b.WriteString("the forecast had no answer")
	} else {
		if forecast.N < r.Scored {
			fmt.Fprintf(&b, "(the forecast answered %s) ", thousands(forecast.N))
		}
		fmt.Fprintf(&b, "the forecast's MAE is %s", cli.Seconds(*forecast.MAE))
		for _, p := range orderedPredictors(r)[1:] {
			pr := r.Predictors[p]
			switch ratio := r.ForecastMAERatio[p]; {
			case pr.N == 0:
				fmt.Fprintf(&b, ", %s answered none", predictorName(p, false))
			case ratio == nil:
				fmt.Fprintf(&b, ", %s MAE is 0", predictorName(p, true))
			default:
				fmt.Fprintf(&b, ", %s× %s", strconv.FormatFloat(*ratio, 'f', 2, 64), predictorName(p, true))
				if pr.N != forecast.N {
					fmt.Fprintf(&b, " (it answered %s)", thousands(pr.N))
				}
			}
		}
	}
	if r.P90.Coverage == nil {
		b.WriteString("; no P90 scored")
		return b.String()
	}
	fmt.Fprintf(&b, "; P90 coverage %.2f [%.2f, %.2f]", *r.P90.Coverage, r.P90.CI95[0], r.P90.CI95[1])
	switch {
	case r.P90.CI95[1] < 0.9:
		b.WriteString(", below 0.9: the P90 is too short")
	case r.P90.CI95[0] > 0.9:
		b.WriteString(", above 0.9: the P90 is longer than it needs to be")
	}
	return b.String()
}

// workloads renders a count of workloads: "1 workload", "1,240 workloads".
func workloads(n int) string {
	if n == 1 {
		return "1 workload"
	}
	return thousands(n) + " workloads"
}

// thousands renders a count with comma separators: 1,240.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
