package estimator

import (
	"context"
	"fmt"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/util/admissionfairsharing"
	utilqueue "sigs.k8s.io/kueue/pkg/util/queue"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/convert"
	"github.com/kueue-waittime/kueue-waittime/pkg/earlyevents"
	"github.com/kueue-waittime/kueue-waittime/pkg/ledger"
	"github.com/kueue-waittime/kueue-waittime/pkg/queuestats"
	"github.com/kueue-waittime/kueue-waittime/pkg/stats"
	"github.com/kueue-waittime/kueue-waittime/pkg/tracker"
)

// WorkloadEventHandler returns the handler to register on the manager's
// Workload informer. It turns transitions into statistics: a new pending
// workload is an arrival in its ClusterQueue; a Finished transition gives a
// service time (quota reservation to finish) and frees quota; an eviction
// by preemption is a re-entry (μ_p) and frees quota. Events that arrive
// before [Estimator.WarmStart] has run are dropped: the warm start reads
// the same objects from the informer's store.
func (e *Estimator) WorkloadEventHandler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if wl, ok := obj.(*kueue.Workload); ok {
				e.onWorkloadAdd(wl)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			oldWl, ok1 := oldObj.(*kueue.Workload)
			newWl, ok2 := newObj.(*kueue.Workload)
			if ok1 && ok2 {
				e.onWorkloadUpdate(oldWl, newWl)
			}
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if wl, ok := obj.(*kueue.Workload); ok {
				e.onWorkloadDelete(wl)
			}
		},
	}
}

