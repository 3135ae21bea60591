package estimator

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	utilqueue "sigs.k8s.io/kueue/pkg/util/queue"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/kueue-waittime/kueue-waittime/pkg/calibration"
	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
	"github.com/kueue-waittime/kueue-waittime/pkg/stats"
)

// SnapshotSource takes a snapshot of the scheduler cache; Kueue's
// *schdcache.Cache implements it. The estimator takes its own snapshot, off
// the scheduling path, and owns it.
type SnapshotSource interface {
	Snapshot(ctx context.Context, options ...schdcache.SnapshotOption) (*schdcache.Snapshot, error)
}

// QueueSource is the part of Kueue's queue manager (*qcache.Manager) the
// estimator reads: the ordered pending list that the visibility API serves,
// and where a LocalQueue points.
type QueueSource interface {
	PendingWorkloadsInfo(cq kueue.ClusterQueueReference) []*workload.Info
	ClusterQueueFromLocalQueue(lq utilqueue.LocalQueueReference) (kueue.ClusterQueueReference, bool)
}

// Estimator estimates wait times for the pending workloads of a Kueue
// manager. Build it with [New]; it is safe for concurrent use.
type Estimator struct {
	opts       options
	snapshots  SnapshotSource
	queues     QueueSource
	forecaster *forecast.Forecaster

	mu       sync.Mutex
	rng      *rand.Rand
	perQueue map[kueue.ClusterQueueReference]*queueStats
	// specs holds what the snapshot does not carry of each ClusterQueue.
	specs map[kueue.ClusterQueueReference]queueSpec
	// cycleBusy is an EMA of how long the scheduler was busy between the
	// start of one cycle and the moment the next began waiting for heads;
	// lastCycleStart is when the last cycle obtained its heads.
	cycleBusy      *stats.EMA
	lastCycleStart time.Time
	warmed         bool
	// early holds the events seen before warming (see applyOrDefer).
	early        []earlyEvent
	earlyDropped int
	// pending holds, per pending workload, when this estimator saw it
	// arrive and its line in the prediction ledger; admittedAt is when it
	// saw a workload get its quota reservation. API timestamps have
	// one-second resolution; these have the clock's, which matters for
	// short waits and service times. Entries are removed at admission,
	// finish and deletion, so they are bounded by the pending and running
	// workloads.
	pending    map[workload.Reference]trackedWorkload
	admittedAt map[workload.Reference]eventTime

	results atomic.Pointer[Results]
	dirty   atomic.Bool
	panics  atomic.Int64
}

// eventTime is a time this estimator saw something happen, in Unix
// nanoseconds: a third of a time.Time, kept per pending and running
// workload. It drops the monotonic reading; the times it orders come from
// the same clock and are compared with wall times from the API anyway.
type eventTime int64

func eventTimeOf(t time.Time) eventTime { return eventTime(t.UnixNano()) }

func (t eventTime) time() time.Time { return time.Unix(0, int64(t)).UTC() }

// New returns an Estimator reading Kueue's scheduler cache and queue
// manager, or an error for an invalid option.
func New(snapshots SnapshotSource, queues QueueSource, opts ...Option) (*Estimator, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	if snapshots == nil || queues == nil {
		return nil, fmt.Errorf("estimator: a snapshot source and a queue source are required")
	}
	if o.rng == nil {
		seed := uint64(o.clock.Now().UnixNano())
		o.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	}
	f, err := forecast.New(
		forecast.WithSamples(o.forecastSamples),
		forecast.WithHorizonCount(o.forecastDepth),
		forecast.WithHorizonSeconds(o.horizon.Seconds()),
	)
	if err != nil {
		return nil, fmt.Errorf("estimator: %w", err)
	}
	cycleBusy, err := stats.NewEMA(cycleBusyAlpha)
	if err != nil {
		return nil, fmt.Errorf("estimator: %w", err)
	}
	e := &Estimator{
		opts:       o,
		snapshots:  snapshots,
		queues:     queues,
		forecaster: f,
		rng:        o.rng,
		perQueue:   make(map[kueue.ClusterQueueReference]*queueStats),
		specs:      make(map[kueue.ClusterQueueReference]queueSpec),
		cycleBusy:  cycleBusy,
		pending:    make(map[workload.Reference]trackedWorkload),
		admittedAt: make(map[workload.Reference]eventTime),
	}
	e.dirty.Store(true)
	return e, nil
}

