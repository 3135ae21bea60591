package estimates

import (
	"math"
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
)

// Stored is how published results keep a WorkloadEstimate, since there is one
// per pending workload: what every workload of a ClusterQueue shares (its
// name and the time of the rolled-forward state) is kept once in a stamp,
// the admission time is derived, the waits are whole milliseconds, the
// method is a code and the reason of an Unfeasible workload is kept aside.
// It takes 24 bytes where a WorkloadEstimate takes 152.
type Stored[Q ~string] struct {
	stamp                  *Stamp[Q]
	expectedWait, p50, p90 waitMillis
	method                 methodCode
	unfeasible             bool
	hasWait                bool
	beyondHorizon          bool
}

// waitMillis is a wait in whole milliseconds (the visibility API's unit),
// up to about 49.7 days.
type waitMillis uint32

// millisOf rounds d to the millisecond; a negative d is 0, and one past
// the largest waitMillis saturates there (saturated true).
func millisOf(d time.Duration) (w waitMillis, saturated bool) {
	if d <= 0 {
		return 0, false
	}
	// Compared before rounding: d + ½ ms overflows for the longest
	// durations (engine.Seconds' saturation value among them).
	if d >= math.MaxUint32*time.Millisecond {
		return math.MaxUint32, true
	}
	ms := (d + time.Millisecond/2) / time.Millisecond
	if ms >= math.MaxUint32 {
		return math.MaxUint32, true
	}
	return waitMillis(ms), false
}

func (w waitMillis) duration() time.Duration { return time.Duration(w) * time.Millisecond }

// methodCode is an engine.Method as an index into methods.
type methodCode uint8

// methods are the Methods a Stored can hold.
var methods = [...]engine.Method{engine.MethodNone, engine.MethodForecast, engine.MethodAPriori, engine.MethodImmediate}

// codeOf returns the code of m; a Method that is not one of the constants
// is stored as engine.MethodNone.
func codeOf(m engine.Method) methodCode {
	for i, known := range methods {
		if m == known {
			return methodCode(i)
		}
	}
	return 0
}

// Stamp is what the estimates of one ClusterQueue share: its name and the
// time of the state that was rolled forward.
type Stamp[Q ~string] struct {
	ClusterQueue Q
	At           time.Time
}

// Estimate is the estimate s keeps, with the reason of an Unfeasible one.
func (s Stored[Q]) Estimate(reason string) WorkloadEstimate[Q] {
	e := WorkloadEstimate[Q]{
		Admissibility: capacity.Quotable, Reason: reason, Method: methods[s.method], HasWait: s.hasWait,
		ExpectedWait: s.expectedWait.duration(), P50: s.p50.duration(), P90: s.p90.duration(), BeyondHorizon: s.beyondHorizon,
	}
	if s.unfeasible {
		e.Admissibility = capacity.Unfeasible
	}
	if s.stamp != nil {
		e.ClusterQueue, e.EstimatedAt = s.stamp.ClusterQueue, s.stamp.At
	}
	if s.hasWait {
		e.EstimatedAdmission = e.EstimatedAt.Add(e.ExpectedWait)
	}
	return e
}

// Store keeps e under stamp, which must hold e's ClusterQueue and
// EstimatedAt; the estimates of one ClusterQueue share one stamp. A wait
// too long to keep is kept as the longest one, flagged beyond the horizon.
func Store[Q ~string](e WorkloadEstimate[Q], stamp *Stamp[Q]) Stored[Q] {
	s := Stored[Q]{
		stamp: stamp, method: codeOf(e.Method), unfeasible: e.Admissibility == capacity.Unfeasible,
		hasWait: e.HasWait, beyondHorizon: e.BeyondHorizon,
	}
	var sat [3]bool
	s.expectedWait, sat[0] = millisOf(e.ExpectedWait)
	s.p50, sat[1] = millisOf(e.P50)
	s.p90, sat[2] = millisOf(e.P90)
	if sat[0] || sat[1] || sat[2] {
		s.beyondHorizon = true
	}
	return s
}

// Due is the admission instant the P50 of a Quotable estimate with a wait
// predicts (its stamp's time plus the P50); false for any other.
func (s Stored[Q]) Due() (time.Time, bool) {
	if !s.hasWait || s.unfeasible || s.stamp == nil {
		return time.Time{}, false
	}
	return s.stamp.At.Add(s.p50.duration()), true
}
