package ledger

import (
	"math"
	"time"

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
// no forecast (engine.MethodNone), no admission seen yet (EMA), an unstable or
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
//
// W and Q are the caller's types of a workload's and a ClusterQueue's name
// (Kueue's workload.Reference and ClusterQueueReference).
type Score[W, Q ~string] struct {
	Workload     W
	ClusterQueue Q
	// Priority is the workload's priority when it was admitted.
	Priority int32
	// Method is how the first forecast was made (engine.MethodNone: there was no
	// forecast, only baselines).
	Method engine.Method
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
func (s Score[W, Q]) Prediction(p Predictor) Prediction {
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

// Stamp is what the ledger lines first published by one refresh of one
// ClusterQueue share: the moment, how the forecast was made, the
// calibration of its quantiles, and the baselines of that state (whole
// waits from queueing, seconds; NaN for no answer). Keeping them once per
// ClusterQueue and refresh instead of per workload is what keeps the
// ledger within 24 bytes per pending workload.
type Stamp[Q ~string] struct {
	ClusterQueue Q
	// At is the refresh's time, Unix nanoseconds.
	At                int64
	Method            engine.Method
	EMA, Paper, Whitt float64
	Calibration       engine.Calibration
}

// StampOf is the stamp of a refresh at at of ClusterQueue cq, from the
// method of its roll, the calibration it applied and the model it
// published: the EMA baseline's wait ema if hasEMA, and the paper's and
// Whitt's mean waits of m if its queue is stable (NaN for none).
func StampOf[Q ~string](cq Q, at time.Time, method engine.Method, cal engine.Calibration, m *engine.APriori, ema time.Duration, hasEMA bool) *Stamp[Q] {
	s := &Stamp[Q]{ClusterQueue: cq, At: at.UnixNano(), Method: method,
		EMA: math.NaN(), Paper: math.NaN(), Whitt: math.NaN(), Calibration: cal}
	if hasEMA {
		s.EMA = ema.Seconds()
	}
	if m.HasRates && m.Stable {
		s.Paper, s.Whitt = m.MeanWait.Seconds(), m.WhittMeanWait.Seconds()
	}
	return s
}

// Line is what the estimator keeps per pending workload, 24 bytes: its line in the ledger, the first forecast published for it
// (remaining wait from stamp.at, seconds; NaN for none) with the quantiles
// as the roll gave them, before calibration (the stamp's calibration turns
// them into the published ones), and when the estimator saw it arrive
// (see ArrivalOffset), with TriedBit. A nil Stamp means no estimate was
// published for it yet.
type Line[Q ~string] struct {
	Stamp          *Stamp[Q]
	Mean, P50, P90 float32
	Arrived        uint32
}

// ArrivalOffset encodes when a workload created at created (its API
// timestamp, immutable, whole seconds) was seen arriving at at: the
// milliseconds in between plus one, below TriedBit. 0 means unknown: seen
// before it was created (clocks disagree) or more than 24 days after.
func ArrivalOffset(created, at time.Time) uint32 {
	ms := at.Sub(created).Milliseconds()
	if ms < 0 || ms >= TriedBit-1 {
		return 0
	}
	return uint32(ms) + 1
}

// TriedBit, set in Line.Arrived, says that the workload's
// admission, when it comes, is not a first attempt's: the scheduler found
// it inadmissible since it arrived (the estimator's markTried), or it
// re-entered the queue after a preemption (Kueue requeues it with a
// backoff).
const TriedBit = 1 << 31

// ArrivedAt decodes the arrival time of a workload created at created.
func (t Line[Q]) ArrivedAt(created time.Time) (time.Time, bool) {
	offset := t.Arrived &^ TriedBit
	if offset == 0 {
		return time.Time{}, false
	}
	return created.Add(time.Duration(offset-1) * time.Millisecond), true
}

// Untried tells whether the scheduler has not found t inadmissible since it
// arrived (see TriedBit).
func (t Line[Q]) Untried() bool { return t.Arrived&TriedBit == 0 }

// NewLine is the ledger line of a workload estimated under stamp with the
// roll's mean and raw quantiles (seconds); hasWait false: no forecast. Its
// arrival is left unknown: the writer keeps the one recorded.
func NewLine[Q ~string](stamp *Stamp[Q], hasWait bool, mean, rawP50, rawP90 float64) Line[Q] {
	nan := float32(math.NaN())
	l := Line[Q]{Stamp: stamp, Mean: nan, P50: nan, P90: nan}
	if hasWait {
		l.Mean, l.P50, l.P90 = float32(mean), float32(rawP50), float32(rawP90)
	}
	return l
}

// scoreOf judges the line l of the workload key of ClusterQueue cq, of the
// given priority, that queued at since and was admitted at admitted; false
// when no estimate had been published for it.
func scoreOf[W, Q ~string](l Line[Q], key W, cq Q, priority int32, since, admitted time.Time) (Score[W, Q], bool) {
	if l.Stamp == nil {
		return Score[W, Q]{}, false
	}
	at := time.Unix(0, l.Stamp.At).UTC()
	s := Score[W, Q]{
		Workload: key, ClusterQueue: cq, Priority: priority, Method: l.Stamp.Method,
		EstimatedAt: at, Waited: max(at.Sub(since), 0), Actual: max(admitted.Sub(at), 0),
	}
	s.Forecast = remaining(float64(l.Mean))
	if s.Forecast.OK {
		p50, p90 := l.Stamp.Calibration.PublishFor(priority, float64(l.P50), float64(l.P90))
		s.P50, s.P90 = remaining(p50), remaining(p90)
		s.RawP50, s.RawP90 = remaining(float64(l.P50)), remaining(float64(l.P90))
		s.CalibrationScale = l.Stamp.Calibration.Eps
	} else {
		s.Method = engine.MethodNone
	}
	waited := s.Waited.Seconds()
	s.EMA = remaining(l.Stamp.EMA - waited)
	s.Paper = remaining(l.Stamp.Paper - waited)
	s.Whitt = remaining(l.Stamp.Whitt - waited)
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
