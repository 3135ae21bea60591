package estimator

import (
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/resources"

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

// admittedDemand is the demand of an admitted workload as Kueue accounted
// it (its pod set assignments' usage, per pod, in Kueue's canonical units)
// and a key that equal demands share; ok is false for an admission with no
// usage to read.
func admittedDemand(a *kueue.Admission) (key string, demand capacity.Workload, ok bool) {
	if a == nil || len(a.PodSetAssignments) == 0 {
		return "", capacity.Workload{}, false
	}
	var b strings.Builder
	for _, psa := range a.PodSetAssignments {
		count := int64(1)
		if psa.Count != nil {
			count = int64(*psa.Count)
		}
		ps := capacity.PodSet{Name: string(psa.Name), Count: count, Requests: make(map[string]int64, len(psa.ResourceUsage))}
		names := make([]corev1.ResourceName, 0, len(psa.ResourceUsage))
		for name := range psa.ResourceUsage {
			names = append(names, name)
		}
		slices.Sort(names)
		b.WriteString(ps.Name)
		b.WriteByte('/')
		b.WriteString(strconv.FormatInt(count, 10))
		for _, name := range names {
			v := perPod(resources.ResourceValue(name, psa.ResourceUsage[name]), count)
			ps.Requests[string(name)] = v
			b.WriteByte(' ')
			b.WriteString(string(name))
			b.WriteByte('=')
			b.WriteString(strconv.FormatInt(v, 10))
		}
		b.WriteByte(';')
		demand.PodSets = append(demand.PodSets, ps)
	}
	return b.String(), demand, true
}

// observeAdmittedShape counts an admission at t of a workload of this
// priority with the given demand (admittedDemand's key and demand); a new
// shape's rate counts from windowStart, as the priority's arrivals do.
func (ps *priorityStats) observeAdmittedShape(t, windowStart time.Time, key string, demand capacity.Workload) {
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
func (ps *priorityStats) observeShapeService(s *queueStats, key string, end time.Time, seconds float64) {
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
func (ps *priorityStats) shapeService(priority int32) []engine.ShapeService {
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
func (ps *priorityStats) shapeArrivals(priority int32, rate, window float64) []engine.ShapeArrival {
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
