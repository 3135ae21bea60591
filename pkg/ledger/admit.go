package ledger

import (
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/positions"
	"github.com/kueue-waittime/kueue-waittime/pkg/queuestats"
)

// Admitted is an admission of a pending workload as the caller saw it:
// the workload Key of ClusterQueue, its Priority, its creation timestamp
// (Created) and when its current wait began (QueuedSince: its creation or
// its last requeue), when it was seen admitted (At) and by whom: the
// Workload informer's update that carries the quota reservation, which
// every replica has, if Informer, else the scheduler's hook, called once
// its write of the admission returned (only the replica that schedules
// has it).
type Admitted[W, Q ~string] struct {
	Key          W
	ClusterQueue Q
	Priority     int32
	Created      time.Time
	QueuedSince  time.Time
	At           time.Time
	Informer     bool
}

// Outcome is what recording an admission did.
type Outcome uint8

const (
	// Scored: the workload's ledger line was scored.
	Scored Outcome = iota
	// Unscored: it had no ledger line (no estimate was published for it).
	Unscored
	// AlreadyRecorded: this admission was recorded before (by the
	// scheduler's call or the informer's update, whichever came first).
	AlreadyRecorded
)

// UnscoredReason says why a workload left the ledger unscored.
type UnscoredReason string

const (
	// AdmittedBeforeEstimate: admitted before any estimate was published
	// for it (it waited less than a refresh period, or the estimator had
	// not seen it arrive): Admit's Unscored.
	AdmittedBeforeEstimate UnscoredReason = "AdmittedBeforeEstimate"
	// DeletedBeforeAdmission: deleted while pending, after an estimate was
	// published for it.
	DeletedBeforeAdmission UnscoredReason = "DeletedBeforeAdmission"
)

// Admit records admission a in the statistics qs and scores the
// workload's line of book, once per admission: the first sighting (the
// scheduler's or the informer's) is recorded and scored, and the workload
// leaves book. A later sighting of a workload already recorded as
// admitted (and not finished or preempted since) changes only the moment
// it counts as admitted from, for the age of what runs and its service
// time (see queuestats.Queues.Admit): the informer's sighting, which every
// replica has at about the same moment, replaces the scheduler's earlier
// one, so that the replicas' forecasts do not differ by the lag of the
// watch event. The wait scored and fed to the statistics runs from
// QueuedSince, or from the arrival seen, if later; a score feeds the
// ClusterQueue's realized coverage and, with a forecast, its calibration.
// The caller holds the lock that guards book and qs.
func Admit[W, Q ~string, C comparable](book *Book[W, Q], qs *queuestats.Queues[Q, C, W], a Admitted[W, Q]) (Score[W, Q], Outcome) {
	if qs.Admit(a.Key, a.ClusterQueue, a.At, a.Informer) {
		return Score[W, Q]{}, AlreadyRecorded
	}
	since := a.QueuedSince
	p, _ := book.Pending.Get(positions.NameOfKey(a.Key))
	arrived, hasArrival := p.ArrivedAt(a.Created)
	if hasArrival && arrived.After(since) {
		since = arrived
	}
	book.Forget(a.Key)
	qs.ObserveAdmission(a.ClusterQueue, queuestats.Admission{At: a.At, QueuedSince: since, Arrived: arrived, HasArrival: hasArrival,
		Untried: p.Untried(), Priority: a.Priority})
	score, ok := scoreOf(p, a.Key, a.ClusterQueue, a.Priority, since, a.At)
	if !ok {
		return score, Unscored
	}
	s := qs.Of(a.ClusterQueue)
	s.ObserveCoverage(a.At, score.P50.OK, score.Actual <= score.P50.Wait, score.P90.OK, score.Actual <= score.P90.Wait)
	if score.Forecast.OK {
		qs.Shared().ObserveCalibration(s, a.At, p.Stamp.Calibration, a.Priority, float64(p.P50), float64(p.P90), score.Actual.Seconds())
	}
	return score, Scored
}

// Delete forgets the deleted workload key in book and qs. It says whether
// either tracked it and, for a workload deleted pending with a ledger line
// (never to be scored: DeletedBeforeAdmission), the ClusterQueue of its
// line.
func Delete[W, Q ~string, C comparable](book *Book[W, Q], qs *queuestats.Queues[Q, C, W], key W) (tracked bool, cq Q, unscored bool) {
	p, pending := book.Pending.Get(positions.NameOfKey(key))
	admitted := qs.ForgetWorkload(key)
	book.Forget(key)
	if pending && p.Stamp != nil {
		return true, p.Stamp.ClusterQueue, true
	}
	return pending || admitted, cq, false
}
