package tracker

import (
	"iter"
	"maps"
	"math/rand/v2"
	"time"

	"github.com/go-logr/logr"

	"github.com/kueue-waittime/kueue-waittime/pkg/earlyevents"
	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
	"github.com/kueue-waittime/kueue-waittime/pkg/ledger"
	"github.com/kueue-waittime/kueue-waittime/pkg/positions"
	"github.com/kueue-waittime/kueue-waittime/pkg/published"
	"github.com/kueue-waittime/kueue-waittime/pkg/queuestats"
)

// State is an estimator's state between refreshes: ClusterQueues are named
// by Q, cohorts by C, workloads by W ("namespace/name") and LocalQueues by
// L; S is what the caller keeps of a ClusterQueue's spec. Make it with
// [New]. It is not safe for concurrent use: the caller guards it, and
// every method, with its lock.
type State[Q ~string, C comparable, W ~string, L comparable, S any] struct {
	// Stats holds each ClusterQueue's statistics, its cohort's last
	// release of quota, the scheduler's busy time per cycle, and when each
	// running workload was seen admitted and, evicted by preemption,
	// evicted (see queuestats.Queues); its Shared is what the statistics
	// pool: admission and first-attempt latencies, and the calibrators of
	// the P50 and P90.
	Stats *queuestats.Queues[Q, C, W]
	// Early holds the events seen before warming (see ApplyOrDefer).
	Early earlyevents.Buffer[W, Q]
	// Book holds, per pending workload, when the estimator saw it arrive
	// and its line in the prediction ledger. API timestamps have
	// one-second resolution; these have the clock's, which matters for
	// short waits. Entries are removed at admission and deletion, so they
	// are bounded by the pending workloads. Book.Pending is kept by
	// namespace and name (positions.Tracked: a 56-byte entry per workload
	// and its share of a table of positions).
	Book ledger.Book[W, Q]
	// Changes holds the ClusterQueues an event changed since the last
	// refresh took them, and the workloads seen arriving (or requeued by a
	// preemption) that no refresh has published yet (see published.Changes
	// and published.Relist).
	Changes *published.Changes[Q, W]

	// specs holds what the snapshot does not carry of each ClusterQueue.
	specs map[Q]S
	// parked holds the workloads seen arriving in a LocalQueue that the
	// queue manager did not map to a ClusterQueue yet: its LocalQueue's
	// event may reach the manager after the workload's reaches the
	// estimator, and the manager then queues the workload without a new
	// event. Each refresh looks them up again (see Resolve); bounded by
	// the pending workloads whose LocalQueue is unknown.
	parked map[W]Arrival[L]
	log    logr.Logger
}

// New returns the state of a new estimator, with the statistics stats,
// logging what it records to log: every ClusterQueue is to be computed.
func New[Q ~string, C comparable, W ~string, L comparable, S any](stats *queuestats.Queues[Q, C, W], log logr.Logger) *State[Q, C, W, L, S] {
	return &State[Q, C, W, L, S]{
		Stats:   stats,
		Changes: published.NewChanges[Q, W](),
		specs:   make(map[Q]S),
		parked:  make(map[W]Arrival[L]),
		log:     log,
	}
}

// Arrival is a workload's arrival as the event handler saw it: its name
// (the object's strings), its LocalQueue, its creation timestamp, when
// the event came (At), its priority.
type Arrival[L comparable] struct {
	Name       positions.Name
	LocalQueue L
	Created    time.Time
	At         time.Time
	Priority   int32
}

// SetSpec records the spec of ClusterQueue cq and the cohort it names.
func (s *State[Q, C, W, L, S]) SetSpec(cq Q, spec S, cohort C) {
	s.specs[cq] = spec
	s.Stats.SetCohort(cq, cohort)
}

// Specs returns the specs recorded of the named ClusterQueues, in order
// (the zero S for one without).
func (s *State[Q, C, W, L, S]) Specs(names []Q) []S {
	specs := make([]S, len(names))
	for i, name := range names {
		specs[i] = s.specs[name]
	}
	return specs
}

// ForgetClusterQueue forgets a deleted ClusterQueue: its spec, its
// statistics and its unpublished arrivals; it marks it changed.
func (s *State[Q, C, W, L, S]) ForgetClusterQueue(cq Q) {
	delete(s.specs, cq)
	s.Stats.Forget(cq)
	s.Changes.Mark(cq)
	s.Changes.ForgetClusterQueue(cq)
}