// ClusterQueueEventHandler returns the handler to register on the
// manager's ClusterQueue informer; it tracks each ClusterQueue's queueing
// strategy and admission scope, which the snapshot does not carry.
func (e *Estimator) ClusterQueueEventHandler() toolscache.ResourceEventHandler {
	set := func(obj any) {
		if cq, ok := obj.(*kueue.ClusterQueue); ok {
			name, spec := kueue.ClusterQueueReference(cq.Name), queueSpecOf(cq)
			e.update(func(s *trackerState) {
				s.SetSpec(name, spec, spec.cohort)
				s.Changes.Mark(name)
			})
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, obj any) { set(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if cq, ok := obj.(*kueue.ClusterQueue); ok {
				e.update(func(s *trackerState) { s.ForgetClusterQueue(kueue.ClusterQueueReference(cq.Name)) })
			}
		},
	}
}

// LocalQueueEventHandler returns the handler to register on the manager's
// LocalQueue informer; it tracks each LocalQueue's admission fair sharing
// weight (spec.fairSharing.weight, 1 when unset), which a refresh that
// rolls admission fair sharing reads.
func (e *Estimator) LocalQueueEventHandler() toolscache.ResourceEventHandler {
	set := func(obj any) {
		if lq, ok := obj.(*kueue.LocalQueue); ok {
			key, w := utilqueue.Key(lq), admissionfairsharing.LQWeightAsFloat64(lq)
			e.update(func(*trackerState) {
				if e.localQueueWeights == nil {
					e.localQueueWeights = make(map[utilqueue.LocalQueueReference]float64)
				}
				e.localQueueWeights[key] = w
			})
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, obj any) { set(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if lq, ok := obj.(*kueue.LocalQueue); ok {
				key := utilqueue.Key(lq)
				e.update(func(*trackerState) { delete(e.localQueueWeights, key) })
			}
		},
	}
}

// queueSpec is what the estimator needs of a ClusterQueue's spec that the
// scheduler's snapshot does not carry.
type queueSpec struct {
	strategy kueue.QueueingStrategy
	// admissionScope is spec.admissionScope.admissionMode ==
	// UsageBasedAdmissionFairSharing: the one mode in which Kueue orders
	// by the LocalQueues' usage (admissionfairsharing.ResourceWeights)
	// when the manager's admission fair sharing is on.
	admissionScope bool
	// withinClusterQueue is spec.preemption.withinClusterQueue ("" when
	// spec.preemption is unset, which Kueue defaults to Never).
	withinClusterQueue kueue.PreemptionPolicy
	// reclaimWithinCohort is spec.preemption.reclaimWithinCohort ("":
	// Never).
	reclaimWithinCohort kueue.PreemptionPolicy
	// cohort is spec.cohortName ("": none).
	cohort kueue.CohortReference
}

func queueSpecOf(cq *kueue.ClusterQueue) queueSpec {
	spec := queueSpec{strategy: cq.Spec.QueueingStrategy, cohort: cq.Spec.CohortName}
	spec.admissionScope = cq.Spec.AdmissionScope != nil && cq.Spec.AdmissionScope.AdmissionMode == kueue.UsageBasedAdmissionFairSharing
	if cq.Spec.Preemption != nil {
		spec.withinClusterQueue = cq.Spec.Preemption.WithinClusterQueue
		spec.reclaimWithinCohort = cq.Spec.Preemption.ReclaimWithinCohort
	}
	return spec
}

// onWorkloadDelete forgets a workload (see tracker.State.Delete). One
// deleted while pending with a ledger line is never scored: that is
// reported, so that the ledger's counts add up.
func (e *Estimator) onWorkloadDelete(wl *kueue.Workload) {
	defer e.recoverPanic("onWorkloadDelete")
	key := workload.Key(wl)
	e.topology.Set(key, "")
	queue, known := e.clusterQueueOf(wl)
	var cq kueue.ClusterQueueReference
	var dropped bool
	e.update(func(s *trackerState) { cq, dropped = s.Delete(key, queue, known) })
	if dropped && e.opts.reporter != nil {
		e.opts.reporter.ReportUnscored(cq, DeletedBeforeAdmission)
	}
}

func (e *Estimator) onWorkloadAdd(wl *kueue.Workload) {
	defer e.recoverPanic("onWorkloadAdd")
	if convert.IsFinished(wl) || wl.Status.Admission != nil || wl.Spec.QueueName == "" {
		return
	}
	// The event follows the creation by milliseconds; its time is finer
	// than the creation timestamp's whole second.
	now := e.opts.clock.Now()
	key := workload.Key(wl)
	arrival := parkedArrival{Name: nameOf(wl), LocalQueue: utilqueue.KeyFromWorkload(wl), Created: wl.CreationTimestamp.Time, At: now, Priority: convert.PriorityOf(wl)}
	cq, ok := e.queues.ClusterQueueFromLocalQueue(arrival.LocalQueue)
	if !ok {
		// Parked (see tracker.State.Park); the refresh looks it up again.
		e.update(func(s *trackerState) { s.Park(key, arrival) })
		return
	}
	e.applyOrDefer(earlyEvent{Key: key, ClusterQueue: cq, Kind: earlyevents.Arrival, Apply: func() { e.state.Arrive(key, cq, arrival) }})
}

// resolveParkedArrivals records, in its ClusterQueue, the arrival of every
// parked workload whose LocalQueue the queue manager now maps, at the
// time it was seen arriving (see tracker.Lookup and
// tracker.State.Resolve). The lookups run without e.mu, as
// onWorkloadAdd's do; an arrival parked again, admitted or deleted
// meanwhile is left as it is. While an arrival parked less than the
// maximum staleness ago is still unmapped, the next refresh period looks
// again.
func (e *Estimator) resolveParkedArrivals(now time.Time) {
	var parked map[workload.Reference]parkedArrival
	e.forRefresh(func(s *trackerState) { parked = s.Parked() })
	found, again := tracker.Lookup(parked, e.queues.ClusterQueueFromLocalQueue, now, e.opts.MaxStaleness)
	if again {
		e.dirty.Store(true)
	}
	if len(found) == 0 {
		return
	}
	defer e.dirty.Store(true)
	e.forRefresh(func(s *trackerState) {
		for _, f := range found {
			s.Resolve(f)
		}
	})
}

func (e *Estimator) onWorkloadUpdate(oldWl, newWl *kueue.Workload) {
	defer e.recoverPanic("onWorkloadUpdate")
	admission := newWl.Status.Admission
	if admission == nil {
		admission = oldWl.Status.Admission
	}
	if admission == nil {
		e.onPendingUpdate(oldWl, newWl)
		return
	}
	if oldWl.Status.Admission == nil && newWl.Status.Admission != nil && !convert.IsFinished(newWl) {
		e.onAdmitted(newWl)
		return
	}
	if oldWl.Status.Admission != nil && newWl.Status.Admission == nil && !convert.IsFinished(newWl) {
		// Quota released without finishing (evicted, deactivated): a later
		// admission is a new one.
		key := workload.Key(newWl)
		now := e.opts.clock.Now()
		e.applyOrDefer(earlyEvent{Key: key, ClusterQueue: admission.ClusterQueue, Kind: earlyevents.Release, Apply: func() {
			e.state.Stats.Release(key, admission.ClusterQueue, now)
		}})
		// The same update may carry the preemption: go on.
	}
	cq := admission.ClusterQueue
	finished := !convert.IsFinished(oldWl) && convert.IsFinished(newWl)
	preempted := !convert.IsEvictedByPreemption(oldWl) && convert.IsEvictedByPreemption(newWl)
	if !finished && !preempted {
		return
	}
	now := e.opts.clock.Now()
	key := workload.Key(newWl)
	span, hasSpan := convert.ServiceSpan(oldWl, newWl)
	evictedAt := now
	if c := apimeta.FindStatusCondition(newWl.Status.Conditions, kueue.WorkloadEvicted); c != nil {
		evictedAt = c.LastTransitionTime.Time
	}
	created := newWl.CreationTimestamp.Time
	kind := earlyevents.Finish
	var shapeKey string
	if !finished {
		kind = earlyevents.Preemption
	} else {
		// The shape's service sample is keyed as its admissions are.
		shapeKey, _, _ = convert.AdmittedDemand(admission)
	}
	end := queuestats.End{Finished: finished, Preempted: preempted,
		Priority: convert.PriorityOf(newWl), ShapeKey: shapeKey, Span: span, HasSpan: hasSpan, EvictedAt: evictedAt,
		Released: newWl.Status.Admission == nil, InClusterQueue: preempted && convert.PreemptedInClusterQueue(newWl)}
	e.applyOrDefer(earlyEvent{Key: key, ClusterQueue: cq, Kind: kind, Apply: func() {
		e.state.End(key, cq, now, end, nameOf(newWl), created)
	}})
}

// onPendingUpdate marks the ClusterQueues of a workload that is pending
// before and after an update of its spec (its priority, its LocalQueue, its
// activation): their pending lists change, with no event of the
// statistics' to say so. An update of its status that refuses it quota
// (see convert.RefusedQuota) marks it tried.
func (e *Estimator) onPendingUpdate(oldWl, newWl *kueue.Workload) {
	if convert.RefusedQuota(newWl) && !convert.SameQuotaReservedCondition(oldWl, newWl) {
		// Marked tried (see tracker.State.MarkTried): no refresh needed.
		func() {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.state.MarkTried(nameOf(newWl))
		}()
	}
	if oldWl.Generation == newWl.Generation {
		return
	}
	before, ok1 := e.clusterQueueOf(oldWl)
	after, ok2 := e.clusterQueueOf(newWl)
	if !ok1 && !ok2 {
		return
	}
	e.update(func(s *trackerState) {
		if ok1 {
			s.Changes.Mark(before)
		}
		if ok2 {
			s.Changes.Mark(after)
		}
	})
}

// onAdmitted records an admission the informer saw, as ObserveAdmission
// records the scheduler's: on a replica that does not schedule it is the
// only record, on the one that does the first of the two wins. Its time is
// the event's, milliseconds after the write.
func (e *Estimator) onAdmitted(wl *kueue.Workload) {
	e.topology.Set(workload.Key(wl), "")
	now := e.opts.clock.Now()
	var score Score
	var outcome ledger.Outcome
	// The demand shape counts here, once per admission on every replica,
	// not in the scheduler's hook.
	shapeKey, demand, hasShape := convert.AdmittedDemand(wl.Status.Admission)
	if e.applyOrDefer(earlyEvent{Key: workload.Key(wl), ClusterQueue: wl.Status.Admission.ClusterQueue, Kind: earlyevents.Admission, Apply: func() {
		score, outcome = e.recordAdmission(wl, now, true)
		if hasShape {
			e.state.Stats.Of(wl.Status.Admission.ClusterQueue).ObserveAdmittedShape(now, convert.PriorityOf(wl), shapeKey, demand)
		}
	}}) {
		e.reportAdmission(wl.Status.Admission.ClusterQueue, score, outcome)
	}
	// A deferred admission is replayed by the warm start, which updates the
	// statistics then; score and outcome are written by that replay and must
	// not be read here.
}

// earlyEvent is a workload transition the event handlers saw; before the
// estimator is warm it waits in its state (see tracker.State.ApplyOrDefer).
type earlyEvent = earlyevents.Event[workload.Reference, kueue.ClusterQueueReference]

// applyOrDefer applies an event now, or keeps it for the warm start, and
// says which: a deferred event's apply runs later, on another goroutine.
func (e *Estimator) applyOrDefer(ev earlyEvent) (applied bool) {
	defer e.dirty.Store(true)
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.state.ApplyOrDefer(ev)
}

// WarmStart seeds the statistics from the Workload and ClusterQueue objects
// in the informer cache (reader is the manager's cache: no API request is
// made), so that a restarted manager does not start blind: arrivals from
// creation times, service times from finished workloads' reservation and
// finish times, the EMA from admitted workloads' waits, preemptions from
// eviction times. Call it once the cache has synced. Events the handlers
// see before it returns are kept and applied then, but those the read
// already holds.
func (e *Estimator) WarmStart(ctx context.Context, reader client.Reader) (err error) {
	defer e.recoverPanicAsError("WarmStart", &err)
	var wls kueue.WorkloadList
	if err := reader.List(ctx, &wls); err != nil {
		return fmt.Errorf("estimator: warm start: listing workloads from the cache: %w", err)
	}
	var cqs kueue.ClusterQueueList
	if err := reader.List(ctx, &cqs); err != nil {
		return fmt.Errorf("estimator: warm start: listing cluster queues from the cache: %w", err)
	}
	per := make(map[kueue.ClusterQueueReference]*queuestats.Seeds)
	// Pending workloads get a ledger line at the next refresh; their
	// arrival time is their queueing time in the API (unknown here).
	var pendingKeys []workload.Reference
	listed := make(map[workload.Reference]earlyevents.Listed, len(wls.Items))
	get := func(cq kueue.ClusterQueueReference) *queuestats.Seeds {
		s, ok := per[cq]
		if !ok {
			s = &queuestats.Seeds{}
			per[cq] = s
		}
		return s
	}
	for i := range wls.Items {
		wl := &wls.Items[i]
		cq, ok := e.clusterQueueOf(wl)
		if !ok {
			continue
		}
		s := get(cq)
		prio := convert.PriorityOf(wl)
		s.AddArrival(wl.CreationTimestamp.Time, prio)
		if at, ok := convert.AdmissionTime(wl); ok {
			s.AddWait(stats.Span{Start: convert.QueuedSince(wl), End: at})
		}
		if span, ok := convert.ServiceSpan(wl, wl); ok && convert.IsFinished(wl) {
			s.AddService(prio, span)
		}
		if convert.IsEvictedByPreemption(wl) {
			if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted); c != nil {
				s.AddPreemption(c.LastTransitionTime.Time)
			}
		}
		if wl.Status.Admission == nil && !convert.IsFinished(wl) {
			pendingKeys = append(pendingKeys, workload.Key(wl))
		}
		listed[workload.Key(wl)] = earlyevents.Listed{Admitted: wl.Status.Admission != nil, Finished: convert.IsFinished(wl), EvictedByPreemption: convert.IsEvictedByPreemption(wl)}
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range cqs.Items {
		name, spec := kueue.ClusterQueueReference(cqs.Items[i].Name), queueSpecOf(&cqs.Items[i])
		e.state.SetSpec(name, spec, spec.cohort)
	}
	e.state.Warm(per, pendingKeys, listed)
	e.dirty.Store(true)
	e.opts.log.V(2).Info("Wait time estimator warmed from the cache", "workloads", len(wls.Items), "clusterQueues", len(per))
	return nil
}

// clusterQueueOf is the ClusterQueue a workload is admitted to or, pending,
// the one its LocalQueue points to.
func (e *Estimator) clusterQueueOf(wl *kueue.Workload) (kueue.ClusterQueueReference, bool) {
	if wl.Status.Admission != nil {
		return wl.Status.Admission.ClusterQueue, true
	}
	if wl.Spec.QueueName == "" {
		return "", false
	}
	return e.queues.ClusterQueueFromLocalQueue(utilqueue.KeyFromWorkload(wl))
}
