package estimator

import (
	"maps"
	"math"
	"slices"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
	"github.com/kueue-waittime/kueue-waittime/pkg/ledger"
)

// The prediction ledger's lines, their stamps and scores are
// [ledger]'s, with Kueue's names of workloads and ClusterQueues.
type (
	// Predictor names one of the predictions the ledger scores.
	Predictor = ledger.Predictor
	// Prediction is one predictor's answer for the wait that remained
	// from a Score's EstimatedAt (see [ledger.Prediction]).
	Prediction = ledger.Prediction
	// Score is the ledger's verdict on one workload, made at its
	// admission (see [ledger.Score]).
	Score = ledger.Score[workload.Reference, kueue.ClusterQueueReference]

	ledgerStamp     = ledger.Stamp[kueue.ClusterQueueReference]
	trackedWorkload = ledger.Line[kueue.ClusterQueueReference]
)

// The predictors, as [ledger.Predictor] defines them.
const (
	PredictorForecast = ledger.PredictorForecast
	PredictorEMA      = ledger.PredictorEMA
	PredictorPaper    = ledger.PredictorPaper
	PredictorWhitt    = ledger.PredictorWhitt
)

// Predictors lists every Predictor, in the order reports show them.
var Predictors = ledger.Predictors

// newLedgerStamp builds the stamp of a refresh of one ClusterQueue from
// the model it published and the calibration it applied.
func newLedgerStamp(m *QueueModel, method Method, cal engine.Calibration) *ledgerStamp {
	s := &ledgerStamp{ClusterQueue: m.ClusterQueue, At: int64(eventTimeOf(m.At)), Method: method,
		EMA: math.NaN(), Paper: math.NaN(), Whitt: math.NaN(), Calibration: cal}
	if m.HasEMA {
		s.EMA = m.EMAWait.Seconds()
	}
	if m.HasRates && m.Stable {
		s.Paper, s.Whitt = m.MeanWait.Seconds(), m.WhittMeanWait.Seconds()
	}
	return s
}

// ledgerBatch bounds how many ledger lines a refresh writes per hold of the
// estimator's lock, which the scheduler's hooks take too.
const ledgerBatch = 256

// trackPending registers key, named name, as pending since the arrival
// offset arrived (see ledger.Line.Arrived), with no ledger line yet.
// The tracked entry keeps name's strings: the Workload object's own, where
// the caller has it. Under e.mu.
func (e *Estimator) trackPending(key workload.Reference, name workloadName, arrived uint32) {
	e.pending.Set(name, trackedWorkload{Arrived: arrived})
	e.unledgered[key] = struct{}{}
}

// forgetPending forgets the pending workload key (admitted or deleted).
// Under e.mu.
func (e *Estimator) forgetPending(key workload.Reference) {
	e.pending.Remove(nameFromReference(key))
	delete(e.unledgered, key)
}

// ledgerWriter records, during a refresh, the first published estimate of
// each pending workload that has no ledger line yet. Only workloads the
// event handlers (or the warm start) registered as pending get a line: a
// workload deleted meanwhile is never brought back. One writer serves a
// whole refresh; call restore at the end.
//
// The writer looks at the workloads of Estimator.unledgered only, which
// it takes as each ClusterQueue is rolled (takeUnledgeredLocked): a
// workload whose arrival the estimator recorded before the roll of its
// ClusterQueue gets this refresh's estimate, one recorded later the next
// refresh's. Every other pending workload has its line already, and
// costs the refresh nothing here.
type ledgerWriter struct {
	e *Estimator
	// wanted holds the keys taken from Estimator.unledgered and not
	// stamped yet. It is the refresh's own: the event handlers change
	// only Estimator.unledgered, so a key here may have been admitted or
	// deleted since; flush and restore check Estimator.pending.
	wanted map[workload.Reference]struct{}
	n      int
	names  [ledgerBatch]workloadName
	// buf holds the key a lookup is built in.
	buf   []byte
	lines [ledgerBatch]trackedWorkload
}

// takeUnledgeredLocked moves the keys of Estimator.unledgered into the
// writer: in one swap of maps when the writer holds none (the first
// ClusterQueue of a refresh), else one by one (the arrivals since the
// last ClusterQueue). Under e.mu.
func (w *ledgerWriter) takeUnledgeredLocked() {
	e := w.e
	if len(e.unledgered) == 0 {
		return
	}
	if len(w.wanted) == 0 {
		w.wanted, e.unledgered = e.unledgered, make(map[workload.Reference]struct{})
		return
	}
	for key := range e.unledgered {
		w.wanted[key] = struct{}{}
	}
	// A new map: a cleared one would keep the buckets of a burst.
	e.unledgered = make(map[workload.Reference]struct{})
}

// wants reports whether the workload named name may still need its line.
func (w *ledgerWriter) wants(name workloadName) bool {
	if len(w.wanted) == 0 {
		return false
	}
	w.buf = appendReference(w.buf[:0], name)
	_, ok := w.wanted[workload.Reference(w.buf)]
	return ok
}

// add queues the line of a Quotable pending workload that wants one.
func (w *ledgerWriter) add(name workloadName, line trackedWorkload) {
	w.names[w.n], w.lines[w.n] = name, line
	w.n++
	if w.n == ledgerBatch {
		w.flush()
	}
}

// flush writes the queued lines of the workloads still pending without
// one.
func (w *ledgerWriter) flush() {
	if w.n == 0 {
		return
	}
	defer w.e.lockForRefresh().unlock()
	for i := range w.n {
		if p := w.e.pending.Find(w.names[i]); p != nil && p.Stamp == nil {
			line := w.lines[i]
			line.Arrived = p.Arrived
			*p = line
		}
		// Stamped now, earlier or gone: it needs nothing more. A
		// preemption that requeues it later registers it again.
		w.buf = appendReference(w.buf[:0], w.names[i])
		delete(w.wanted, workload.Reference(w.buf))
		delete(w.e.unledgered, workload.Reference(w.buf))
	}
	clear(w.names[:w.n])
	w.n = 0
}

// restore flushes the writer and puts back into Estimator.unledgered, a
// batch per hold of the estimator's lock, the keys it took and did not
// stamp that are still pending without a line (a workload no recomputed
// ClusterQueue listed: its ClusterQueue was not recomputed, its roll
// failed, the queue manager does not list it, or it is inactive).
func (w *ledgerWriter) restore() {
	w.flush()
	keys := slices.Collect(maps.Keys(w.wanted))
	w.wanted = nil
	for len(keys) > 0 {
		n := min(len(keys), ledgerBatch)
		w.restoreLocked(keys[:n])
		keys = keys[n:]
	}
}

// restoreLocked puts back those of keys still pending without a line,
// under one hold of the estimator's lock.
func (w *ledgerWriter) restoreLocked(keys []workload.Reference) {
	defer w.e.lockForRefresh().unlock()
	for _, key := range keys {
		if p, ok := w.e.pending.Get(nameFromReference(key)); ok && p.Stamp == nil {
			w.e.unledgered[key] = struct{}{}
		}
	}
}
