package dispatcheval

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kueue-waittime/kueue-waittime/pkg/accuracy"
)

// WaitStats summarizes one run's waits, in seconds.
type WaitStats struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P90  float64 `json:"p90"`
	Max  float64 `json:"max"`
}

// waitStats summarizes waits (seconds); the zero value for none.
func waitStats(waits []float64) WaitStats {
	if len(waits) == 0 {
		return WaitStats{}
	}
	s := sortedCopy(waits)
	var sum float64
	for _, w := range s {
		sum += w
	}
	return WaitStats{N: len(s), Mean: sum / float64(len(s)), P90: quantile(s, 0.9), Max: s[len(s)-1]}
}

// Interval is an estimate over replicates (seeds) with its two-sided 95%
// Student-t confidence interval, mean ± t₀.₉₇₅,ₙ₋₁ · s/√n (s the sample
// standard deviation of the n replicate values); CI95 is nil for fewer than
// two replicates, and N is 0 (with a zero estimate) for none.
type Interval struct {
	Estimate float64     `json:"estimate"`
	CI95     *[2]float64 `json:"ci95,omitempty"`
	N        int         `json:"n"`
}

func meanInterval(values []float64) Interval {
	n := len(values)
	if n == 0 {
		return Interval{}
	}
	var sum float64
	for _, v := range values {
		sum += v
	}
	mean := sum / float64(n)
	out := Interval{Estimate: mean, N: n}
	if n < 2 {
		return out
	}
	var ss float64
	for _, v := range values {
		ss += (v - mean) * (v - mean)
	}
	half := accuracy.StudentT975(n-1) * math.Sqrt(ss/float64(n-1)/float64(n))
	out.CI95 = &[2]float64{mean - half, mean + half}
	return out
}

func (i Interval) String() string {
	if i.N == 0 {
		return "–"
	}
	if i.CI95 == nil {
		return fmt.Sprintf("%.2f", i.Estimate)
	}
	return fmt.Sprintf("%.2f [%.2f, %.2f]", i.Estimate, i.CI95[0], i.CI95[1])
}

// RunResult is what one run (a dispatcher on a seed's plan) measured.
type RunResult struct {
	Dispatcher string  `json:"dispatcher"`
	Seed       uint64  `json:"seed"`
	Offered    float64 `json:"offeredCPU"`
	// Waits are the admitted Jobs' waits in seconds, in arrival order.
	Waits []float64 `json:"waits"`
	Stats WaitStats `json:"stats"`
	// Unadmitted counts the Jobs never reserved on a worker, Unfinished
	// those whose manager Workload had not finished when the run ended.
	Unadmitted int `json:"unadmitted"`
	Unfinished int `json:"unfinished"`
	// ReservedOnTwo counts the Jobs whose Workload held a quota
	// reservation on two workers at some moment (each worker's watch saw
	// it reserved there); AdmittedOnTwo those admitted (Admitted condition)
	// on two.
	ReservedOnTwo int `json:"reservedOnTwo"`
	AdmittedOnTwo int `json:"admittedOnTwo"`
	// JobOnTwo counts the Jobs that MultiKueue created on two workers
	// (the Job object itself, which runs the pods, not the Workload copy
	// that queues for quota).
	JobOnTwo int `json:"jobOnTwo"`
	// CopiedTo counts, per worker, the Jobs whose Workload MultiKueue
	// created there (nominated there at some moment); AdmittedOn, per
	// worker, those whose reservation there admitted them.
	CopiedTo   map[string]int `json:"copiedTo"`
	AdmittedOn map[string]int `json:"admittedOn"`
	// BackgroundStats are the waits of the workloads submitted directly to
	// the workers, per worker.
	BackgroundStats map[string]WaitStats `json:"backgroundStats"`
	WallSeconds     float64              `json:"wallSeconds"`
}

// DispatcherSummary is one dispatcher over every seed.
type DispatcherSummary struct {
	Dispatcher    string   `json:"dispatcher"`
	Mean          Interval `json:"mean"`
	P90           Interval `json:"p90"`
	Max           Interval `json:"max"`
	Unadmitted    int      `json:"unadmitted"`
	ReservedOnTwo int      `json:"reservedOnTwo"`
	AdmittedOnTwo int      `json:"admittedOnTwo"`
	JobOnTwo      int      `json:"jobOnTwo"`
}

// Comparison is the candidate against the best built-in dispatcher of a
// statistic (the lower average over seeds), as the per-seed ratio
// candidate/built-in averaged over the seeds (paired: the same plan).
type Comparison struct {
	Statistic string   `json:"statistic"`
	Against   string   `json:"against"`
	Ratio     Interval `json:"ratio"`
	Goal      float64  `json:"goal"`
	// Met: the ratio's estimate is at most the goal. (MetWithConfidence:
	// its whole confidence interval is.)
	Met               bool `json:"met"`
	MetWithConfidence bool `json:"metWithConfidence"`
}

