package queuestats

import (
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/engine"
	"github.com/kueue-waittime/kueue-waittime/pkg/stats"
)

// maxShapesPerPriority bounds the demand shapes tracked for one priority of
// a ClusterQueue; admissions of further shapes are not counted (their
// share goes to the shapes tracked).
const maxShapesPerPriority = 8

// admittedShape counts the admissions of one demand shape of one priority,
// and keeps the service times of its completions (made at the first,
// at most priorityServiceSampleSize).
type admittedShape struct {
	key        string
	demand     capacity.Workload
	admissions *stats.EventRate
	service    *stats.ServiceTimes
}

// observeAdmittedShape counts an admission at t of a workload of this
// priority with the given demand (admittedDemand's key and demand); a new
// shape's rate counts from windowStart, as the priority's arrivals do.
func (ps *Priority) observeAdmittedShape(t, windowStart time.Time, key string, demand capacity.Workload) {
	for _, s := range ps.shapes {
		if s.key == key {
			s.admissions.ObserveAt(t)
			return
		}
	}
	if len(ps.shapes) >= maxShapesPerPriority || ps.newShapeRate == nil {
		return
	}
	rate, err := ps.newShapeRate()
	if err != nil {
		return
	}
	rate.Seed(windowStart, nil)
	rate.ObserveAt(t)
	ps.shapes = append(ps.shapes, &admittedShape{key: key, demand: demand, admissions: rate})
}

// observeShapeService records the service time of a workload of this
// priority and demand shape (admittedDemand's key) that completed at end,
// when the shape is tracked.
func (ps *Priority) observeShapeService(s *Queue, key string, end time.Time, seconds float64) {
	for _, sh := range ps.shapes {
		if sh.key == key {
			if sh.service == nil {
				service, err := s.newPriorityService()
				if err != nil {
					return
				}
				sh.service = service
			}
			sh.service.ObserveAt(end, seconds)
			return
		}
	}
}

// shapeService returns the service samples of the priority's shapes that
// have some, when it has seen more than one shape (with one, its own
// sample is the shape's); the engine decides from how many on a shape's
// sample makes its law (engine.Stats.ShapeService).
func (ps *Priority) shapeService(priority int32) []engine.ShapeService {
	if len(ps.shapes) < 2 {
		return nil
	}
	var out []engine.ShapeService
	for _, sh := range ps.shapes {
		if sh.service != nil && sh.service.Len() > 0 {
			out = append(out, engine.ShapeService{Priority: priority, Demand: sh.demand, Sample: sh.service.AppendValues(nil)})
		}
	}
	return out
}

// shapeArrivals splits a priority's arrival rate among the demand shapes
// of its admissions, in proportion to their admission rates: the arrival
// mix, where every arrival is admitted in the end.
func (ps *Priority) shapeArrivals(priority int32, rate, window float64) []engine.ShapeArrival {
	total := 0.0
	rates := make([]float64, len(ps.shapes))
	for i, s := range ps.shapes {
		if r, ok := s.admissions.Rate(); ok && r > 0 {
			rates[i] = r
			total += r
		}
	}
	if !(total > 0) {
		return nil
	}
	var out []engine.ShapeArrival
	// In the order the shapes were first admitted: the engine orders them.
	for i, s := range ps.shapes {
		if rates[i] > 0 {
			out = append(out, engine.ShapeArrival{Priority: priority, Demand: s.demand, RatePerSecond: rate * rates[i] / total, WindowSeconds: window})
		}
	}
	return out
}