// Results returns the latest published results (nil before the first
// refresh; a nil *Results answers every lookup with "not found"). It never
// blocks.
func (e *Estimator) Results() *Results {
	if e == nil {
		return nil
	}
	return e.results.Load()
}

// Panics is how many panics the estimator recovered from.
func (e *Estimator) Panics() int64 { return e.panics.Load() }

// recoverPanic turns a panic in an entry point into a log line and a count:
// an estimator bug must never take the scheduler down.
func (e *Estimator) recoverPanic(where string) {
	if r := recover(); r != nil {
		e.panics.Add(1)
		e.opts.log.Error(fmt.Errorf("panic: %v", r), "Wait time estimator recovered from a panic", "in", where, "stack", string(debug.Stack()))
	}
}

// recoverPanicAsError is recoverPanic for an entry point that returns an
// error: the panic becomes that error.
func (e *Estimator) recoverPanicAsError(where string, err *error) {
	if r := recover(); r != nil {
		e.panics.Add(1)
		e.opts.log.Error(fmt.Errorf("panic: %v", r), "Wait time estimator recovered from a panic", "in", where, "stack", string(debug.Stack()))
		*err = fmt.Errorf("estimator: panic in %s: %v", where, r)
	}
}

// statsFor returns the statistics of a ClusterQueue, creating them. The
// caller holds e.mu.
func (e *Estimator) statsFor(cq kueue.ClusterQueueReference) *queueStats {
	s, ok := e.perQueue[cq]
	if !ok {
		s = e.newQueueStats()
		e.perQueue[cq] = s
	}
	return s
}

// Classify partitions a workload the scheduler could not admit (paper
// Def. 3) against the ClusterQueue snapshot of the cycle: Quotable if some
// flavor of every resource group can hold its demand within nominal quota
// plus maximum borrowing, Unfeasible (with the reason) otherwise. An
// invalid demand or quota, or a nil snapshot, is reported as Quotable with
// no reason: nothing proves it can never fit.
func (e *Estimator) Classify(info *workload.Info, cqs *schdcache.ClusterQueueSnapshot) (adm Admissibility, reason string) {
	adm = Quotable
	if e == nil || info == nil || cqs == nil {
		return adm, ""
	}
	defer e.recoverPanic("Classify")
	c := capacity.Classify(clusterQueueCapacity(cqs), workloadDemand(info))
	if c.Admissibility == capacity.Unfeasible {
		return Unfeasible, c.Reason
	}
	return Quotable, ""
}

// InadmissibleMessage appends the workload's classification to the message
// Kueue writes in the QuotaReserved=False condition of a workload it could
// not admit, so the classification rides on that existing write. The text
// depends only on the quota configuration and the workload, never on time,
// so it never causes a write of its own.
func (e *Estimator) InadmissibleMessage(msg string, info *workload.Info, cqs *schdcache.ClusterQueueSnapshot) string {
	if e == nil || cqs == nil {
		return msg
	}
	adm, reason := e.Classify(info, cqs)
	suffix := "the workload is Quotable"
	if adm == Unfeasible {
		suffix = "the workload is Unfeasible: " + reason
	}
	if msg == "" {
		return "Wait time estimation: " + suffix
	}
	return msg + ". Wait time estimation: " + suffix
}

// cycleBusyAlpha smooths the scheduler's busy time per cycle: about the
// last ten cycles count.
const cycleBusyAlpha = 0.1

