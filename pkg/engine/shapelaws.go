package engine

import (
	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
)

// shapeLaws are the service laws of a ClusterQueue's demand shapes
// (Stats.ShapeService) as a roll takes them: models are the roll's
// forecast.Queue.ServiceClasses, and a workload names the law of its
// priority and demand shape by its ServiceClass (see of). A shape is
// matched by its flavor options in the ClusterQueue (demandOptions),
// which are all the roll sees of a demand: two shapes with equal options
// fit and take quota alike.
type shapeLaws struct {
	models []forecast.ServiceModel
	shapes []lawShape
	// byClass caches, per demand class of the roll (engine.Queue.Classes),
	// the service class found for each priority, so that a queue of many
	// workloads of few classes matches each class and priority once.
	byClass [][]classLaw
}

// lawShape is the priority and the flavor options of the shape whose law
// is models[i] (ServiceClass i+1).
type lawShape struct {
	priority int32
	options  []capacity.Quantities
}

// classLaw is the service class found for one priority of a demand class.
type classLaw struct {
	priority int32
	law      int32
}

// newShapeLaws builds, for a roll of classes demand classes, the laws of
// the shapes whose samples hold at least minSamples service times, as the
// pooled law is built (serviceModel): bootstrapped per replica while they
// hold fewer than BootstrapServiceBelow, the sample as the law from there
// on. A sample that makes no valid law of positive mean (invalid, or all
// zeros, which the roll would refuse) is left out, as is a shape that cq
// gives no flavor options. nil when there is none, which names no law.
//
// A shape's law from a few of its own completions beats the pooled law
// for its workloads once the shapes' services differ by more than its
// sampling error: in mt-mixed the large workloads run 1.4 times the
// pooled mean, and each of its ClusterQueues sees about 36 of them; the
// bootstrap puts the sample's error into the forecast's spread.
func newShapeLaws(cq *capacity.ClusterQueue, samples []ShapeService, classes, minSamples int) *shapeLaws {
	var l *shapeLaws
	for _, sh := range samples {
		if len(sh.Sample) < max(minSamples, 1) {
			continue
		}
		options := demandOptions(cq, sh.Demand)
		if len(options) == 0 {
			continue
		}
		var m forecast.ServiceModel
		var err error
		if len(sh.Sample) < BootstrapServiceBelow {
			m, err = forecast.NewBootstrap(sh.Sample)
		} else {
			m, err = forecast.NewEmpirical(sh.Sample)
		}
		if err != nil || !(m.Mean() > 0) {
			continue
		}
		if l == nil {
			l = &shapeLaws{byClass: make([][]classLaw, classes)}
		}
		l.models = append(l.models, m)
		l.shapes = append(l.shapes, lawShape{priority: sh.Priority, options: options})
	}
	return l
}

// serviceClasses is the roll's forecast.Queue.ServiceClasses (nil for a
// nil l).
func (l *shapeLaws) serviceClasses() []forecast.ServiceModel {
	if l == nil {
		return nil
	}
	return l.models
}

// forOptions returns the service class (forecast.Queue.ServiceClasses,
// from 1) of the law of a workload of this priority and these flavor
// options; 0, none, when no shape of the priority has them (or l is nil).
func (l *shapeLaws) forOptions(priority int32, options []capacity.Quantities) int32 {
	if l == nil || len(options) == 0 {
		return 0
	}
	for i, sh := range l.shapes {
		if sh.priority == priority && sameOptions(sh.options, options) {
			return int32(i + 1)
		}
	}
	return 0
}

// of is forOptions for a workload of demand class class (an index into
// the roll's classes, whose flavor options options returns), cached per
// class and priority. It writes the cache: only the roll that made l
// calls it, before l is shared (see cached).
func (l *shapeLaws) of(class int, priority int32, options func() []capacity.Quantities) int32 {
	if l == nil || class < 0 || class >= len(l.byClass) {
		return 0
	}
	if law, ok := l.lookup(class, priority); ok {
		return law
	}
	law := l.forOptions(priority, options())
	l.byClass[class] = append(l.byClass[class], classLaw{priority: priority, law: law})
	return law
}

// cached is what of returned for this class and priority, 0 if it was
// never asked. It only reads, so that the what-ifs of a Scene, which may
// run at once, share l.
func (l *shapeLaws) cached(class int, priority int32) int32 {
	if l == nil || class < 0 || class >= len(l.byClass) {
		return 0
	}
	law, _ := l.lookup(class, priority)
	return law
}

// lookup is the cached service class of a class (in range) and priority.
func (l *shapeLaws) lookup(class int, priority int32) (law int32, ok bool) {
	for _, c := range l.byClass[class] {
		if c.priority == priority {
			return c.law, true
		}
	}
	return 0, false
}
