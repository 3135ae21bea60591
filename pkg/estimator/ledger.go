package estimator

import (
	"maps"
	"math"
	"slices"
	"time"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
)

// The prediction ledger keeps, for every pending workload, the first wait
// estimate the estimator published for it and what each baseline said at
// that same refresh, from the same state. At the workload's admission every
// predictor is scored against the wait that remained from that moment, so
// all of them are judged on the same workloads and from the same instant:
// the moment a submitter first saw an answer.

// Predictor names one of the predictions the ledger scores.
type Predictor string

const (
	// PredictorForecast is the state-conditioned forecast (its mean).
	PredictorForecast Predictor = "forecast"
	// PredictorEMA is the paper's EMA baseline: an exponential moving
	// average of the ClusterQueue's observed waits (α = emaSmoothingFactor).
	PredictorEMA Predictor = "ema"
	// PredictorPaper is the paper's Approximation 1 (modified Erlang-C)
	// with the ClusterQueue's measured λ̂, Ê[S] and Ĉ_S².
	PredictorPaper Predictor = "paper"
	// PredictorWhitt is the Allen–Cunneen/Whitt GI/G/k approximation with
	// the measured ĉ_a² as well.
	PredictorWhitt Predictor = "whitt"
)

// Predictors lists every Predictor, in the order reports show them.
var Predictors = [...]Predictor{PredictorForecast, PredictorEMA, PredictorPaper, PredictorWhitt}

// Prediction is one predictor's answer for the wait that remained from a
// Score's EstimatedAt. OK is false when the predictor had no answer then:
// no forecast (MethodNone), no admission seen yet (EMA), an unstable or
// unmeasured queue (paper, Whitt).
type Prediction struct {
	Wait time.Duration
	OK   bool
}

// Score is the ledger's verdict on one workload, made at its admission.
//
// Every wait in it is the remaining wait from EstimatedAt, the refresh that
// published the workload's first estimate. The forecast predicts that
// directly. The baselines predict a whole wait from queueing, W_b; at
// EstimatedAt the workload had waited Waited already, so their prediction
// of what remains is max(W_b − Waited, 0) (never worse than W_b − Waited:
// the actual remainder is non-negative).
type Score struct {
	Workload     workload.Reference
	ClusterQueue kueue.ClusterQueueReference
	// Priority is the workload's priority when it was admitted.
	Priority int32
	// Method is how the first forecast was made (MethodNone: there was no
	// forecast, only baselines).
	Method Method
	// EstimatedAt is when the first estimate was published; Waited is how
	// long the workload had waited by then, Actual how long it waited from
	// then to its admission.
	EstimatedAt time.Time
	Waited      time.Duration
	Actual      time.Duration
	// Forecast is the forecast's mean, P50 and P90 its quantiles as
	// published (calibrated); RawP50 and RawP90 are those quantiles as the
	// roll gave them, before calibration (what a calibrator is fed).
	Forecast, P50, P90 Prediction
	RawP50, RawP90     Prediction
	// CalibrationScale is the scale floor ε of the conformity scores the
	// quantiles were calibrated with, seconds (0 with no forecast).
	CalibrationScale  float64
	EMA, Paper, Whitt Prediction
}

// Prediction returns the answer of p (a zero Prediction for an unknown p).
func (s Score) Prediction(p Predictor) Prediction {
	switch p {
	case PredictorForecast:
		return s.Forecast
	case PredictorEMA:
		return s.EMA
	case PredictorPaper:
		return s.Paper
	case PredictorWhitt:
		return s.Whitt
	}
	return Prediction{}
}

// ledgerStamp is what the ledger entries first published by one refresh of
// one ClusterQueue share: the moment, how the forecast was made, the
// calibration of its quantiles, and the baselines of that state (whole
// waits from queueing, seconds; NaN for no answer). Keeping them once per
// ClusterQueue and refresh instead of per workload is what keeps the
// ledger within 24 bytes per pending workload.
type ledgerStamp struct {
	clusterQueue      kueue.ClusterQueueReference
	at                eventTime
	method            Method
	ema, paper, whitt float64
	calibration       engine.Calibration
}

// trackedWorkload is what the estimator keeps per pending workload, 24
// bytes: its line in the ledger, the first forecast published for it
// (remaining wait from stamp.at, seconds; NaN for none) with the quantiles
// as the roll gave them, before calibration (the stamp's calibration turns
// them into the published ones), and when the estimator saw it arrive
// (see arrivalOffset), with triedBit. A nil stamp means no estimate was
// published for it yet.
type trackedWorkload struct {
	stamp          *ledgerStamp
	mean, p50, p90 float32
	arrived        uint32
}