// Arrive records that workload key arrived in cq as a says.
func (s *State[Q, C, W, L, S]) Arrive(key W, cq Q, a Arrival[L]) {
	s.Book.Track(key, a.Name, ledger.ArrivalOffset(a.Created, a.At))
	s.Changes.Unlisted[key] = published.Arrival[Q]{ClusterQueue: cq, At: a.At.UnixNano()}
	s.Stats.Of(cq).ObserveArrival(a.At, a.Priority)
	s.log.V(3).Info("Wait time estimator observed an arrival", "workload", key, "clusterQueue", cq)
}

// Park keeps the arrival of a workload whose LocalQueue the queue manager
// does not map to a ClusterQueue (see State.parked); the caller asks for
// a refresh, which looks it up again (see Resolve).
func (s *State[Q, C, W, L, S]) Park(key W, a Arrival[L]) {
	s.parked[key] = a
	s.log.V(3).Info("Wait time estimator parked an arrival in an unknown LocalQueue", "workload", key, "localQueue", a.LocalQueue)
}

// Parked returns a copy of the parked arrivals, nil when none.
func (s *State[Q, C, W, L, S]) Parked() map[W]Arrival[L] {
	if len(s.parked) == 0 {
		return nil
	}
	return maps.Clone(s.parked)
}

// Found is a parked arrival whose LocalQueue the queue manager now maps
// to ClusterQueue ClusterQueue (see Lookup).
type Found[Q, W ~string, L comparable] struct {
	Key          W
	ClusterQueue Q
	Arrival      Arrival[L]
}

// Lookup looks up again, with lookup, the LocalQueue of each of the
// parked arrivals (Parked's copy): it returns those now mapped to a
// ClusterQueue, and whether one parked less than maxStaleness before now
// is still unmapped, for which the next refresh period looks again (after
// that, only refreshes that run anyway do: a LocalQueue that never comes
// costs no refreshes of its own). It reads no State: the caller runs it,
// and the queue manager's lookups, without its lock.
func Lookup[Q, W ~string, L comparable](parked map[W]Arrival[L], lookup func(L) (Q, bool), now time.Time, maxStaleness time.Duration) (
	found []Found[Q, W, L], again bool) {
	for key, a := range parked {
		if cq, ok := lookup(a.LocalQueue); ok {
			found = append(found, Found[Q, W, L]{Key: key, ClusterQueue: cq, Arrival: a})
		} else if now.Sub(a.At) < maxStaleness {
			again = true
		}
	}
	return found, again
}

// Resolve records, in its ClusterQueue, the arrival f found for a parked
// workload, at the time it was seen arriving, unless it was parked again,
// admitted or deleted since Parked's copy: the arrival waits for the warm
// start as any other.
func (s *State[Q, C, W, L, S]) Resolve(f Found[Q, W, L]) {
	s.ApplyOrDefer(earlyevents.Event[W, Q]{Key: f.Key, ClusterQueue: f.ClusterQueue, Kind: earlyevents.Arrival, Apply: func() {
		if s.parked[f.Key] != f.Arrival {
			return
		}
		delete(s.parked, f.Key)
		s.Arrive(f.Key, f.ClusterQueue, f.Arrival)
	}})
}

// ApplyOrDefer marks the event's ClusterQueue changed and applies the
// event now, or keeps it for the warm start (see Warm), and says which: a
// deferred event's apply runs later, on another goroutine.
func (s *State[Q, C, W, L, S]) ApplyOrDefer(ev earlyevents.Event[W, Q]) (applied bool) {
	s.Changes.Mark(ev.ClusterQueue)
	return s.Early.ApplyOrKeep(ev)
}

// Replay applies the events kept before warming, but those listed holds
// already (nil: none), and makes the state warm.
func (s *State[Q, C, W, L, S]) Replay(listed map[W]earlyevents.Listed) {
	kept, applied, dropped := s.Early.Warm(listed)
	if kept > 0 || dropped > 0 {
		s.log.V(2).Info("Wait time estimator replayed the events seen before it was warm",
			"events", kept, "applied", applied, "dropped", dropped)
	}
}

// Warm seeds the statistics of each ClusterQueue of per, tracks the
// pending workloads listed (see ledger.Book.TrackListed), replays the
// events kept before warming, but those listed holds, and marks every
// ClusterQueue changed: what a warm start read of the informer's cache.
func (s *State[Q, C, W, L, S]) Warm(per map[Q]*queuestats.Seeds, pending []W, listed map[W]earlyevents.Listed) {
	for cq, seeds := range per {
		s.Stats.Of(cq).Seed(seeds)
	}
	s.Book.TrackListed(pending)
	s.Replay(listed)
	s.Changes.MarkAll()
}