// ObserveCycle records a scheduling cycle that began waiting for heads at
// waitStart and obtained them at start. Kueue pops at most one head per
// ClusterQueue per cycle, so two admissions into one ClusterQueue are at
// least a busy cycle apart: the time from the previous cycle's start to
// waitStart, which is the previous cycle's work plus the loop's backoff
// (at most milliseconds), and not the time spent blocked waiting for heads.
// That spacing, smoothed, caps the forecast's admission rate. Out-of-order
// or zero times are ignored.
func (e *Estimator) ObserveCycle(waitStart, start time.Time) {
	if e == nil {
		return
	}
	defer e.recoverPanic("ObserveCycle")
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.lastCycleStart.IsZero() && !waitStart.Before(e.lastCycleStart) {
		e.cycleBusy.Observe(waitStart.Sub(e.lastCycleStart).Seconds())
	}
	if start.After(e.lastCycleStart) {
		e.lastCycleStart = start
	}
}

// ObserveAdmission records that the scheduler reserved quota for wl (the
// object as written, with its admission) at now: the wait feeds the EMA
// baseline, the admission the throughput and latency statistics, and the
// workload's line in the prediction ledger is scored and reported.
//
// Every replica also records admissions from the Workload informer's
// updates (see the event handler), so that replicas which do not schedule
// measure the same statistics; whichever of the two comes first is
// recorded, the other is ignored.
func (e *Estimator) ObserveAdmission(wl *kueue.Workload, now time.Time) {
	if e == nil || wl == nil || wl.Status.Admission == nil {
		return
	}
	defer e.recoverPanic("ObserveAdmission")
	score, outcome := e.recordAdmissionUnderLock(wl, now)
	e.dirty.Store(true)
	e.reportAdmission(wl.Status.Admission.ClusterQueue, score, outcome)
}

// recordAdmissionUnderLock is recordAdmission holding e.mu, released
// however recordAdmission returns.
func (e *Estimator) recordAdmissionUnderLock(wl *kueue.Workload, now time.Time) (Score, admissionOutcome) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.recordAdmission(wl, now)
}

// admissionOutcome is what recording an admission did.
type admissionOutcome uint8

const (
	// admissionScored: the workload's ledger line was scored.
	admissionScored admissionOutcome = iota
	// admissionUnscored: it had no ledger line (no estimate was published
	// for it).
	admissionUnscored
	// admissionAlreadyRecorded: this admission was recorded before (by the
	// scheduler's call or the informer's update, whichever came first).
	admissionAlreadyRecorded
)

// reportAdmission tells the metrics reporter how an admission was scored.
// It takes no lock.
func (e *Estimator) reportAdmission(cq kueue.ClusterQueueReference, score Score, outcome admissionOutcome) {
	switch outcome {
	case admissionUnscored:
		if e.opts.reporter != nil {
			e.opts.reporter.ReportUnscored(cq, AdmittedBeforeEstimate)
		}
	case admissionScored:
		e.opts.log.V(3).Info("Wait time predictions scored at admission", "workload", score.Workload, "clusterQueue", cq,
			"method", score.Method, "estimatedAt", score.EstimatedAt, "actual", score.Actual,
			"forecast", score.Forecast.Wait, "ema", score.EMA.Wait, "paper", score.Paper.Wait)
		if e.opts.reporter != nil {
			e.opts.reporter.ReportScore(score)
		}
	}
}

// recordAdmission updates the statistics for an admission and scores the
// workload's ledger line, once per admission: a workload already recorded
// as admitted (and not finished or preempted since) is left alone. The
// caller holds e.mu.
func (e *Estimator) recordAdmission(wl *kueue.Workload, now time.Time) (Score, admissionOutcome) {
	cq := wl.Status.Admission.ClusterQueue
	key := workload.Key(wl)
	if _, ok := e.admittedAt[key]; ok {
		return Score{}, admissionAlreadyRecorded
	}
	since := queuedSince(wl)
	p := e.pending[key]
	if at, ok := p.arrivedAt(wl.CreationTimestamp.Time); ok && at.After(since) {
		since = at
	}
	delete(e.pending, key)
	e.admittedAt[key] = eventTimeOf(now)
	s := e.statsFor(cq)
	s.waits.Observe(max(now.Sub(since), 0).Seconds())
	s.admissions.ObserveAt(now)
	if !s.freedAt.IsZero() {
		if d := now.Sub(s.freedAt); d >= 0 {
			s.admissionLatency.Observe(d.Seconds())
		}
		s.freedAt = time.Time{}
	}
	if !s.preemptedAt.IsZero() {
		if d := now.Sub(s.preemptedAt); d >= 0 {
			s.preemptionDelay.Observe(d.Seconds())
		}
		s.preemptedAt = time.Time{}
	}
	score, ok := p.score(key, cq, priorityOf(wl), since, now)
	if !ok {
		return score, admissionUnscored
	}
	s.observeScore(score, now)
	if score.Forecast.OK {
		s.observeCalibration(now, p.stamp.calibration, priorityOf(wl), float64(p.p50), float64(p.p90), score.Actual.Seconds())
	}
	return score, admissionScored
}