// arrivalOffset encodes when a workload created at created (its API
// timestamp, immutable, whole seconds) was seen arriving at at: the
// milliseconds in between plus one, below triedBit. 0 means unknown: seen
// before it was created (clocks disagree) or more than 24 days after.
func arrivalOffset(created, at time.Time) uint32 {
	ms := at.Sub(created).Milliseconds()
	if ms < 0 || ms >= triedBit-1 {
		return 0
	}
	return uint32(ms) + 1
}

// triedBit, set in trackedWorkload.arrived, says that the workload's
// admission, when it comes, is not a first attempt's: the scheduler found
// it inadmissible since it arrived (see Estimator.markTried), or it
// re-entered the queue after a preemption (Kueue requeues it with a
// backoff).
const triedBit = 1 << 31

// arrivedAt decodes the arrival time of a workload created at created.
func (t trackedWorkload) arrivedAt(created time.Time) (time.Time, bool) {
	offset := t.arrived &^ triedBit
	if offset == 0 {
		return time.Time{}, false
	}
	return created.Add(time.Duration(offset-1) * time.Millisecond), true
}

// untried tells whether the scheduler has not found t inadmissible since it
// arrived (see triedBit).
func (t trackedWorkload) untried() bool { return t.arrived&triedBit == 0 }

// newLedgerStamp builds the stamp of a refresh of one ClusterQueue from
// the model it published and the calibration it applied.
func newLedgerStamp(m *QueueModel, method Method, cal engine.Calibration) *ledgerStamp {
	s := &ledgerStamp{clusterQueue: m.ClusterQueue, at: eventTimeOf(m.At), method: method,
		ema: math.NaN(), paper: math.NaN(), whitt: math.NaN(), calibration: cal}
	if m.HasEMA {
		s.ema = m.EMAWait.Seconds()
	}
	if m.HasRates && m.Stable {
		s.paper, s.whitt = m.MeanWait.Seconds(), m.WhittMeanWait.Seconds()
	}
	return s
}

// ledgerLine is the ledger line of a workload estimated under stamp with
// the roll's mean and raw quantiles (seconds); hasWait false: no forecast.
// Its arrival is left unknown: the writer keeps the one recorded.
func ledgerLine(stamp *ledgerStamp, hasWait bool, mean, rawP50, rawP90 float64) trackedWorkload {
	nan := float32(math.NaN())
	l := trackedWorkload{stamp: stamp, mean: nan, p50: nan, p90: nan}
	if hasWait {
		l.mean, l.p50, l.p90 = float32(mean), float32(rawP50), float32(rawP90)
	}
	return l
}

// score judges the line of a workload that queued at since and was
// admitted at admitted; false when no estimate had been published for it.
func (l trackedWorkload) score(key workload.Reference, cq kueue.ClusterQueueReference, priority int32, since, admitted time.Time) (Score, bool) {
	if l.stamp == nil {
		return Score{}, false
	}
	at := l.stamp.at.time()
	s := Score{
		Workload: key, ClusterQueue: cq, Priority: priority, Method: l.stamp.method,
		EstimatedAt: at, Waited: max(at.Sub(since), 0), Actual: max(admitted.Sub(at), 0),
	}
	s.Forecast = remaining(float64(l.mean))
	if s.Forecast.OK {
		p50, p90 := l.stamp.calibration.PublishFor(priority, float64(l.p50), float64(l.p90))
		s.P50, s.P90 = remaining(p50), remaining(p90)
		s.RawP50, s.RawP90 = remaining(float64(l.p50)), remaining(float64(l.p90))
		s.CalibrationScale = l.stamp.calibration.Eps
	} else {
		s.Method = MethodNone
	}
	waited := s.Waited.Seconds()
	s.EMA = remaining(l.stamp.ema - waited)
	s.Paper = remaining(l.stamp.paper - waited)
	s.Whitt = remaining(l.stamp.whitt - waited)
	return s, true
}

// remaining turns a predicted remaining wait in seconds into a Prediction:
// NaN is no answer, a negative one is zero.
func remaining(s float64) Prediction {
	if math.IsNaN(s) {
		return Prediction{}
	}
	return Prediction{Wait: engine.Seconds(s), OK: true}
}

// ledgerBatch bounds how many ledger lines a refresh writes per hold of the
// estimator's lock, which the scheduler's hooks take too.
const ledgerBatch = 256

// trackPending registers key, named name, as pending since the arrival
// offset arrived (see trackedWorkload.arrived), with no ledger line yet.
// The tracked entry keeps name's strings: the Workload object's own, where
// the caller has it. Under e.mu.
func (e *Estimator) trackPending(key workload.Reference, name workloadName, arrived uint32) {
	e.pending.Set(name, trackedWorkload{arrived: arrived})
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
		if p := w.e.pending.Find(w.names[i]); p != nil && p.stamp == nil {
			line := w.lines[i]
			line.arrived = p.arrived
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
		if p, ok := w.e.pending.Get(nameFromReference(key)); ok && p.stamp == nil {
			w.e.unledgered[key] = struct{}{}
		}
	}
}
