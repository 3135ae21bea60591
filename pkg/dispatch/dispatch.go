// Package dispatch chooses the MultiKueue worker clusters that a manager
// cluster's workload is nominated to, from each worker's forecast of how
// long the workload would wait there (its answer to a WaitTimeReview).
//
// It imports nothing of Kueue or Kubernetes and reads no clock: the caller
// (the wait-time dispatcher in Kueue's MultiKueue controllers) asks the
// workers, keeps the rounds and passes the time in.
package dispatch

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// Answer is one worker's forecast for the workload, as its WaitTimeReview
// returned it.
type Answer struct {
	// Unfeasible is true when the worker's ClusterQueue, as configured, can
	// never admit the workload.
	Unfeasible bool
	// P50 and P90 are the median and the 90th percentile of the wait for
	// quota on the worker. Nil when the worker gave none (an Unfeasible
	// workload, or a method without a wait distribution).
	P50, P90 *time.Duration
	// At is when the worker answered.
	At time.Time
}

// Worker is one worker cluster of the workload's MultiKueueConfig.
type Worker struct {
	Name string
	// Answer is nil when the worker did not answer: the request failed,
	// timed out, or the worker is not connected.
	Answer *Answer
}

// Round is what one nomination round decides from.
type Round struct {
	// Workers are the workers of the MultiKueueConfig, in its order.
	Workers []Worker
	// Nominated are the workers nominated in earlier rounds: they stay
	// nominated and none is added again.
	Nominated []string
	// Now is the time of the decision.
	Now time.Time
	// Timeout is how old an answer may be: one given before Now-Timeout is
	// taken as no answer (a caller that keeps answers between rounds must
	// not rank workers by old ones). It must be positive.
	Timeout time.Duration
	// StepSize is how many workers that did not answer are added in one
	// round, as Kueue's Incremental dispatcher adds workers (3 by default
	// there). It must be at least 1.
	StepSize int
	// ConfigOrder keeps the workers that did not answer in the
	// MultiKueueConfig's order, as the Incremental dispatcher does with the
	// MultiKueueIncrementalDispatcherRespectConfigOrder gate; otherwise they
	// are taken by name, as it does by default.
	ConfigOrder bool
}

// Basis says on what a round added its workers.
type Basis string

const (
	// BasisExpectedWait: the added workers are the ones whose fresh answer
	// gives the shortest wait.
	BasisExpectedWait Basis = "ExpectedWait"
	// BasisIncremental: no worker left to add answered Quotable in time;
	// the added workers are ones that did not answer, taken as Kueue's
	// Incremental dispatcher takes workers.
	BasisIncremental Basis = "Incremental"
	// BasisNone: nothing is added (every worker is nominated already, or
	// every one left answered Unfeasible).
	BasisNone Basis = "None"
)

// Decision is the outcome of a round.
type Decision struct {
	// Add are the workers to nominate in addition to Round.Nominated.
	Add []string
	// Basis says why these.
	Basis Basis
}

// ErrInvalidRound is wrapped by every error of [Nominate].
var ErrInvalidRound = errors.New("dispatch: invalid round")