// Start runs the refresh loop until ctx is done: every refresh period, if
// anything was observed since the last refresh, the results are older than
// the maximum staleness, or an admission their P50s predicted is overdue
// (see needsRefresh), it recomputes and publishes every ClusterQueue's
// model and forecasts. It first warm-starts from the reader
// given by [WithWarmStart], if any; without one the event handlers count
// from now. It implements controller-runtime's manager.Runnable.
func (e *Estimator) Start(ctx context.Context) error {
	e.warmStart(ctx)
	now := e.opts.clock.Now()
	timer := time.NewTimer(nextRefresh(now, e.opts.refreshPeriod, e.opts.refreshPeriod).Sub(now))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		delay := e.opts.refreshPeriod
		now := e.opts.clock.Now()
		if needsRefresh(e.dirty.Load(), now, e.Results(), e.opts.maxStaleness) {
			e.Refresh(ctx)
			delay = refreshDelay(e.opts.refreshPeriod, e.opts.clock.Since(now))
		}
		after := e.opts.clock.Now()
		timer.Reset(nextRefresh(after, delay, e.opts.refreshPeriod).Sub(after))
	}
}

// nextRefresh is when to look again, at least about delay after now: the
// first multiple of period (counted from the zero time, so whole seconds
// for a 1s period) at or after now + delay − period, and after now. Every
// replica of the manager thus refreshes on the same wall-clock ticks, from
// the same informer state, and serves the same estimates; one that
// refreshed at its own phase would answer up to a period apart, with
// another "now" in its forecast.
func nextRefresh(now time.Time, delay, period time.Duration) time.Time {
	if period <= 0 {
		return now.Add(delay)
	}
	next := now.Add(delay).Truncate(period)
	if !next.After(now) {
		next = next.Add(period)
	}
	return next
}

// needsRefresh says whether the published results r are to be recomputed
// at now: something was observed since (dirty); they are older than
// maxStaleness; or the earliest admission one of their P50s predicts has
// passed, so that "still pending" is news that changes the forecasts (the
// remaining service of what runs, the phase of the cycle). Without the
// last rule two replicas that refresh at different moments publish, for
// up to maxStaleness, forecasts of admissions that already failed to
// happen on one and not the other.
func needsRefresh(dirty bool, now time.Time, r *Results, maxStaleness time.Duration) bool {
	if dirty || now.Sub(r.At()) >= maxStaleness {
		return true
	}
	return r != nil && !r.firstDue.IsZero() && !now.Before(r.firstDue)
}

// warmStart runs WarmStart with the reader given by WithWarmStart, if any.
// Whatever happens there, an error or a recovered panic, the estimator
// comes out warmed: its statistics then start empty and fill from events,
// rather than every event being dropped for ever.
func (e *Estimator) warmStart(ctx context.Context) {
	defer e.markWarmed()
	if e.opts.warmStartFrom == nil {
		return
	}
	if err := e.WarmStart(ctx, e.opts.warmStartFrom); err != nil {
		e.opts.log.Error(err, "Wait time estimator could not warm start; starting without history")
	}
}

func (e *Estimator) markWarmed() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.warmed {
		e.replayEarlyEvents(nil)
	}
	e.warmed = true
}

// maxRefreshShare is the largest share of one CPU the refresh loop takes:
// after a refresh that took d, the next one waits at least d/maxRefreshShare.
const maxRefreshShare = 0.2

