package dispatcheval

import (
	"math"
	"slices"
)

// The headroom simulation asks how much any dispatcher that sends each Job
// to one worker could gain over AllAtOnce on a plan, whatever its forecasts:
// it replays the plan on idealized workers (no scheduler cycle, no API or
// MultiKueue latency, every service time as drawn) under two policies.
//
//   - race: AllAtOnce (and Incremental while it nominates every worker, as
//     it does with up to three). A Job's copy queues on every worker at its
//     arrival; the first worker to admit it wins, and the other copies are
//     removed lag seconds later. A copy admitted elsewhere within the lag
//     holds that worker's quota until it is removed.
//   - clairvoyant: one worker per Job, the one where it would be admitted
//     first, found by replaying each choice forward knowing every service
//     time and every future background arrival (not the future Jobs, whose
//     placement is not decided yet). Ties go to the worker with the most
//     free quota. No forecast can choose better one Job at a time.
//
// Each worker is one ClusterQueue of CPU quota under BestEffortFIFO, as in
// the evaluation: at every event its pending workloads are tried in
// creation order and each one that fits is admitted, later ones passing a
// head that does not fit.

// simPolicy is how the simulation dispatches Jobs.
type simPolicy int

const (
	simRace simPolicy = iota
	simClairvoyant
)

// simItem is a workload queued on a worker.
type simItem struct {
	// job is the index of the Job in Plan.Jobs, -1 for background.
	job     int
	cpu     int64
	service float64
}

// simRunning is a workload holding quota until end.
type simRunning struct {
	end float64
	cpu int64
	job int
}

type simWorker struct {
	quota, used int64
	queue       []simItem
	running     []simRunning
}

// simArrival is a plan arrival: to worker (background) or to the
// dispatcher (worker -1).
type simArrival struct {
	at     float64
	worker int
	item   simItem
}

// simRemoval removes the losing copies of job, at at.
type simRemoval struct {
	at  float64
	job int
}

type simState struct {
	policy simPolicy
	lag    float64
	// futureJobs is false in a clairvoyant look-ahead: Job arrivals are
	// skipped.
	futureJobs bool

	t        float64
	workers  []simWorker
	arrivals []simArrival
	next     int
	removals []simRemoval
	// admitted is each Job's admission time, -1 until admitted.
	admitted []float64
	// heldTwice counts the Jobs whose copy was admitted on a second worker
	// before the losing copies were removed.
	heldTwice int
}

// simResult is what a simulation of a plan measured.
type simResult struct {
	// Waits are the admitted Jobs' waits in seconds, in arrival order.
	Waits      []float64
	Unadmitted int
	HeldTwice  int
}

// simulate replays plan on the scenario's workers under policy (lag: the
// race's removal delay in seconds).
func simulate(s Scenario, plan Plan, policy simPolicy, lag float64) simResult {
	st := &simState{policy: policy, lag: lag, futureJobs: true, admitted: make([]float64, len(plan.Jobs))}
	for i := range st.admitted {
		st.admitted[i] = -1
	}
	for w, worker := range s.Workers {
		st.workers = append(st.workers, simWorker{quota: worker.CPUMilli})
		for _, a := range plan.Background[worker.Name] {
			st.arrivals = append(st.arrivals, simArrival{at: a.Offset.Seconds(), worker: w,
				item: simItem{job: -1, cpu: a.CPUMilli, service: a.Service.Seconds()}})
		}
	}
	for j, a := range plan.Jobs {
		st.arrivals = append(st.arrivals, simArrival{at: a.Offset.Seconds(), worker: -1,
			item: simItem{job: j, cpu: a.CPUMilli, service: a.Service.Seconds()}})
	}
	// Stable: at equal times, background (listed first) before Jobs.
	slices.SortStableFunc(st.arrivals, func(a, b simArrival) int {
		switch {
		case a.at < b.at:
			return -1
		case a.at > b.at:
			return 1
		}
		return 0
	})
	st.run(func() bool { return st.allAdmitted() })

	out := simResult{HeldTwice: st.heldTwice}
	for j, at := range st.admitted {
		if at < 0 {
			out.Unadmitted++
			continue
		}
		out.Waits = append(out.Waits, at-plan.Jobs[j].Offset.Seconds())
	}
	return out
}

func (st *simState) allAdmitted() bool {
	for _, at := range st.admitted {
		if at < 0 {
			return false
		}
	}
	return true
}

// run processes events in time order until done says so or nothing is
// left to happen.
func (st *simState) run(done func() bool) {
	for !done() {
		next := st.nextEvent()
		if math.IsInf(next, 1) {
			return
		}
		st.t = next
		st.process()
	}
}