// summarize groups the runs by dispatcher (in the order given) and
// compares candidate with the built-ins on the mean (goal meanGoal) and
// the P90 (goal p90Goal).
func summarize(runs []RunResult, dispatchers []string, candidate string, meanGoal, p90Goal float64) ([]DispatcherSummary, []Comparison) {
	var sums []DispatcherSummary
	stat := func(d string, f func(WaitStats) float64) map[uint64]float64 {
		out := map[uint64]float64{}
		for _, r := range runs {
			if r.Dispatcher == d && r.Stats.N > 0 {
				out[r.Seed] = f(r.Stats)
			}
		}
		return out
	}
	values := func(m map[uint64]float64) []float64 {
		seeds := make([]uint64, 0, len(m))
		for s := range m {
			seeds = append(seeds, s)
		}
		slices.Sort(seeds)
		out := make([]float64, 0, len(m))
		for _, s := range seeds {
			out = append(out, m[s])
		}
		return out
	}
	mean := func(s WaitStats) float64 { return s.Mean }
	p90 := func(s WaitStats) float64 { return s.P90 }
	for _, d := range dispatchers {
		if len(stat(d, mean)) == 0 {
			continue
		}
		ds := DispatcherSummary{Dispatcher: d,
			Mean: meanInterval(values(stat(d, mean))),
			P90:  meanInterval(values(stat(d, p90))),
			Max:  meanInterval(values(stat(d, func(s WaitStats) float64 { return s.Max }))),
		}
		for _, r := range runs {
			if r.Dispatcher == d {
				ds.Unadmitted += r.Unadmitted
				ds.ReservedOnTwo += r.ReservedOnTwo
				ds.AdmittedOnTwo += r.AdmittedOnTwo
				ds.JobOnTwo += r.JobOnTwo
			}
		}
		sums = append(sums, ds)
	}
	var comps []Comparison
	for _, c := range []struct {
		name string
		f    func(WaitStats) float64
		goal float64
	}{{"mean", mean, meanGoal}, {"p90", p90, p90Goal}} {
		cand := stat(candidate, c.f)
		best, bestAvg := "", math.Inf(1)
		for _, d := range dispatchers {
			if d == candidate {
				continue
			}
			if i := meanInterval(values(stat(d, c.f))); i.N > 0 && i.Estimate < bestAvg {
				best, bestAvg = d, i.Estimate
			}
		}
		if best == "" {
			continue
		}
		base := stat(best, c.f)
		ratios := map[uint64]float64{}
		for seed, v := range cand {
			if b, ok := base[seed]; ok && b > 0 {
				ratios[seed] = v / b
			}
		}
		r := meanInterval(values(ratios))
		comps = append(comps, Comparison{Statistic: c.name, Against: best, Ratio: r, Goal: c.goal,
			Met:               r.N > 0 && r.Estimate <= c.goal,
			MetWithConfidence: r.CI95 != nil && r.CI95[1] <= c.goal})
	}
	return sums, comps
}

// markdown renders the summaries, the comparisons and every run.
func markdown(sums []DispatcherSummary, comps []Comparison, runs []RunResult) string {
	var b strings.Builder
	b.WriteString("| dispatcher | mean wait (s) | P90 wait (s) | max wait (s) | not admitted | Workload reserved on two workers | Workload admitted on two workers | Job created on two workers |\n|---|---|---|---|---|---|---|---|\n")
	for _, s := range sums {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %d | %d | %d |\n", s.Dispatcher, s.Mean, s.P90, s.Max, s.Unadmitted, s.ReservedOnTwo, s.AdmittedOnTwo, s.JobOnTwo)
	}
	b.WriteString("\n| statistic | wait-time / best built-in (per-seed ratio) | best built-in | goal | met |\n|---|---|---|---|---|\n")
	for _, c := range comps {
		met := "missed"
		switch {
		case c.MetWithConfidence:
			met = "met (whole CI below the goal)"
		case c.Met:
			met = "met by the estimate, not by the whole CI"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | ≤ %.2f | %s |\n", c.Statistic, c.Ratio, c.Against, c.Goal, met)
	}
	b.WriteString("\n| dispatcher | seed | offered CPU | admitted | mean | P90 | max | copied to | admitted on | background mean wait | wall (s) |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range runs {
		fmt.Fprintf(&b, "| %s | %d | %.2f | %d | %.2f | %.2f | %.2f | %s | %s | %s | %.0f |\n", r.Dispatcher, r.Seed, r.Offered, r.Stats.N,
			r.Stats.Mean, r.Stats.P90, r.Stats.Max, counts(r.CopiedTo), counts(r.AdmittedOn), bgMeans(r.BackgroundStats), r.WallSeconds)
	}
	return b.String()
}

func counts(m map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func bgMeans(m map[string]WaitStats) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %.2f (n %d)", k, m[k].Mean, m[k].N))
	}
	return strings.Join(parts, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