// refreshDelay is the wait before the next refresh: the configured period,
// stretched when the last refresh took longer than maxRefreshShare of it
// (a ClusterQueue with 100,000 pending workloads takes about a second), so
// that the estimator never competes with the scheduler for a whole CPU.
func refreshDelay(period, lastRefresh time.Duration) time.Duration {
	if lastRefresh <= 0 {
		return period
	}
	return max(period, time.Duration(float64(lastRefresh)/maxRefreshShare))
}

// NeedLeaderElection tells controller-runtime to run the refresh loop on
// every replica: the visibility API is served by all of them.
func (e *Estimator) NeedLeaderElection() bool { return false }

// Refresh recomputes and publishes the results now. Start calls it; tests
// and benchmarks may call it directly.
func (e *Estimator) Refresh(ctx context.Context) {
	defer e.recoverPanic("Refresh")
	e.dirty.Store(false)
	start := e.opts.clock.Now()
	snap, err := e.snapshots.Snapshot(ctx)
	if err != nil {
		e.opts.log.V(4).Info("Wait time estimator could not take a snapshot", "err", err)
		e.dirty.Store(true)
		return
	}
	prev := e.Results()
	// Sized for as many as last time: the pending set changes little
	// between refreshes.
	next := newResults(start, prev.pendingCount())
	ledger := &ledgerWriter{e: e}
	for _, cqs := range snap.ClusterQueues() {
		e.refreshQueue(start, cqs, next, ledger)
	}
	ledger.flush()
	e.results.Store(next)
	if r := e.opts.reporter; r != nil {
		for _, m := range next.queues {
			r.ReportQueueModel(m)
		}
		for name := range prev.Queues() {
			if _, ok := next.queues[name]; !ok {
				r.ClearQueueModel(name)
			}
		}
		r.ReportRefresh(RefreshReport{PublishedAt: start, Duration: e.opts.clock.Since(start), MaxStaleness: e.opts.maxStaleness})
	}
	e.opts.log.V(4).Info("Wait time estimates refreshed", "clusterQueues", len(next.queues),
		"pendingWorkloads", next.pendingCount(), "duration", e.opts.clock.Since(start))
}

