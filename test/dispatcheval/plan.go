// Package dispatcheval measures MultiKueue's dispatchers against each other:
// the same seeded arrival sequence of Jobs, submitted to a manager cluster,
// runs once under each of Kueue's built-in dispatchers (AllAtOnce and
// Incremental) and once under the wait-time dispatcher, on a manager and
// worker control planes of different capacity and different background load
// (workloads submitted directly to the workers). Each workload's wait is the
// time from its Workload's creation on the manager (seen on a watch) to its
// quota reservation on the worker that admits it (seen on a watch of that
// worker).
//
// Nothing runs the pods (there is no kubelet on envtest): a workload
// reserved on a worker is marked Finished there after its service time, as
// the job integration would when its Job succeeds; MultiKueue then finishes
// the manager's copy.
//
// The evaluation itself (dispatch_eval_test.go) runs only when
// DISPATCH_EVAL_OUT names a results directory (make eval-dispatch).
package dispatcheval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Worker is one worker cluster of a scenario.
type Worker struct {
	Name string
	// CPUMilli is its ClusterQueue's CPU quota.
	CPUMilli int64
	// BackgroundRate is the Poisson rate (per second) of the workloads
	// submitted directly to it, each of BackgroundCPUMilli with an
	// exponential service time of mean BackgroundMeanService.
	BackgroundRate        float64
	BackgroundCPUMilli    int64
	BackgroundMeanService time.Duration
}

// Scenario is what a plan is drawn from.
type Scenario struct {
	Workers []Worker
	// Jobs is how many Jobs are submitted to the manager, as a Poisson
	// stream of JobRate per second starting after Warmup (during which
	// only the background runs, so that the workers' estimators observe
	// completions and queues form).
	Jobs    int
	JobRate float64
	Warmup  time.Duration
	// JobCPUMilli are the Jobs' CPU requests, drawn uniformly.
	JobCPUMilli []int64
	// MeanService is the mean of the Jobs' exponential service times.
	MeanService time.Duration
	// MinService and MaxService bound every service time (Jobs' and
	// background's): a draw outside is clamped.
	MinService, MaxService time.Duration
}

// Arrival is one workload to submit.
type Arrival struct {
	Name string
	// Offset is when it is submitted, from the start of the run.
	Offset   time.Duration
	CPUMilli int64
	// Service is how long it runs once it holds a quota reservation.
	Service time.Duration
}

// Plan is a run's arrivals: the Jobs to the manager and each worker's
// background.
type Plan struct {
	Seed       uint64
	Jobs       []Arrival
	Background map[string][]Arrival
	// End is the last submission's offset.
	End time.Duration
}

// Validate reports a scenario that cannot be drawn from.
func (s Scenario) Validate() error {
	switch {
	case len(s.Workers) == 0:
		return fmt.Errorf("dispatcheval: no workers")
	case s.Jobs <= 0 || s.JobRate <= 0:
		return fmt.Errorf("dispatcheval: jobs %d at rate %v: both must be positive", s.Jobs, s.JobRate)
	case len(s.JobCPUMilli) == 0:
		return fmt.Errorf("dispatcheval: no job CPU sizes")
	case s.MeanService <= 0 || s.MinService <= 0 || s.MaxService < s.MinService:
		return fmt.Errorf("dispatcheval: service times mean %v in [%v, %v]: mean and bounds must be positive, max ≥ min", s.MeanService, s.MinService, s.MaxService)
	}
	for _, w := range s.Workers {
		if w.CPUMilli <= 0 || w.BackgroundRate < 0 || (w.BackgroundRate > 0 && (w.BackgroundCPUMilli <= 0 || w.BackgroundMeanService <= 0)) {
			return fmt.Errorf("dispatcheval: worker %s: quota and background must be positive", w.Name)
		}
	}
	return nil
}

// Draw draws the plan of a seed: the same seed gives the same plan, so
// every dispatcher sees the same arrivals, sizes and service times. The
// background spans the warm-up and the Jobs' arrivals.
func (s Scenario) Draw(seed uint64) (Plan, error) {
	if err := s.Validate(); err != nil {
		return Plan{}, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x6d6b2d6576616c)) // "mk-eval"
	service := func(mean time.Duration) time.Duration {
		d := time.Duration(rng.ExpFloat64() * float64(mean))
		return min(max(d, s.MinService), s.MaxService).Round(time.Millisecond)
	}
	p := Plan{Seed: seed, Background: map[string][]Arrival{}}
	t := s.Warmup
	for i := range s.Jobs {
		t += time.Duration(rng.ExpFloat64() / s.JobRate * float64(time.Second))
		p.Jobs = append(p.Jobs, Arrival{
			Name:     fmt.Sprintf("j%03d", i),
			Offset:   t.Round(time.Millisecond),
			CPUMilli: s.JobCPUMilli[rng.IntN(len(s.JobCPUMilli))],
			Service:  service(s.MeanService),
		})
	}
	p.End = t.Round(time.Millisecond)
	for _, w := range s.Workers {
		if w.BackgroundRate == 0 {
			continue
		}
		// Each worker's background from its own stream, so that adding a
		// worker does not change another's.
		wr := rand.New(rand.NewPCG(seed, hash(w.Name)))
		var bt time.Duration
		for i := 0; ; i++ {
			bt += time.Duration(wr.ExpFloat64() / w.BackgroundRate * float64(time.Second))
			if bt > p.End {
				break
			}
			d := time.Duration(wr.ExpFloat64() * float64(w.BackgroundMeanService))
			p.Background[w.Name] = append(p.Background[w.Name], Arrival{
				Name:     fmt.Sprintf("bg-%s-%03d", w.Name, i),
				Offset:   bt.Round(time.Millisecond),
				CPUMilli: w.BackgroundCPUMilli,
				Service:  min(max(d, s.MinService), s.MaxService).Round(time.Millisecond),
			})
		}
	}
	return p, nil
}

// hash is FNV-1a of s.
func hash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := range len(s) {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// Offered is the CPU-seconds per second a plan offers to all workers
// together over its span (Jobs and background), for the report.
func (p Plan) Offered() float64 {
	if p.End <= 0 {
		return 0
	}
	var work float64
	add := func(as []Arrival) {
		for _, a := range as {
			work += float64(a.CPUMilli) / 1000 * a.Service.Seconds()
		}
	}
	add(p.Jobs)
	for _, bg := range p.Background {
		add(bg)
	}
	return work / p.End.Seconds()
}

// sortedCopy returns v sorted ascending.
func sortedCopy(v []float64) []float64 {
	out := slices.Clone(v)
	slices.Sort(out)
	return out
}

// quantile is the q-quantile of ascending values by linear interpolation
// between order statistics (Hyndman–Fan type 7, numpy's default): position
// h = (n−1)q, value x[⌊h⌋] + (h−⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋]). NaN for no values.
func quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	h := float64(n-1) * q
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}