// Admit records admission a, once per admission, and scores its ledger
// line (see ledger.Admit); the first sighting forgets the workload's
// parked arrival and marks its ClusterQueue changed.
func (s *State[Q, C, W, L, S]) Admit(a ledger.Admitted[W, Q]) (ledger.Score[W, Q], ledger.Outcome) {
	score, outcome := ledger.Admit(&s.Book, s.Stats, a)
	if outcome != ledger.AlreadyRecorded {
		delete(s.parked, a.Key)
		s.Changes.Mark(a.ClusterQueue)
	}
	return score, outcome
}

// Delete forgets the deleted workload key (see ledger.Delete), which was
// in ClusterQueue queue if known, and marks what it changed: queue, or
// every ClusterQueue when the workload was tracked in one no longer
// known. It returns the ClusterQueue of its ledger line and whether that
// line is left unscored.
func (s *State[Q, C, W, L, S]) Delete(key W, queue Q, known bool) (Q, bool) {
	tracked, cq, unscored := ledger.Delete(&s.Book, s.Stats, key)
	switch {
	case known:
		s.Changes.Mark(queue)
	case tracked:
		// Tracked, but its ClusterQueue is no longer known: it may be in
		// any of them.
		s.Changes.MarkAll()
	}
	delete(s.parked, key)
	return cq, unscored
}

// End records the end of workload key's run in cq seen at now (see
// queuestats.Queues.End). A preempted workload (named name, created at
// created) re-enters the queue now, with a new ledger line to come;
// Kueue requeues it with a backoff, not as a first attempt.
func (s *State[Q, C, W, L, S]) End(key W, cq Q, now time.Time, end queuestats.End, name positions.Name, created time.Time) {
	service, observed := s.Stats.End(key, cq, now, end)
	if observed {
		s.log.V(3).Info("Wait time estimator observed a completion", "workload", key, "clusterQueue", cq, "serviceTime", service.End.Sub(service.Start))
	}
	if end.Preempted {
		s.Book.Track(key, name, ledger.ArrivalOffset(created, now)|ledger.TriedBit)
		s.Changes.Unlisted[key] = published.Arrival[Q]{ClusterQueue: cq, At: now.UnixNano()}
		s.log.V(3).Info("Wait time estimator observed a preemption", "workload", key, "clusterQueue", cq)
	}
}

// MarkTried sets ledger.TriedBit on the pending workload named name; it
// does nothing to one it does not track.
func (s *State[Q, C, W, L, S]) MarkTried(name positions.Name) {
	if p := s.Book.Pending.Find(name); p != nil {
		p.Arrived |= ledger.TriedBit
	}
}

// Inputs is what a refresh of one ClusterQueue reads from the state,
// copied under the caller's lock.
type Inputs[W comparable, S any] struct {
	// Admitted is when each of its running workloads was seen admitted,
	// for those that were.
	Admitted    map[W]time.Time
	View        queuestats.View
	Spec        S
	CyclePeriod float64
	// Seed seeds the roll's random numbers, and the what-if forecasts' on
	// this refresh's state (see engine.Scene).
	Seed [2]uint64
}

// Inputs copies what the refresh at now of ClusterQueue cq needs: the
// admission times of its running workloads (the n keys of running), its
// statistics' view with the prior mean service time priorMeanService, its
// spec, the cycle period and a seed drawn from rng. It marks which of the
// untried candidates are (see ledger.Book.MarkUntried; names are the
// pending workloads' names), and hands writer the workloads tracked
// without a ledger line since it last took them (see ledger.Writer).
func (s *State[Q, C, W, L, S]) Inputs(now time.Time, cq Q, running iter.Seq[W], n int, names []positions.Name, untried []engine.Candidate,
	writer *ledger.Writer[W, Q], priorMeanService float64, rng *rand.Rand) Inputs[W, S] {
	writer.TakeUnledgered()
	s.Book.MarkUntried(names, untried, now)
	in := Inputs[W, S]{Admitted: s.Stats.AdmittedTimes(running, n)}
	in.View = s.Stats.RollView(cq, priorMeanService)
	in.Spec = s.specs[cq]
	in.CyclePeriod = s.Stats.CyclePeriod()
	in.Seed = [2]uint64{rng.Uint64(), rng.Uint64()}
	return in
}