// refreshQueue computes one ClusterQueue's model and forecasts into out,
// and gives the ledger the first estimate of each workload.
func (e *Estimator) refreshQueue(now time.Time, cqs *schdcache.ClusterQueueSnapshot, out *Results, ledger *ledgerWriter) {
	defer e.recoverPanic("refreshQueue")
	capModel := clusterQueueCapacity(cqs)
	pending := e.queues.PendingWorkloadsInfo(cqs.Name)

	in := e.queueInputs(cqs, len(pending))
	admitted, view, strategy, cyclePeriod, rng := in.admitted, in.view, in.spec.strategy, in.cyclePeriod, in.rng
	model := QueueModel{ClusterQueue: cqs.Name, At: now, PendingWorkloads: len(pending)}
	if view.hasEMA {
		model.EMAWait, model.HasEMA = seconds(view.ema), true
	}
	model.P50Coverage, model.P90Coverage, model.HasCoverage = view.p50Coverage, view.p90Coverage, view.hasCoverage
	model.ScoredWorkloads = view.scored
	switch {
	case e.opts.admissionFairShare && in.spec.admissionScope:
		model.UnmodelledOrdering = OrderingAdmissionFairSharing
	case e.opts.fairSharing && cqs.HasParent():
		model.UnmodelledOrdering = OrderingFairSharing
	}
	if view.calibrated {
		model.Calibrated = true
		model.P50Adjustment, model.P90Adjustment = math.Exp(view.calibration.q50), math.Exp(view.calibration.q90)
	}

	queue := forecast.Queue{
		Capacity:                forecastCapacity(capModel),
		Policy:                  policyOf(strategy),
		CyclePeriodSeconds:      finiteNonNegative(cyclePeriod),
		AdmissionLatencySeconds: finiteNonNegative(view.admissionLatency),
		Running:                 make([]forecast.Running, 0, len(cqs.Workloads)),
		Pending:                 make([]forecast.Pending, 0, len(pending)),
		WithinClusterQueue:      preemptionOf(in.spec.withinClusterQueue),
		PreemptionDelaySeconds:  finiteNonNegative(view.preemptionDelay),
		// Kueue's job integrations stop an evicted job's pods: a preempted
		// workload starts over when readmitted.
		PreemptedRestart: true,
	}
	classes := make(map[string]*capacity.Class)
	addClass := func(w capacity.Workload) {
		k := fmt.Sprint(w.PodSets)
		if c, ok := classes[k]; ok {
			c.Rate++
			return
		}
		classes[k] = &capacity.Class{Workload: w, Rate: 1}
	}
	var maxExecSum float64
	var maxExecCount int
	shapes := make(arrivalShapes)
	for _, info := range cqs.Workloads {
		r := forecast.Running{Usage: runningUsage(info), MaxExecutionSeconds: maxExecutionSeconds(info.Obj), Priority: priorityOf(info.Obj)}
		shapes.addRunning(r.Priority, r)
		at, ok := admitted[workload.Key(info.Obj)]
		if !ok {
			at, ok = admissionTime(info.Obj)
		}
		if ok {
			r.AgeSeconds = max(now.Sub(at).Seconds(), 0)
		}
		if r.MaxExecutionSeconds > 0 {
			maxExecSum += r.MaxExecutionSeconds
			maxExecCount++
		}
		queue.Running = append(queue.Running, r)
		addClass(workloadDemand(info))
	}
	classifications := make([]capacity.Classification, len(pending))
	for i, info := range pending {
		demand := workloadDemand(info)
		classifications[i] = capacity.Classify(capModel, demand)
		quotable := classifications[i].Admissibility != capacity.Unfeasible
		if !quotable {
			model.UnfeasibleWorkloads++
		} else {
			addClass(demand)
		}
		p := forecast.Pending{
			ID:                  string(workload.Key(info.Obj)),
			Options:             demandOptions(capModel, demand),
			Quotable:            quotable,
			MaxExecutionSeconds: maxExecutionSeconds(info.Obj),
			Priority:            priorityOf(info.Obj),
		}
		if p.MaxExecutionSeconds > 0 {
			maxExecSum += p.MaxExecutionSeconds
			maxExecCount++
		}
		queue.Pending = append(queue.Pending, p)
		shapes.addPending(p)
	}
	queue.Arrivals = higherPriorityArrivals(view.priorityRates, queue.Pending, shapes)

	e.fillQueueModel(&model, capModel, classes, view)
	out.queues[cqs.Name] = model

	method, service := e.serviceModel(view, maxExecSum, maxExecCount)
	var estimates []forecast.Estimate
	if service != nil && len(pending) > 0 {
		queue.Service = service
		var err error
		estimates, err = e.forecaster.Forecast(queue, rng)
		if err != nil {
			e.opts.log.V(4).Info("Wait time forecast failed", "clusterQueue", cqs.Name, "err", err)
			estimates = nil
		}
	}
	stamp := &estimateStamp{clusterQueue: cqs.Name, at: now}
	ledgerStamp := newLedgerStamp(&model, method, view.calibration)
	horizon := e.opts.horizon.Seconds()
	for i, info := range pending {
		key := workload.Key(info.Obj)
		est := WorkloadEstimate{ClusterQueue: cqs.Name, Admissibility: Quotable, Method: MethodNone, EstimatedAt: now}
		if classifications[i].Admissibility == capacity.Unfeasible {
			est.Admissibility, est.Reason = Unfeasible, classifications[i].Reason
		} else if estimates != nil && i < len(estimates) && estimates[i].Method != forecast.MethodUnfeasible {
			f := estimates[i]
			est.Method, est.HasWait = method, true
			est.ExpectedWait = seconds(f.ExpectedWaitSeconds)
			p50, p90 := view.calibration.publishFor(queue.Pending[i].Priority, f.P50Seconds, f.P90Seconds)
			est.P50, est.P90 = seconds(min(p50, horizon)), seconds(min(p90, horizon))
			if p90 > horizon {
				est.BeyondHorizon = true
			}
			est.EstimatedAdmission = now.Add(est.ExpectedWait)
			est.BeyondHorizon = est.BeyondHorizon || f.Clamped
		}
		out.add(key, store(est, stamp), est.Reason)
		if est.Admissibility == Quotable {
			var f forecast.Estimate
			if est.HasWait {
				f = estimates[i]
			}
			ledger.add(key, ledgerLine(ledgerStamp, est.HasWait, f.ExpectedWaitSeconds, f.P50Seconds, f.P90Seconds))
		}
	}
}