// Nominate decides which workers a round adds to the workload's nominated
// workers. Of the workers not nominated yet:
//
//  1. A worker whose answer is fresh (given at most Timeout before Now; one
//     dated after Now counts as fresh) and Quotable is a candidate. The
//     best candidate is the one with the lowest P50, ties broken by the
//     lowest P90; it is added, with every candidate equal to it in both
//     and, as a hedge, every candidate whose P50 is at most the best one's
//     P90: its median wait lies within the best one's forecast range, so
//     it is about as likely to admit first, and MultiKueue keeps the copy
//     that admits first. A candidate clearly slower (its P50 past the
//     best's P90) is left to a later round. A missing P50 or P90 ranks
//     after every given one: the wait is unknown, not short, and it hedges
//     nothing. Basis: BasisExpectedWait.
//  2. An Unfeasible answer is never added, in this round, on any basis.
//  3. When there is no candidate, the workers that did not answer — no
//     answer at all, or only one older than Timeout, which is taken as no
//     answer and so never ranks — are added as Kueue's Incremental
//     dispatcher adds workers: the first StepSize of them, by name (or in
//     the configured order with ConfigOrder). Basis: BasisIncremental.
//     They come after every answered Quotable worker because a known wait
//     is better than an unknown one, and are not left out altogether
//     because the Incremental dispatcher would send the workload there: a
//     worker that cannot answer (an old Kueue, its visibility API down, a
//     slow network) still gets workloads, and none is stranded when no
//     worker answers.
//  4. Otherwise nothing is added. Basis: BasisNone.
//
// Workers already nominated are kept, as the Incremental dispatcher keeps
// them: the workload holds a place in their queues that a later round
// would throw away. So a workload that a round sent to the fastest worker
// and that was not admitted there by the next round is also sent to the
// next fastest, and so on.
//
// Bad input (a Timeout or StepSize out of range, an empty or repeated
// worker name, a negative wait, a P90 below its P50) is an error wrapping
// ErrInvalidRound.
func Nominate(r Round) (Decision, error) {
	if err := validate(r); err != nil {
		return Decision{}, err
	}
	nominated := make(map[string]bool, len(r.Nominated))
	for _, name := range r.Nominated {
		nominated[name] = true
	}
	var candidates []candidate
	var silent []string
	for _, w := range r.Workers {
		if nominated[w.Name] {
			continue
		}
		switch a := w.Answer; {
		case a == nil || r.Now.Sub(a.At) > r.Timeout:
			silent = append(silent, w.Name)
		case a.Unfeasible:
		default:
			candidates = append(candidates, candidate{name: w.Name, p50: orInfinity(a.P50), p90: orInfinity(a.P90)})
		}
	}
	if len(candidates) > 0 {
		best := slices.MinFunc(candidates, compareWaits)
		var add []string
		for _, c := range candidates {
			if compareWaits(c, best) == 0 || within(c, best) {
				add = append(add, c.name)
			}
		}
		return Decision{Add: add, Basis: BasisExpectedWait}, nil
	}
	if len(silent) > 0 {
		if !r.ConfigOrder {
			slices.Sort(silent)
		}
		return Decision{Add: silent[:min(len(silent), r.StepSize)], Basis: BasisIncremental}, nil
	}
	return Decision{Basis: BasisNone}, nil
}

// candidate is a worker that answered Quotable in time, with its waits;
// a missing one is math.MaxInt64.
type candidate struct {
	name     string
	p50, p90 time.Duration
}

// within reports whether c's median wait is within best's forecast range
// (c.p50 ≤ best.p90), both known.
func within(c, best candidate) bool {
	return c.p50 != math.MaxInt64 && best.p90 != math.MaxInt64 && c.p50 <= best.p90
}

func compareWaits(a, b candidate) int {
	return cmp.Or(cmp.Compare(a.p50, b.p50), cmp.Compare(a.p90, b.p90))
}

func orInfinity(d *time.Duration) time.Duration {
	if d == nil {
		return math.MaxInt64
	}
	return *d
}

func validate(r Round) error {
	if r.Timeout <= 0 {
		return fmt.Errorf("%w: timeout %v is not positive", ErrInvalidRound, r.Timeout)
	}
	if r.StepSize < 1 {
		return fmt.Errorf("%w: step size %d is below 1", ErrInvalidRound, r.StepSize)
	}
	seen := make(map[string]bool, len(r.Workers))
	for i, w := range r.Workers {
		if w.Name == "" {
			return fmt.Errorf("%w: worker %d has no name", ErrInvalidRound, i)
		}
		if seen[w.Name] {
			return fmt.Errorf("%w: worker %q is listed twice", ErrInvalidRound, w.Name)
		}
		seen[w.Name] = true
		if w.Answer == nil {
			continue
		}
		if err := w.Answer.Validate(); err != nil {
			return fmt.Errorf("%w: worker %q: %w", ErrInvalidRound, w.Name, err)
		}
	}
	return nil
}

// Validate returns an error if the answer cannot be ranked: a negative wait,
// or a P90 below its P50. A caller that builds answers from what workers
// returned checks each with it, to take a bad one as no answer rather than
// fail the round.
func (a *Answer) Validate() error {
	if (a.P50 != nil && *a.P50 < 0) || (a.P90 != nil && *a.P90 < 0) {
		return errors.New("a negative wait")
	}
	if a.P50 != nil && a.P90 != nil && *a.P90 < *a.P50 {
		return fmt.Errorf("a P90 %v below its P50 %v", *a.P90, *a.P50)
	}
	return nil
}
