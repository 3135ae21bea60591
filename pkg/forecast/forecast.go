package forecast

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// Policy is the ClusterQueue's queueing strategy.
type Policy int

const (
	// BestEffortFIFO: a pending workload that does not fit is passed over
	// and the next one in order may be admitted.
	BestEffortFIFO Policy = iota
	// StrictFIFO: a pending workload that does not fit blocks every
	// workload behind it.
	StrictFIFO
)

func (p Policy) String() string {
	switch p {
	case BestEffortFIFO:
		return "BestEffortFIFO"
	case StrictFIFO:
		return "StrictFIFO"
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// PreemptionPolicy is the ClusterQueue's spec.preemption.withinClusterQueue:
// which running workloads of the same ClusterQueue a pending workload that
// does not fit may preempt. The zero value is [PreemptionNever].
type PreemptionPolicy int

const (
	// PreemptionNever: nothing is preempted; a workload that does not fit
	// waits for completions.
	PreemptionNever PreemptionPolicy = iota
	// PreemptionLowerPriority: running workloads of strictly lower
	// priority may be preempted.
	PreemptionLowerPriority
	// PreemptionLowerOrNewerEqualPriority: also running workloads of equal
	// priority that come after the preemptor in queue order (newer).
	PreemptionLowerOrNewerEqualPriority
)

func (p PreemptionPolicy) String() string {
	switch p {
	case PreemptionNever:
		return "Never"
	case PreemptionLowerPriority:
		return "LowerPriority"
	case PreemptionLowerOrNewerEqualPriority:
		return "LowerOrNewerEqualPriority"
	}
	return fmt.Sprintf("PreemptionPolicy(%d)", int(p))
}

// Running is one admitted workload that still holds quota.
type Running struct {
	// Usage is the quota it holds, already assigned to flavors.
	Usage capacity.Quantities
	// AgeSeconds is how long it has been running (NaN or negative: 0).
	AgeSeconds float64
	// MaxExecutionSeconds is Kueue's maximumExecutionTimeSeconds; 0 (or
	// NaN, negative, +Inf) means none. With a bound m the residual is at
	// most m − age, and a workload with age ≥ m ends now.
	MaxExecutionSeconds float64
	// Priority decides whether it may be preempted (see
	// [Queue.WithinClusterQueue]). Preempted, it goes back into the
	// pending order ahead of the pending workloads of its priority (it was
	// created before them, and Kueue requeues an evicted workload by its
	// creation time).
	Priority int32
	// ServiceClass names its service law in [Queue.ServiceClasses] (see
	// there); 0 means none.
	ServiceClass int32
	// LocalQueue names its LocalQueue in
	// [Queue.AdmissionFairSharing].LocalQueues, counted from 1: its end
	// lowers that LocalQueue's admitted usage. Ignored without admission
	// fair sharing.
	LocalQueue int32
}

// Pending is one pending workload, given in the order Kueue will try them
// (the visibility API's order, which is by priority, then queue order; with
// [Queue.AdmissionFairSharing], by its LocalQueue's usage first).
type Pending struct {
	ID string
	// Options are its demands, one per flavor assignment Kueue would try,
	// in order; the first that fits the free quota is taken. Options that
	// cannot fit even the whole of [Queue.Capacity] are dropped.
	Options []capacity.Quantities
	// Quotable is the partition of paper Def. 3. A workload that is not
	// Quotable (Unfeasible) is skipped entirely: it neither waits nor
	// blocks, and its [Estimate] is not Quotable.
	Quotable bool
	// ServiceClass names its service law in [Queue.ServiceClasses] (see
	// there); 0 means none.
	ServiceClass int32
	// MaxExecutionSeconds bounds its service time as for [Running].
	MaxExecutionSeconds float64
	// Priority orders it against [Arrival] classes and decides what it may
	// preempt and be preempted by (see [Queue.WithinClusterQueue]). The
	// pending list is in Kueue's order, so priorities do not increase
	// along it (without [Queue.AdmissionFairSharing]; with it, within
	// each LocalQueue).
	Priority int32
	// Untried says that the scheduler has not tried it yet (it has not
	// found it inadmissible): if it is admitted before the roll passes
	// over any pending workload, it is admitted as a workload at its first
	// attempt is (see [Queue.FirstAttemptLatencySample]).
	Untried bool
	// WaitedSeconds is how long an Untried workload has waited since it
	// arrived (NaN or negative: 0). Ignored for any other.
	WaitedSeconds float64
	// LocalQueue names its LocalQueue in
	// [Queue.AdmissionFairSharing].LocalQueues, counted from 1, whose
	// usage orders it. Ignored without admission fair sharing.
	LocalQueue int32
}

// Arrival is a class of future workloads that arrive as a Poisson process
// while the queue drains and are placed ahead of every pending workload of
// lower priority (behind those of equal or higher priority, and behind
// earlier arrivals of the same priority). Under BestEffortFIFO they may
// also backfill capacity that a blocked workload ahead of them cannot use.
// A class with rate 0 or with no option that fits the capacity is ignored.
type Arrival struct {
	RatePerSecond       float64
	Options             []capacity.Quantities
	Priority            int32
	MaxExecutionSeconds float64
	// UntilSeconds is when the class stops arriving, in seconds from now:
	// the roll draws its arrivals in [0, UntilSeconds) only. 0 or +Inf
	// means for the whole horizon. A rate measured over a short window
	// (the first minute of a burst) says nothing about the days after it;
	// extrapolated over the whole horizon, a higher-priority load at or
	// above the capacity holds every lower-priority workload back until
	// the horizon in most replicas. The caller bounds it by the span over
	// which it measured the rate.
	UntilSeconds float64
	// ServiceClass names the class's service law in
	// [Queue.ServiceClasses] (see there); 0 means none.
	ServiceClass int32
}

// Queue is the live snapshot of one ClusterQueue. Times are seconds
// relative to now = 0.
type Queue struct {
	// Capacity is what the ClusterQueue may use (nominal, or nominal plus
	// the borrowing the caller expects). A dimension set to
	// capacity.Unlimited never constrains; a dimension that is missing has
	// capacity 0.
	Capacity capacity.Quantities
	Running  []Running
	Pending  []Pending
	Policy   Policy
	// Service describes service times; it must not be nil.
	Service ServiceModel
	// Lent is quota of this ClusterQueue that it lent to its cohort and
	// that other ClusterQueues' workloads hold now: Kueue's Available is
	// below the nominal quota less the ClusterQueue's own usage by this
	// much. It is not free at the start of the roll and comes back as
	// LentHolders end. Dimensions outside Capacity are ignored.
	Lent capacity.Quantities
	// LentHolders are running workloads of other ClusterQueues of the
	// cohort whose ends return the lent quota: each returns its usage, up
	// to what is still lent (the first to end returns first: Kueue gives
	// freed quota to a ClusterQueue within its nominal quota before it
	// lends it again). Their residual service is drawn from Service (their
	// own ClusterQueue's law is not known here), bounded as a Running's by
	// MaxExecutionSeconds − AgeSeconds; a caller that models a reclaim by
	// preemption lowers that bound to the reclaim's delay. They never
	// wait, preempt or are preempted in the roll. With Lent empty they are
	// ignored; without holders lent quota never comes back.
	LentHolders []Running
	// ServiceByPriority, when set, gives the service law of the workloads
	// of some priorities — running (their residuals), pending, arriving
	// and preempted alike; a workload of any other priority draws from
	// Service. Each model must satisfy what Service must. Service and
	// ServiceClasses are resampled per replica where they are a
	// [Bootstrap]; a Bootstrap here is used as its [Empirical] sample. A caller that measures service
	// times per priority passes those with a large enough sample: in a
	// ClusterQueue where urgent work is short and batch work long, the
	// pooled law makes the batch workloads ahead of a low-priority one
	// too short and the urgent arrivals that pass it too long.
	ServiceByPriority map[int32]ServiceModel
	// ServiceClasses, when set, are service laws that workloads name by
	// their ServiceClass, counted from 1: a running, pending or arriving
	// workload whose ServiceClass is c, 1 ≤ c ≤ len(ServiceClasses), draws
	// its service (a running one its residual, a preempted one what it has
	// left of its draw) from ServiceClasses[c−1] in place of
	// ServiceByPriority and Service. Any other ServiceClass, 0 included,
	// names none. Each model must satisfy what Service must; a
	// [Bootstrap] here is resampled per replica, as Service is (O(n) per
	// replica for n observations). A caller that measures
	// service times per demand shape passes these: in a BestEffortFIFO
	// ClusterQueue where large workloads run longer than the small ones
	// that pass them, one law for both lets the large ones that run free
	// their quota too early, and the large pending ones' forecasts come
	// out short.
	ServiceClasses []ServiceModel
	// CyclePeriodSeconds is the smallest gap between two admissions in this
	// ClusterQueue (Kueue admits at most one head per ClusterQueue per
	// scheduling cycle); 0 means no cap.
	CyclePeriodSeconds float64
	// AdmissionLatencySeconds is the fixed delay from "fits" to "admitted"
	// (quota is held from the decision; service starts at admission).
	AdmissionLatencySeconds float64
	// AdmissionLatencySample, when not empty, holds measured admission
	// latencies in seconds (the caller keeps a bounded reservoir of them).
	// Every admission of the roll then draws its latency uniformly from
	// the sample, L ~ U{l₁, …, lₘ}, independently of the others, in place
	// of AdmissionLatencySeconds, so that the spread of the latency enters
	// the quantiles and not only its mean. AdmissionLatencySeconds still
	// sets the default PreemptionDelaySeconds and the eviction's share of
	// it. Every value must be finite and ≥ 0.
	AdmissionLatencySample []float64
	// FirstAttemptLatencySample, when not empty, holds measured delays in
	// seconds from the arrival of a workload to its admission, for
	// workloads the scheduler admitted at its first attempt: the arrival's
	// event, the wait for the next cycle, the cycle and the admission's
	// write. A [Pending.Untried] workload admitted in a replica before
	// any pending workload was passed over (it did not fit, or needed a
	// preemption) — at the first admission opportunity, or at one of the
	// cycles right after it while all that is pending fits, as a burst's
	// workloads are — is admitted L − w from now, or at its turn if that
	// comes later, where w is its WaitedSeconds and L a uniform draw from
	// the values of the sample above w: the rest of a first attempt that
	// has not come in w seconds. That replaces the cycle's phase and an
	// admission latency, which time the longer path from a completion to
	// the next admission (the completion's write, the release, the
	// requeue, a cycle and the admission's write). With no value above w
	// it is admitted as any other workload. Every value must be finite
	// and ≥ 0.
	FirstAttemptLatencySample []float64
	// RandomCyclePhase says that now falls at an unknown point of the
	// scheduler's cycle: each replica's first admission opportunity comes
	// U·CyclePeriodSeconds from now, U ~ Uniform[0, 1) drawn per replica,
	// instead of at once (the refresh that rolls the queue runs apart
	// from the scheduler, so its phase is uniform). No effect when
	// CyclePeriodSeconds is 0.
	RandomCyclePhase bool
	// PreemptionDelaySeconds is the fixed delay from a preemption decision
	// to the preemptor's admission: the victims' eviction, then the
	// admission. 0 means 2·AdmissionLatencySeconds (an eviction takes about
	// as long as an admission). The decision itself comes one admission
	// latency after the roll tries the preemptor, or a draw from
	// PreemptionReactionSample.
	PreemptionDelaySeconds float64
	// PreemptionReactionSample, when not empty, holds measured delays in
	// seconds from a preemptor's arrival to its preemption decision (a
	// caller that sees only the victims' eviction measures up to its
	// sighting, and counts PreemptionDelaySeconds from there). Each
	// preemption of the roll then comes a uniform draw R from it after
	// the roll tries the preemptor, in place of an admission latency —
	// which times the longer path from a completion to the admission's
	// write and sighting. A [Pending.Untried] preemptor tried in a replica
	// before any pending workload was passed over is decided R − w from
	// now, or at once when the roll tries it later, where w is its
	// WaitedSeconds and R a draw from the values above w (as with
	// FirstAttemptLatencySample); with no value above w it takes a plain
	// draw. Every value must be finite and ≥ 0.
	PreemptionReactionSample []float64
	// PreemptionDelaySample, when not empty, holds measured delays in
	// seconds from a preemption decision (or from where the reactions of
	// PreemptionReactionSample end) to the preemptor's admission: each
	// preemption of the roll draws its delay d uniformly from it in place
	// of PreemptionDelaySeconds, and its victims stop max(d −
	// AdmissionLatencySeconds, 0) after the decision. Every value must be
	// finite and ≥ 0.
	PreemptionDelaySample []float64
	// Arrivals are optional future arrivals (see [Arrival]).
	Arrivals []Arrival
	// WithinClusterQueue is the preemption policy within the ClusterQueue
	// (see [Forecaster.Forecast] for how the roll preempts). Preemption
	// across a cohort (reclaimWithinCohort, borrowWithinCohort) is not
	// modelled: the roll sees one ClusterQueue.
	WithinClusterQueue PreemptionPolicy
	// PreemptedRestart says that a preempted workload runs its whole
	// service again when readmitted — a Job whose pods Kueue's job
	// integration deletes on eviction restarts from scratch — rather than
	// only the service it had left (a workload that checkpoints).
	PreemptedRestart bool
	// AdmissionFairSharing, when set, orders the pending workloads by
	// their LocalQueues' usage as Kueue's admission fair sharing does,
	// and grows and decays that usage over the roll (see
	// [AdmissionFairSharing]); Pending is then in Kueue's order with it
	// (the visibility API's). Nil: the order of Pending, with priorities
	// not increasing along it.
	AdmissionFairSharing *AdmissionFairSharing
}

// Estimate is the forecast for one pending workload. All times are seconds
// from now, finite, ≥ 0 and at most the horizon; P50 ≤ P90. For a workload
// that is not Quotable the times are 0 and carry no meaning. How the
// estimate was made (which service model) is the caller's choice and the
// caller's to report: the package has no enumeration of methods.
type Estimate struct {
	ID       string
	Quotable bool
	// ExpectedWaitSeconds is the mean remaining wait until admission.
	ExpectedWaitSeconds float64
	// P50Seconds and P90Seconds are quantiles of the remaining wait.
	P50Seconds float64
	P90Seconds float64
	// AdmissionOffsetSeconds is when admission is expected, relative to now
	// (the adapter adds it to now to publish an admission time). Waits are
	// measured from now, so it equals ExpectedWaitSeconds.
	AdmissionOffsetSeconds float64
	// Extrapolated is set for workloads beyond the count horizon, whose
	// figures come from the simulated admission throughput rather than the
	// roll itself.
	Extrapolated bool
	// Clamped is set when the horizon cut any of the figures: the true
	// value may be larger. It happens in long overloads, behind a
	// StrictFIFO head that never fits, and for workloads none of whose
	// options fits the whole capacity.
	Clamped bool
}

// Defaults of a [Forecaster] built without options.
const (
	DefaultSamples        = 48
	DefaultHorizonCount   = 128
	DefaultHorizonSeconds = 7 * 24 * 3600.0
)

// Limits on the options, to keep a forecast's cost bounded.
const (
	MaxSamples      = 1 << 16
	MaxHorizonCount = 1 << 20
)

// ErrInvalidOption is wrapped by [New] for a bad option value.
var ErrInvalidOption = errors.New("invalid forecaster option")

// ErrInvalidQueue is wrapped by [Forecaster.Forecast] when the queue as a
// whole cannot be forecast (no service model, bad policy, bad cycle
// period...). Bad per-workload numbers are sanitized instead (see the field
// docs), so one odd workload never hides the forecast of the others.
var ErrInvalidQueue = errors.New("invalid queue")

// Forecaster holds the tuning of the Monte Carlo roll. It is immutable and
// safe for concurrent use; each [Forecaster.Forecast] call takes its own
// random source.
type Forecaster struct {
	samples        int
	horizonCount   int
	horizonSeconds float64
	// independentReplicas draws every replica afresh instead of in
	// antithetic pairs (see replicaSource); only the tests that measure
	// what the pairing buys set it.
	independentReplicas bool
}

// Option configures a [Forecaster].
type Option func(*Forecaster) error

// WithSamples sets the number of Monte Carlo replicas R (1 ≤ R ≤
// [MaxSamples]; default [DefaultSamples]). The standard error of an
// expected wait shrinks as 1/√R; the cost grows linearly.
func WithSamples(n int) Option {
	return func(f *Forecaster) error {
		if n < 1 || n > MaxSamples {
			return fmt.Errorf("%w: samples %d not in [1, %d]", ErrInvalidOption, n, MaxSamples)
		}
		f.samples = n
		return nil
	}
}

// WithHorizonCount sets H, how many quotable pending workloads (from the
// head) are rolled forward (1 ≤ H ≤ [MaxHorizonCount]; default
// [DefaultHorizonCount]). Later ones are extrapolated. H should exceed the
// depth at which BestEffortFIFO backfilling matters in the queue.
func WithHorizonCount(n int) Option {
	return func(f *Forecaster) error {
		if n < 1 || n > MaxHorizonCount {
			return fmt.Errorf("%w: horizon count %d not in [1, %d]", ErrInvalidOption, n, MaxHorizonCount)
		}
		f.horizonCount = n
		return nil
	}
}

// WithHorizonSeconds sets the time horizon T: no figure exceeds T, and a
// figure cut by it is flagged [Estimate.Clamped] (T finite and > 0; default
// [DefaultHorizonSeconds], 7 days).
func WithHorizonSeconds(s float64) Option {
	return func(f *Forecaster) error {
		if !(s > 0) || math.IsInf(s, 0) {
			return fmt.Errorf("%w: horizon %v s must be finite and > 0", ErrInvalidOption, s)
		}
		f.horizonSeconds = s
		return nil
	}
}

// New returns a [Forecaster] with the defaults changed by opts, or the first
// option error (wrapping [ErrInvalidOption]).
func New(opts ...Option) (*Forecaster, error) {
	f := &Forecaster{
		samples:        DefaultSamples,
		horizonCount:   DefaultHorizonCount,
		horizonSeconds: DefaultHorizonSeconds,
	}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: nil option", ErrInvalidOption)
		}
		if err := o(f); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// Forecast returns one [Estimate] per pending workload of q, in the same
// order, drawing all randomness from r.
//
// The first H quotable pending workloads are rolled forward R times: each
// replica draws the residual of every running workload (bounded by its
// maximum execution time), then replays the event sequence — a completion
// frees its quota; at every admission opportunity the policy picks the
// first workload in order whose first fitting option fits the free quota in
// every flavor-resource (BestEffortFIFO), or only the head (StrictFIFO);
// admissions are at least CyclePeriodSeconds apart (the first one, with
// RandomCyclePhase, a uniform fraction of a period from now); an admitted
// workload holds its quota from the decision, is admitted
// AdmissionLatencySeconds later (or a draw from AdmissionLatencySample) and
// runs a fresh draw of its service law — its ServiceClass's, else its
// priority's, else Service, of the replica's own bootstrap resample of the
// observations when that is a [Bootstrap] (see Queue.ServiceClasses and
// Queue.ServiceByPriority). The expected wait is
// the mean of the R admission times, P50 and P90 their quantiles (linear
// interpolation between order statistics).
//
// A quotable workload at position n beyond the first H is extrapolated
// from the simulated throughput. Let wᵢ = (dominant share of its first
// fitting option, max over dimensions of demand/capacity) × min(E[S],
// MaxExecutionSeconds) be a workload's work, A the time by which all H
// simulated workloads are admitted (mean μ_A, variance σ²_A over
// replicas), and B the time by which the admitted work, in any order,
// reaches that of the first h₀ = ⌊H/2⌋ in queue order (mean μ_B, variance
// σ²_B). The work throughput over the second half of the roll is
// r = Σ_{h₀≤i<H} wᵢ / (μ_A − μ_B) — 1 work-unit/s, i.e. full capacity,
// capped by w̄/CyclePeriodSeconds, when it cannot be measured — and
//
//	E[W_n]   = μ_A + Σ_{H≤i≤n} wᵢ / r + δ_shape(n)
//	Var[W_n] = σ²_A + v · Σ_{H≤i≤n} wᵢ
//	P50 = E[W_n],  P90 = E[W_n] + 1.2816·√Var[W_n]   (normal approximation)
//
// where v = (σ²_A − σ²_B) / Σ_{h₀≤i<H} wᵢ is the growth of the variance
// per unit of work (w̄/r² when it cannot be measured, the value for
// Poisson-like admissions). δ is the BestEffortFIFO lateness of the
// workload's demand shape (keyed by its first fitting option): the mean,
// over the first h₀ simulated workloads of that shape, of their admission
// time minus the time by which the work up to and including them is
// admitted — positive for large workloads that smaller ones pass, negative
// for the small ones; 0 under StrictFIFO, with a single shape, or for a
// shape not seen in the roll. Passing that needs more than H/2 workloads
// behind to show is not captured.
//
// Preemption: with a WithinClusterQueue policy other than [PreemptionNever],
// every admission opportunity walks the waiting workloads in Kueue's order —
// priority first; within a priority, preempted workloads that were running
// at the start, then pending ones in queue order, then arrivals by arrival
// time — as Kueue's scheduler tries its heads. A workload none of whose
// options fits the free quota, but one of which would fit after removing the
// running workloads the policy lets it preempt (lower priority; with
// LowerOrNewerEqualPriority also equal priority behind it in that order),
// preempts as Kueue v0.19.2's classical within-ClusterQueue preemption does:
// candidates that hold some flavor-resource the option lacks are removed in
// Kueue's candidate order (lower priority first, then the most recently
// admitted) until the option fits; then, in reverse order, every removed
// candidate but the last whose return leaves the option fitting is kept (the
// minimal set). The first option for which this succeeds is taken. The
// victims' quota passes to the preemptor at once. The scheduler reacts to a
// preemptor as to a workload that fits: the preemption decision comes one
// admission latency (AdmissionLatencySeconds, or a draw from
// AdmissionLatencySample) after the roll tries it — without it the roll
// admitted preemptors about that much too early — or, with a
// PreemptionReactionSample, a measured reaction, and the preemptor is
// admitted PreemptionDelaySeconds after the decision; until then no other
// workload of the ClusterQueue is admitted or preempts, since Kueue requeues
// a preemptor at once and it stays the ClusterQueue's head (one head per
// ClusterQueue per cycle) until its victims are gone. PreemptionDelaySeconds
// is by default 2·AdmissionLatencySeconds: one latency for the eviction (Kueue writes the
// Evicted condition, the job integration stops the job and the quota is
// released: API round trips and controller reactions like those of a
// completion followed by an admission) and one for the admission itself. The
// victims stop running when the eviction ends, max(PreemptionDelaySeconds −
// AdmissionLatencySeconds, 0) after the decision. Each victim goes back into
// the waiting order at its place (priority, then its original queue
// position; a workload running at the start goes ahead of the pending ones
// of its priority, as it was created before them) with its remaining service
// — the part of its drawn service not run when the eviction ends — or, with
// PreemptedRestart, its whole drawn service again (age plus residual for a
// workload running at the start); never a fresh draw. Without
// PreemptedRestart preemption conserves work; with it the victims' elapsed
// service is lost, which is what delays the lower-priority workloads behind
// them. A readmitted workload keeps its first admission time as its
// forecast. Under StrictFIFO only the first waiting workload may fit or
// preempt; under BestEffortFIFO the first in order that fits or can preempt
// is taken. Each replica preempts at most 4·(H + N_run) + 256 times; past
// that it only waits for completions.
//
// Admission fair sharing: with Queue.AdmissionFairSharing and no
// preemption, every admission opportunity brings each LocalQueue's usage to
// its time and tries the waiting workloads in Kueue's AFS order — usage
// first, then priority, then position — and every admission adds its entry
// penalty and its requests to its LocalQueue's usage (see
// [AdmissionFairSharing] for Kueue's semantics and the model).
//
// Cost: O(R · ((H + N_run)·log N_run + H·S)) for the roll, with S ≤ H the
// number of distinct demand shapes among the first H (BestEffortFIFO
// indexes the pending workloads by shape, so one admission opportunity
// costs O(S), not O(H)), O(R·H) on average for the quantiles (selection,
// not sorting) and O(N) map reads for the rest of the queue. With Arrivals
// each replica is also cut after 64·(H + N_run) + 4096 + min(2·Σ λ_c·T_c,
// 2¹⁶) events, T_c the class's min(UntilSeconds, horizon); workloads not
// admitted by then are reported at the horizon, clamped. Preemption,
// when enabled, adds O((S + C)·log(S + C) + B·P·dims) per admission
// opportunity (C arrival classes, B preempted workloads waiting, P
// distinct priorities) and O(V·N_run) per preemption of V victims.
// Admission fair sharing makes an admission opportunity O(Q + L) for Q
// LocalQueues and L ≤ min(H, S·Q) lanes (the first H workloads grouped by
// demand shape and LocalQueue), with O(H) more to set up.
//
// Forecast returns an error wrapping [ErrInvalidQueue] when r or q.Service
// (or a model of q.ServiceByPriority or q.ServiceClasses) is nil or has a mean that is not
// finite and positive, q.Policy or
// q.WithinClusterQueue is unknown, or CyclePeriodSeconds,
// AdmissionLatencySeconds, PreemptionDelaySeconds, a value of
// AdmissionLatencySample or an arrival rate is negative, NaN or infinite,
// or an arrival class's UntilSeconds is negative or NaN.
func (f *Forecaster) Forecast(q Queue, r *rand.Rand) ([]Estimate, error) {
	if err := validate(q, r); err != nil {
		return nil, err
	}
	out := make([]Estimate, len(q.Pending))
	f.forecast(out, q, r)
	return out, nil
}

// ForecastInto is [Forecaster.Forecast] writing the estimates into out,
// which must hold exactly len(q.Pending) of them (whatever they held is
// overwritten): a caller that rolls many queues reuses one buffer instead
// of allocating one per roll. It returns an error wrapping
// [ErrInvalidQueue] where Forecast does, and also for an out of another
// length; out is then left as it was.
func (f *Forecaster) ForecastInto(out []Estimate, q Queue, r *rand.Rand) error {
	if len(out) != len(q.Pending) {
		return fmt.Errorf("%w: %d estimates for %d pending workloads", ErrInvalidQueue, len(out), len(q.Pending))
	}
	if err := validate(q, r); err != nil {
		return err
	}
	clear(out)
	f.forecast(out, q, r)
	return nil
}

// beyondBuffers recycles the workloads behind the count horizon between
// forecasts (24 B per pending workload past the first horizonCount).
var beyondBuffers = sync.Pool{New: func() any { return new([]beyondEntry) }}

// forecast fills out (len(q.Pending), zeroed) for a validated q.
func (f *Forecaster) forecast(out []Estimate, q Queue, r *rand.Rand) {
	s := newScene(q.Capacity, len(q.Running))
	for _, run := range q.Running {
		s.addRunning(run, serviceClass(q.ServiceClasses, run.ServiceClass))
	}
	s.addLent(q.Lent, q.LentHolders)
	meanService := func(class, priority int32) float64 {
		if m := classLaw(q.ServiceClasses, class); m != nil {
			return m.Mean()
		}
		if m, ok := q.ServiceByPriority[priority]; ok {
			return m.Mean()
		}
		return q.Service.Mean()
	}

	// Walk the queue once: the first H quotable workloads that can fit go to
	// the roll, later ones get a work weight for extrapolation.
	var beyond []beyondEntry
	if n := len(q.Pending) - f.horizonCount; n > 0 {
		buf := beyondBuffers.Get().(*[]beyondEntry)
		defer func() {
			*buf = beyond[:0]
			beyondBuffers.Put(buf)
		}()
		beyond = slices.Grow((*buf)[:0], n)
	}
	blocked := false
	for i := range q.Pending {
		p := &q.Pending[i]
		e := &out[i]
		e.ID = p.ID
		e.Quotable = p.Quotable
		if !p.Quotable {
			continue
		}
		if blocked {
			f.clampToHorizon(e)
			continue
		}
		maxExec := sanitizeBound(p.MaxExecutionSeconds)
		if len(s.entries) < f.horizonCount {
			law := serviceClass(q.ServiceClasses, p.ServiceClass)
			if !s.addPending(i, p.Options, maxExec, p.Priority, law, meanService(law, p.Priority)) {
				f.clampToHorizon(e)
				blocked = q.Policy == StrictFIFO
			} else if p.Untried {
				s.markUntried(p.WaitedSeconds)
			}
			continue
		}
		share, hash, ok := s.dominantShare(p.Options)
		if !ok {
			f.clampToHorizon(e)
			blocked = q.Policy == StrictFIFO
			continue
		}
		e.Extrapolated = true
		mean := meanService(serviceClass(q.ServiceClasses, p.ServiceClass), p.Priority)
		beyond = append(beyond, beyondEntry{pos: i, work: share * boundedMean(mean, maxExec), hash: hash})
	}
	for _, a := range q.Arrivals {
		s.addArrival(a, serviceClass(q.ServiceClasses, a.ServiceClass))
	}
	if len(s.entries) == 0 {
		return
	}

	ro := newRoller(s, q, f, r)
	defer ro.returnBuffers()
	ro.run()
	ro.summarize(out)
	ro.extrapolate(out, beyond)
}

// beyondEntry is a quotable workload behind the count horizon.
type beyondEntry struct {
	pos  int     // index in Queue.Pending
	work float64 // dominant share × bounded mean service
	hash uint64  // vectorHash of its first fitting option
}

func validate(q Queue, r *rand.Rand) error {
	if r == nil {
		return fmt.Errorf("%w: nil random source", ErrInvalidQueue)
	}
	if q.Service == nil {
		return fmt.Errorf("%w: nil service model", ErrInvalidQueue)
	}
	if m := q.Service.Mean(); !(m > 0) || math.IsInf(m, 0) {
		return fmt.Errorf("%w: service model mean %v s must be finite and > 0", ErrInvalidQueue, m)
	}
	for p, model := range q.ServiceByPriority {
		if model == nil {
			return fmt.Errorf("%w: nil service model for priority %d", ErrInvalidQueue, p)
		}
		if m := model.Mean(); !(m > 0) || math.IsInf(m, 0) {
			return fmt.Errorf("%w: service model mean %v s of priority %d must be finite and > 0", ErrInvalidQueue, m, p)
		}
	}
	for i, model := range q.ServiceClasses {
		if model == nil {
			return fmt.Errorf("%w: nil service model for service class %d", ErrInvalidQueue, i+1)
		}
		if m := model.Mean(); !(m > 0) || math.IsInf(m, 0) {
			return fmt.Errorf("%w: service model mean %v s of service class %d must be finite and > 0", ErrInvalidQueue, m, i+1)
		}
	}
	if q.Policy != BestEffortFIFO && q.Policy != StrictFIFO {
		return fmt.Errorf("%w: unknown policy %v", ErrInvalidQueue, q.Policy)
	}
	switch q.WithinClusterQueue {
	case PreemptionNever, PreemptionLowerPriority, PreemptionLowerOrNewerEqualPriority:
	default:
		return fmt.Errorf("%w: unknown preemption policy %v", ErrInvalidQueue, q.WithinClusterQueue)
	}
	if !nonNegativeFinite(q.CyclePeriodSeconds) {
		return fmt.Errorf("%w: cycle period %v s must be finite and >= 0", ErrInvalidQueue, q.CyclePeriodSeconds)
	}
	if !nonNegativeFinite(q.AdmissionLatencySeconds) {
		return fmt.Errorf("%w: admission latency %v s must be finite and >= 0", ErrInvalidQueue, q.AdmissionLatencySeconds)
	}
	for _, sample := range []struct {
		name   string
		values []float64
	}{
		{"admission latency", q.AdmissionLatencySample},
		{"first-attempt latency", q.FirstAttemptLatencySample},
		{"preemption reaction", q.PreemptionReactionSample},
		{"preemption delay", q.PreemptionDelaySample},
	} {
		for i, l := range sample.values {
			if !nonNegativeFinite(l) {
				return fmt.Errorf("%w: %s sample value %d is %v s; want finite and >= 0", ErrInvalidQueue, sample.name, i, l)
			}
		}
	}
	if err := validateFairSharing(q.AdmissionFairSharing); err != nil {
		return err
	}
	if !nonNegativeFinite(q.PreemptionDelaySeconds) {
		return fmt.Errorf("%w: preemption delay %v s must be finite and >= 0", ErrInvalidQueue, q.PreemptionDelaySeconds)
	}
	for i, a := range q.Arrivals {
		if !nonNegativeFinite(a.RatePerSecond) {
			return fmt.Errorf("%w: arrival class %d rate %v /s must be finite and >= 0", ErrInvalidQueue, i, a.RatePerSecond)
		}
		if !(a.UntilSeconds >= 0) {
			return fmt.Errorf("%w: arrival class %d stops at %v s; want >= 0 (0 or +Inf: never)", ErrInvalidQueue, i, a.UntilSeconds)
		}
	}
	return nil
}

// serviceClass is c when it names one of classes (see
// Queue.ServiceClasses), else 0.
func serviceClass(classes []ServiceModel, c int32) int32 {
	if c >= 1 && int(c) <= len(classes) {
		return c
	}
	return 0
}

// classLaw is the law that a ServiceClass sanitized by serviceClass names,
// nil for 0.
func classLaw(classes []ServiceModel, c int32) ServiceModel {
	if c == 0 {
		return nil
	}
	return classes[c-1]
}

func nonNegativeFinite(x float64) bool { return x >= 0 && !math.IsInf(x, 0) }

// sanitizeBound maps a maximum execution time to a usable bound: anything
// that is not finite and positive means "no bound" (0).
func sanitizeBound(m float64) float64 {
	if m > 0 && !math.IsInf(m, 0) {
		return m
	}
	return 0
}

func sanitizeAge(a float64) float64 {
	if a > 0 && !math.IsInf(a, 0) {
		return a
	}
	if math.IsInf(a, 1) {
		return math.MaxFloat64
	}
	return 0
}

// boundedMean is E[min(S, m)] approximated by min(E[S], m).
func boundedMean(mean, maxExec float64) float64 {
	if maxExec > 0 {
		return min(mean, maxExec)
	}
	return mean
}

func (f *Forecaster) clampToHorizon(e *Estimate) {
	e.ExpectedWaitSeconds = f.horizonSeconds
	e.P50Seconds = f.horizonSeconds
	e.P90Seconds = f.horizonSeconds
	e.AdmissionOffsetSeconds = f.horizonSeconds
	e.Clamped = true
}