// queueInputs is what a refresh of one ClusterQueue reads from the
// estimator's guarded state, copied under the lock.
type queueInputs struct {
	admitted    map[workload.Reference]time.Time
	view        statsView
	spec        queueSpec
	cyclePeriod float64
	rng         *rand.Rand
}

func (e *Estimator) queueInputs(cqs *schdcache.ClusterQueueSnapshot, pending int) queueInputs {
	e.mu.Lock()
	defer e.mu.Unlock()
	in := queueInputs{admitted: make(map[workload.Reference]time.Time, len(cqs.Workloads))}
	for key := range cqs.Workloads {
		if at, ok := e.admittedAt[key]; ok {
			in.admitted[key] = at.time()
		}
	}
	s := e.statsFor(cqs.Name)
	s.pending = pending
	in.view = s.view()
	meanService := e.opts.priorMeanService.Seconds()
	if in.view.hasService {
		meanService = in.view.serviceMean
	}
	in.view.calibration = s.currentCalibration(calibrationScale(meanService))
	in.view.calibrated = s.cal50.Scores() >= calibration.DefaultMinScores
	in.spec = e.specs[cqs.Name]
	in.cyclePeriod, _ = e.cycleBusy.Value()
	in.rng = rand.New(rand.NewPCG(e.rng.Uint64(), e.rng.Uint64()))
	return in
}

// serviceModel picks the service law of a forecast: the observed sample
// once there are enough completions (MethodForecast), else an exponential
// prior (MethodAPriori) from the configured mean or, failing that, the mean
// maximum execution time of the known workloads (an upper bound, so the
// forecast errs long); nil when there is nothing to go on.
func (e *Estimator) serviceModel(v statsView, maxExecSum float64, maxExecCount int) (Method, forecast.ServiceModel) {
	if v.hasService && len(v.serviceSample) >= e.opts.minServiceSamples {
		if m, err := forecast.NewEmpirical(v.serviceSample); err == nil {
			return MethodForecast, m
		}
	}
	prior := e.opts.priorMeanService.Seconds()
	if prior <= 0 && maxExecCount > 0 {
		prior = maxExecSum / float64(maxExecCount)
	}
	if prior > 0 {
		if m, err := forecast.NewExponential(prior); err == nil {
			return MethodAPriori, m
		}
	}
	return MethodNone, nil
}

// forecastCapacity is what the ClusterQueue can use now: nominal quota plus
// what it could borrow at this instant, per flavor-resource (saturating at
// capacity.Unlimited through Quantities.Add).
func forecastCapacity(cq *capacity.ClusterQueue) capacity.Quantities {
	nominal, borrowable := make(capacity.Quantities), make(capacity.Quantities)
	for _, g := range cq.ResourceGroups {
		for _, f := range g.Flavors {
			for i, r := range g.Resources {
				fr := capacity.FlavorResource{Flavor: f.Name, Resource: r}
				nominal[fr], borrowable[fr] = f.Quotas[i].Nominal, f.Quotas[i].ExpectedBorrowable
			}
		}
	}
	nominal.Add(borrowable)
	return nominal
}

func seconds(s float64) time.Duration {
	if !(s > 0) {
		return 0
	}
	if s >= math.MaxInt64/float64(time.Second) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(s * float64(time.Second))
}

func finiteNonNegative(v float64) float64 {
	if !(v > 0) || math.IsInf(v, 0) {
		return 0
	}
	return v
}