// nextEvent is the time of the next arrival, end or removal (+Inf for
// none).
func (st *simState) nextEvent() float64 {
	next := math.Inf(1)
	for i := st.next; i < len(st.arrivals); i++ {
		if st.arrivals[i].worker >= 0 || st.futureJobs {
			next = st.arrivals[i].at
			break
		}
	}
	for _, w := range st.workers {
		for _, r := range w.running {
			next = min(next, r.end)
		}
	}
	for _, r := range st.removals {
		next = min(next, r.at)
	}
	return next
}

// process handles everything due at st.t: ends, removals, arrivals, then
// one admission pass per worker.
func (st *simState) process() {
	for w := range st.workers {
		wk := &st.workers[w]
		wk.running = slices.DeleteFunc(wk.running, func(r simRunning) bool {
			if r.end <= st.t {
				wk.used -= r.cpu
				return true
			}
			return false
		})
	}
	st.removals = slices.DeleteFunc(st.removals, func(r simRemoval) bool {
		if r.at <= st.t {
			st.removeCopies(r.job)
			return true
		}
		return false
	})
	for st.next < len(st.arrivals) && st.arrivals[st.next].at <= st.t {
		a := st.arrivals[st.next]
		st.next++
		switch {
		case a.worker >= 0:
			st.workers[a.worker].queue = append(st.workers[a.worker].queue, a.item)
		case st.futureJobs:
			st.dispatch(a.item)
		}
	}
	for w := range st.workers {
		st.admit(w)
	}
}

// admit admits, in queue order, every workload of worker w that fits.
func (st *simState) admit(w int) {
	wk := &st.workers[w]
	kept := wk.queue[:0]
	for _, it := range wk.queue {
		if it.cpu > wk.quota-wk.used {
			kept = append(kept, it)
			continue
		}
		end := st.t + it.service
		if it.job >= 0 {
			if first := st.admitted[it.job]; first < 0 {
				st.admitted[it.job] = st.t
				if st.lag > 0 {
					st.removals = append(st.removals, simRemoval{at: st.t + st.lag, job: it.job})
				} else {
					st.removeCopiesBut(it.job, w)
				}
			} else {
				// A losing copy: it holds quota here until its removal.
				st.heldTwice++
				end = first + st.lag
			}
		}
		wk.used += it.cpu
		wk.running = append(wk.running, simRunning{end: end, cpu: it.cpu, job: it.job})
	}
	wk.queue = kept
}

// removeCopies removes job's copies still queued on any worker (those
// admitted as losers end at their removal by themselves).
func (st *simState) removeCopies(job int) { st.removeCopiesBut(job, -1) }

// removeCopiesBut removes job's queued copies from every worker but keep.
func (st *simState) removeCopiesBut(job, keep int) {
	for w := range st.workers {
		if w == keep {
			continue
		}
		st.workers[w].queue = slices.DeleteFunc(st.workers[w].queue, func(it simItem) bool { return it.job == job })
	}
}

// dispatch queues a Job arriving now as the policy says.
func (st *simState) dispatch(it simItem) {
	if st.policy == simRace {
		for w := range st.workers {
			st.workers[w].queue = append(st.workers[w].queue, it)
		}
		return
	}
	best, bestAt, bestFree := -1, math.Inf(1), int64(0)
	for w := range st.workers {
		at := st.lookAhead(w, it)
		free := st.workers[w].quota - st.workers[w].used
		if at < bestAt || (at == bestAt && free > bestFree) || best < 0 {
			best, bestAt, bestFree = w, at, free
		}
	}
	st.workers[best].queue = append(st.workers[best].queue, it)
}

// lookAhead is when the Job it would be admitted if queued on worker w
// now, replaying the background (not later Jobs) forward; +Inf if never.
func (st *simState) lookAhead(w int, it simItem) float64 {
	c := st.clone()
	c.futureJobs = false
	c.workers[w].queue = append(c.workers[w].queue, it)
	for x := range c.workers {
		c.admit(x)
	}
	c.run(func() bool { return c.admitted[it.job] >= 0 })
	if c.admitted[it.job] < 0 {
		return math.Inf(1)
	}
	return c.admitted[it.job]
}

func (st *simState) clone() *simState {
	c := *st
	c.workers = make([]simWorker, len(st.workers))
	for w, wk := range st.workers {
		c.workers[w] = simWorker{quota: wk.quota, used: wk.used,
			queue: slices.Clone(wk.queue), running: slices.Clone(wk.running)}
	}
	c.removals = slices.Clone(st.removals)
	c.admitted = slices.Clone(st.admitted)
	return &c
}
