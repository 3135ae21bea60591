package scenario

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// Defaults of a Spec, applied by [Spec.SetDefaults].
const (
	DefaultFlavor = "default"
	DefaultSeeds  = 3
	DefaultWarmup = 0.2
	// MaxSeeds bounds seeds: each seed replays every level.
	MaxSeeds = 20
	// MaxWarmup bounds warmup: at least a tenth of each replica is scored.
	MaxWarmup = 0.9
	// shareTolerance is how far from 1 the shares of a queue may sum.
	shareTolerance = 1e-9
)

// Values of [Spec.Prior].
const (
	// PriorMean (the default, also when Prior is empty) configures the
	// estimator's prior as the classes' true mean service time
	// (PriorMeanService).
	PriorMean = "mean"
	// PriorNone configures no prior, as on a cluster whose operator gives
	// none: workloads of a bounded service law declare their maximum
	// execution time instead (see [Spec.BuildWorkload]).
	PriorNone = "none"
)

// Spec is a multi-tenant evaluation experiment (see test/eval/mt-*.yaml):
// ClusterQueues, possibly in cohorts, each fed by its own arrival stream
// of a mix of workload classes with their own demands, priorities and
// service laws. Every (level, seed) pair is one replica, run on fresh
// ClusterQueues (see [Spec.Plan] and objects.go).
//
// The single-queue [Scenario] files load as a Spec too ([LoadSpec],
// [SpecFromScenario]).
type Spec struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Flavors are the ResourceFlavors the harness creates, in the order
	// every ClusterQueue lists them (Kueue tries flavors in that order).
	// Default: one flavor, "default".
	Flavors []string `json:"flavors,omitempty"`
	// PriorityClasses are the WorkloadPriorityClasses the harness creates:
	// name -> value. Classes name them in priority.
	PriorityClasses map[string]int32 `json:"priorityClasses,omitempty"`
	ClusterQueues   []QueueSpec      `json:"clusterQueues"`
	// Levels multiply every queue's utilization (or arrival rate): one
	// replica per level and seed.
	Levels []float64 `json:"levels"`
	// Workloads is the number of arrivals of one replica, over all queues.
	Workloads int `json:"workloads"`
	// Seeds is the number of replicas per level (1..20; default 3).
	Seeds *int `json:"seeds,omitempty"`
	// Seed is the base seed every replica's seed derives from.
	Seed uint64 `json:"seed,omitempty"`
	// Warmup is the fraction of each replica's arrivals, the first in time,
	// not scored ([0, 0.9]; default 0.2).
	Warmup *float64 `json:"warmup,omitempty"`
	// Prior is the a-priori mean service time the operator configured for
	// the estimator: "mean" (default) is the share-weighted true mean of
	// the classes; "none" is no prior, the cold start of a cluster whose
	// Configuration gives none. With "none", every in-process workload of a
	// class whose service is bounded (deterministic, or truncated) declares
	// spec.maximumExecutionTimeSeconds, the bound rounded up plus
	// maxExecMarginSeconds, as eval --cluster's Jobs always do; the
	// estimator's a-priori law starts from those until the ClusterQueue has
	// seen enough completions. eval --cluster has no prior either way (the
	// manifests' Configuration gives none).
	Prior string `json:"prior,omitempty"`
	// AdmissionFairSharing is the manager's Configuration's
	// admissionFairSharing (usageHalfLifeTime, usageSamplingInterval,
	// resourceWeights), which the ClusterQueues with admissionFairSharing
	// set order their pending workloads by. Nil: off.
	AdmissionFairSharing *configapi.AdmissionFairSharing `json:"admissionFairSharing,omitempty"`
	// Parallel is how many replicas run at once as independent
	// ClusterQueues in one control plane (default: all); eval --parallel
	// overrides it. A scenario that loads the scheduler itself (many
	// queues, short services) runs its replicas one at a time.
	Parallel int `json:"parallel,omitempty"`

	// Source is the single-queue scenario the Spec was converted from
	// (LoadSpec of a file without clusterQueues, SpecFromScenario); nil for
	// a multi-tenant file.
	Source *Scenario `json:"-"`
}

// QueueSpec is one ClusterQueue and the workloads submitted to it (through
// one LocalQueue).
type QueueSpec struct {
	// Name is the ClusterQueue's name (a DNS-1123 label) before the
	// replica's prefix, and the name of its LocalQueue.
	Name string `json:"name"`
	// Cohort, when set, puts the ClusterQueue in that cohort (suffixed per
	// replica so that replicas do not share quota).
	Cohort string `json:"cohort,omitempty"`
	// QueueingStrategy is BestEffortFIFO (default) or StrictFIFO.
	QueueingStrategy string `json:"queueingStrategy,omitempty"`
	// Preemption is the ClusterQueue's spec.preemption, with Kueue's
	// v1beta2 field names and values.
	Preemption *kueue.ClusterQueuePreemption `json:"preemption,omitempty"`
	// Quota is flavor -> resource -> quota. Every flavor must be in
	// Flavors and give the same resources (Kueue puts them in one resource
	// group).
	Quota map[string]map[string]QuotaSpec `json:"quota"`
	// Utilization is the target ρ of the queue over its nominal k_eff at
	// level 1; exclusive with ArrivalRate.
	Utilization *float64 `json:"utilization,omitempty"`
	// ArrivalRate is the queue's arrival rate at level 1, e.g. "1.5/s"
	// (units s, m, h); exclusive with Utilization.
	ArrivalRate string       `json:"arrivalRate,omitempty"`
	Arrivals    ArrivalsSpec `json:"arrivals,omitempty"`
	Classes     []ClassSpec  `json:"classes"`
	// AdmissionFairSharing sets the ClusterQueue's
	// spec.admissionScope.admissionMode to UsageBasedAdmissionFairSharing:
	// with the Spec's AdmissionFairSharing, Kueue orders its pending
	// workloads by their LocalQueues' usage.
	AdmissionFairSharing bool `json:"admissionFairSharing,omitempty"`
}

// QuotaSpec is the quota of one flavor-resource, as Kueue quantities.
type QuotaSpec struct {
	Nominal string `json:"nominal"`
	// BorrowingLimit and LendingLimit need a cohort; empty means none.
	BorrowingLimit string `json:"borrowingLimit,omitempty"`
	LendingLimit   string `json:"lendingLimit,omitempty"`
}

// ClassSpec is one class of workloads of a queue.
type ClassSpec struct {
	// Name is a DNS-1123 label, unique within the queue.
	Name string `json:"name"`
	// Share is the fraction of the queue's arrivals of this class; the
	// shares of a queue sum to 1.
	Share float64 `json:"share"`
	// Demand is each workload's request (one pod).
	Demand map[string]string `json:"demand"`
	// Priority names a PriorityClasses entry; empty: no priority class.
	Priority    string      `json:"priority,omitempty"`
	MeanService Duration    `json:"meanService"`
	Service     ServiceSpec `json:"service,omitempty"`
	// UnfeasibleFraction of the class's workloads request UnfeasibleDemand
	// instead, which the queue can never hold.
	UnfeasibleFraction float64           `json:"unfeasibleFraction,omitempty"`
	UnfeasibleDemand   map[string]string `json:"unfeasibleDemand,omitempty"`
	// DRA makes every workload of the class also claim devices (see
	// [DRASpec]).
	DRA *DRASpec `json:"dra,omitempty"`
	// LocalQueue is the LocalQueue (a DNS-1123 label, in the replica's
	// namespace) the class's workloads are submitted through; empty: the
	// queue's own, named after it. Classes of one queue may share one;
	// two queues may not.
	LocalQueue string `json:"localQueue,omitempty"`
}

// Fields of one format that the other does not have: a file with
// clusterQueues must not use the first, one without must not use the
// second.
var (
	singleQueueFields = []string{"quota", "demand", "dra", "unfeasibleFraction", "unfeasibleDemand", "queueingStrategy", "jobsPerLevel", "meanService", "service", "arrivals"}
	multiTenantFields = []string{"flavors", "priorityClasses", "workloads", "seeds", "warmup", "prior"}
)

// LoadSpec reads a scenario file of either format, applies the defaults
// and validates it. A file with clusterQueues is a multi-tenant Spec; a
// file without is a single-queue [Scenario], converted by
// [SpecFromScenario].
func LoadSpec(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := ParseSpec(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseSpec is [LoadSpec] of the file's contents.
func ParseSpec(data []byte) (*Spec, error) {
	var fields map[string]any
	if err := yaml.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	if len(fields) == 0 {
		return nil, errors.New("the scenario is empty")
	}
	if _, multi := fields["clusterQueues"]; multi {
		for _, f := range singleQueueFields {
			if _, ok := fields[f]; ok {
				return nil, fmt.Errorf("%s: belongs to the single-queue format, which cannot be mixed with clusterQueues: give it per ClusterQueue or class", f)
			}
		}
		var s Spec
		if err := yaml.UnmarshalStrict(data, &s); err != nil {
			return nil, err
		}
		s.SetDefaults()
		if err := s.Validate(); err != nil {
			return nil, err
		}
		return &s, nil
	}
	for _, f := range multiTenantFields {
		if _, ok := fields[f]; ok {
			return nil, fmt.Errorf("%s: needs the multi-tenant format (clusterQueues); the single-queue format has no such field", f)
		}
	}
	var sc Scenario
	if err := yaml.UnmarshalStrict(data, &sc); err != nil {
		return nil, err
	}
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	s := SpecFromScenario(&sc)
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// SpecFromScenario converts a single-queue scenario: one ClusterQueue "cq"
// without cohort, whose quota is the nominal quota of flavor "default",
// with one class "main" (share 1, the scenario's demand, service and DRA)
// at utilization 1, so that a level is the target ρ as in the scenario;
// workloads = jobsPerLevel. Seeds and warmup take their defaults. The maps
// are copied; Source points at sc.
func SpecFromScenario(sc *Scenario) *Spec {
	quota := make(map[string]QuotaSpec, len(sc.Quota))
	for r, q := range sc.Quota {
		quota[r] = QuotaSpec{Nominal: q}
	}
	var dra *DRASpec
	if sc.DRA != nil {
		d := *sc.DRA
		dra = &d
	}
	s := &Spec{
		Name:        sc.Name,
		Description: sc.Description,
		Flavors:     []string{DefaultFlavor},
		ClusterQueues: []QueueSpec{{
			Name:             "eval",
			QueueingStrategy: sc.QueueingStrategy,
			Quota:            map[string]map[string]QuotaSpec{DefaultFlavor: quota},
			Utilization:      new(1.0),
			Arrivals:         sc.Arrivals,
			Classes: []ClassSpec{{
				Name:               "main",
				Share:              1,
				Demand:             maps.Clone(sc.Demand),
				MeanService:        sc.MeanService,
				Service:            sc.Service,
				UnfeasibleFraction: sc.UnfeasibleFraction,
				UnfeasibleDemand:   maps.Clone(sc.UnfeasibleDemand),
				DRA:                dra,
			}},
		}},
		Levels:    slices.Clone(sc.Levels),
		Workloads: sc.JobsPerLevel,
		Seed:      sc.Seed,
		Source:    sc,
	}
	s.SetDefaults()
	return s
}

// SetDefaults fills the optional fields: Flavors, Seeds and Warmup.
func (s *Spec) SetDefaults() {
	if len(s.Flavors) == 0 {
		s.Flavors = []string{DefaultFlavor}
	}
	if s.Seeds == nil {
		s.Seeds = new(DefaultSeeds)
	}
	if s.Warmup == nil {
		s.Warmup = new(DefaultWarmup)
	}
}

// FlavorNames are the flavors in order (the default when none is given).
func (s *Spec) FlavorNames() []string {
	if len(s.Flavors) == 0 {
		return []string{DefaultFlavor}
	}
	return s.Flavors
}

// NumSeeds is the number of replicas per level.
func (s *Spec) NumSeeds() int {
	if s.Seeds == nil {
		return DefaultSeeds
	}
	return *s.Seeds
}

// WarmupFraction is the fraction of each replica's arrivals not scored.
func (s *Spec) WarmupFraction() float64 {
	if s.Warmup == nil {
		return DefaultWarmup
	}
	return *s.Warmup
}

// Validate reports the first problem of a spec, naming the field path,
// e.g. "clusterQueues[1].classes[0].share: must be in (0, 1], got 1.5".
// Defaults need not be applied.
func (s *Spec) Validate() error {
	if s.Name == "" {
		return errors.New("name: is required")
	}
	flavors := s.FlavorNames()
	for i, f := range s.Flavors {
		p := fmt.Sprintf("flavors[%d]", i)
		if err := checkLabel(p, f); err != nil {
			return err
		}
		if j := slices.Index(s.Flavors, f); j < i {
			return fmt.Errorf("%s: %q is also flavors[%d]", p, f, j)
		}
	}
	for _, pc := range sortedKeys(s.PriorityClasses) {
		if err := checkLabel("priorityClasses."+pc, pc); err != nil {
			return err
		}
	}
	if len(s.Levels) == 0 {
		return errors.New("levels: at least one level is required")
	}
	for i, l := range s.Levels {
		p := fmt.Sprintf("levels[%d]", i)
		if !(l > 0) || math.IsInf(l, 0) {
			return fmt.Errorf("%s: must be > 0 and finite, got %v", p, l)
		}
		if j := slices.Index(s.Levels, l); j < i {
			return fmt.Errorf("%s: %v is also levels[%d]", p, l, j)
		}
	}
	if s.Workloads < 2 {
		return fmt.Errorf("workloads: must be at least 2, got %d", s.Workloads)
	}
	if s.Parallel < 0 {
		return fmt.Errorf("parallel: must be ≥ 0, got %d", s.Parallel)
	}
	if s.Seeds != nil && (*s.Seeds < 1 || *s.Seeds > MaxSeeds) {
		return fmt.Errorf("seeds: must be in 1..%d, got %d", MaxSeeds, *s.Seeds)
	}
	if w := s.Warmup; w != nil && !(*w >= 0 && *w <= MaxWarmup) {
		return fmt.Errorf("warmup: must be in [0, %v], got %v", MaxWarmup, *w)
	}
	switch s.Prior {
	case "", PriorMean, PriorNone:
	default:
		return fmt.Errorf("prior: must be %s (the classes' true mean service time, the default) or %s (no prior: workloads of a bounded service declare their maximum execution time), got %q", PriorMean, PriorNone, s.Prior)
	}
	if len(s.ClusterQueues) == 0 {
		return errors.New("clusterQueues: at least one ClusterQueue is required")
	}
	if afs := s.AdmissionFairSharing; afs != nil {
		if afs.UsageHalfLifeTime.Duration < 0 {
			return fmt.Errorf("admissionFairSharing.usageHalfLifeTime: must be ≥ 0, got %v", afs.UsageHalfLifeTime.Duration)
		}
		if afs.UsageSamplingInterval.Duration <= 0 {
			return fmt.Errorf("admissionFairSharing.usageSamplingInterval: must be > 0, got %v", afs.UsageSamplingInterval.Duration)
		}
		for _, r := range slices.Sorted(maps.Keys(afs.ResourceWeights)) {
			if w := afs.ResourceWeights[r]; !(w >= 0) || math.IsInf(w, 0) {
				return fmt.Errorf("admissionFairSharing.resourceWeights.%s: must be ≥ 0 and finite, got %v", r, w)
			}
		}
	}
	// First the queues and their quotas, which the classes are checked
	// against (with what each queue can borrow in its cohort).
	for i := range s.ClusterQueues {
		if err := s.validateQueue(i, flavors); err != nil {
			return err
		}
	}
	models, err := s.capacityQueues()
	if err != nil {
		return err
	}
	mapped := map[string]draUse{}
	for i := range s.ClusterQueues {
		if err := s.validateClasses(i, models[i], mapped); err != nil {
			return err
		}
	}
	return s.validateLocalQueues()
}

// validateLocalQueues checks the classes' LocalQueues: labels, none
// serving two queues, and admissionFairSharing on a queue only with the
// Spec's.
func (s *Spec) validateLocalQueues() error {
	owner := map[string]int{}
	for i := range s.ClusterQueues {
		q := &s.ClusterQueues[i]
		if q.AdmissionFairSharing && s.AdmissionFairSharing == nil {
			return fmt.Errorf("clusterQueues[%d].admissionFairSharing: needs the Spec's admissionFairSharing (the manager's Configuration)", i)
		}
		for j := range q.Classes {
			lq := q.LocalQueueOf(&q.Classes[j])
			p := fmt.Sprintf("clusterQueues[%d].classes[%d].localQueue", i, j)
			if err := checkLabel(p, lq); err != nil {
				return err
			}
			if k, ok := owner[lq]; ok && k != i {
				return fmt.Errorf("%s: LocalQueue %q also serves clusterQueues[%d]", p, lq, k)
			}
			owner[lq] = i
		}
	}
	return nil
}

// LocalQueueOf is the LocalQueue class c of q is submitted through: its
// own, else the queue's, named after it.
func (q *QueueSpec) LocalQueueOf(c *ClassSpec) string {
	if c.LocalQueue != "" {
		return c.LocalQueue
	}
	return q.Name
}

// LocalQueues are q's LocalQueues, in the order of its classes.
func (q *QueueSpec) LocalQueues() []string {
	var out []string
	for j := range q.Classes {
		if lq := q.LocalQueueOf(&q.Classes[j]); !slices.Contains(out, lq) {
			out = append(out, lq)
		}
	}
	return out
}

// draUse is where a DeviceClass was first mapped to a resource.
type draUse struct{ resource, path string }

func (s *Spec) validateQueue(i int, flavors []string) error {
	q := &s.ClusterQueues[i]
	p := fmt.Sprintf("clusterQueues[%d]", i)
	if err := checkLabel(p+".name", q.Name); err != nil {
		return err
	}
	for j := range i {
		if s.ClusterQueues[j].Name == q.Name {
			return fmt.Errorf("%s.name: %q is also the name of clusterQueues[%d]", p, q.Name, j)
		}
	}
	if q.Cohort != "" {
		if err := checkLabel(p+".cohort", q.Cohort); err != nil {
			return err
		}
	}
	switch kueue.QueueingStrategy(q.QueueingStrategy) {
	case "", kueue.BestEffortFIFO, kueue.StrictFIFO:
	default:
		return fmt.Errorf("%s.queueingStrategy: must be BestEffortFIFO or StrictFIFO, got %q", p, q.QueueingStrategy)
	}
	if err := validatePreemption(p+".preemption", q.Preemption, q.Cohort != ""); err != nil {
		return err
	}
	if err := validateQuota(p, q, flavors); err != nil {
		return err
	}
	switch {
	case q.Utilization != nil && q.ArrivalRate != "":
		return fmt.Errorf("%s: utilization and arrivalRate are exclusive: give one", p)
	case q.Utilization == nil && q.ArrivalRate == "":
		return fmt.Errorf("%s: give utilization (the target ρ over the nominal k_eff) or arrivalRate", p)
	case q.Utilization != nil:
		if u := *q.Utilization; !(u > 0) || math.IsInf(u, 0) {
			return fmt.Errorf("%s.utilization: must be > 0 and finite, got %v", p, u)
		}
	default:
		if _, err := ParseRate(q.ArrivalRate); err != nil {
			return fmt.Errorf("%s.arrivalRate: %w", p, err)
		}
	}
	return validateArrivals(p+".arrivals", q.Arrivals)
}

func validatePreemption(p string, pr *kueue.ClusterQueuePreemption, cohort bool) error {
	if pr == nil {
		return nil
	}
	switch pr.WithinClusterQueue {
	case "", kueue.PreemptionPolicyNever, kueue.PreemptionPolicyLowerPriority, kueue.PreemptionPolicyLowerOrNewerEqualPriority:
	default:
		return fmt.Errorf("%s.withinClusterQueue: must be Never, LowerPriority or LowerOrNewerEqualPriority, got %q", p, pr.WithinClusterQueue)
	}
	reclaim := pr.ReclaimWithinCohort
	switch reclaim {
	case "", kueue.PreemptionPolicyNever, kueue.PreemptionPolicyLowerPriority, kueue.PreemptionPolicyAny:
	default:
		return fmt.Errorf("%s.reclaimWithinCohort: must be Never, LowerPriority or Any, got %q", p, reclaim)
	}
	var borrow kueue.BorrowWithinCohortPolicy
	if b := pr.BorrowWithinCohort; b != nil {
		borrow = b.Policy
		switch borrow {
		case "", kueue.BorrowWithinCohortPolicyNever, kueue.BorrowWithinCohortPolicyLowerPriority:
		default:
			return fmt.Errorf("%s.borrowWithinCohort.policy: must be Never or LowerPriority, got %q", p, borrow)
		}
		if b.MaxPriorityThreshold != nil && borrow != kueue.BorrowWithinCohortPolicyLowerPriority {
			return fmt.Errorf("%s.borrowWithinCohort.maxPriorityThreshold: needs policy LowerPriority", p)
		}
	}
	reclaims := reclaim != "" && reclaim != kueue.PreemptionPolicyNever
	borrows := borrow != "" && borrow != kueue.BorrowWithinCohortPolicyNever
	if borrows && !reclaims {
		return fmt.Errorf("%s.borrowWithinCohort.policy: %s needs reclaimWithinCohort LowerPriority or Any (Kueue rejects it with Never)", p, borrow)
	}
	if (reclaims || borrows) && !cohort {
		return fmt.Errorf("%s: reclaimWithinCohort and borrowWithinCohort need a cohort", p)
	}
	return nil
}

// validateQuota checks a queue's quota: known flavors, the same resources
// in each, parseable non-negative quantities, limits only in a cohort and
// lendingLimit ≤ nominal.
func validateQuota(p string, q *QueueSpec, flavors []string) error {
	if len(q.Quota) == 0 {
		return fmt.Errorf("%s.quota: is required", p)
	}
	for _, f := range sortedKeys(q.Quota) {
		if !slices.Contains(flavors, f) {
			return fmt.Errorf("%s.quota.%s: flavor %q is not in flavors (%s)", p, f, f, strings.Join(flavors, ", "))
		}
	}
	var resources []string
	first := ""
	for _, f := range flavors {
		rs, ok := q.Quota[f]
		if !ok {
			continue
		}
		fp := p + ".quota." + f
		if len(rs) == 0 {
			return fmt.Errorf("%s: gives no resource", fp)
		}
		names := sortedKeys(rs)
		if resources == nil {
			resources, first = names, f
		} else if !slices.Equal(names, resources) {
			return fmt.Errorf("%s: gives %s but %s.quota.%s gives %s: Kueue puts the resources of a ClusterQueue in one resource group, where every flavor gives the same resources",
				fp, strings.Join(names, ", "), p, first, strings.Join(resources, ", "))
		}
		for _, r := range names {
			rp := fp + "." + r
			if len(validation.IsQualifiedName(r)) > 0 {
				return fmt.Errorf("%s: %q is not a valid resource name (a qualified name, e.g. cpu or example.com/gpu)", rp, r)
			}
			rq := rs[r]
			if rq.Nominal == "" {
				return fmt.Errorf("%s.nominal: is required", rp)
			}
			nominal, err := parseQuantity(rp+".nominal", rq.Nominal)
			if err != nil {
				return err
			}
			for _, l := range []struct{ name, value string }{{"borrowingLimit", rq.BorrowingLimit}, {"lendingLimit", rq.LendingLimit}} {
				if l.value == "" {
					continue
				}
				if q.Cohort == "" {
					return fmt.Errorf("%s.%s: needs a cohort", rp, l.name)
				}
				v, err := parseQuantity(rp+"."+l.name, l.value)
				if err != nil {
					return err
				}
				if l.name == "lendingLimit" && v.Cmp(nominal) > 0 {
					return fmt.Errorf("%s.lendingLimit: %s exceeds the nominal quota %s", rp, l.value, rq.Nominal)
				}
			}
		}
	}
	return nil
}

// validateClasses checks the classes of queue i against its capacity
// (nominal quota plus what it can borrow): demands the queue can hold in
// some flavor, unfeasible demands it can hold in none.
func (s *Spec) validateClasses(i int, cq *capacity.ClusterQueue, mapped map[string]draUse) error {
	q := &s.ClusterQueues[i]
	p := fmt.Sprintf("clusterQueues[%d]", i)
	if len(q.Classes) == 0 {
		return fmt.Errorf("%s.classes: at least one class is required", p)
	}
	covered := map[string]string{} // for validateDRA, which needs the keys only
	for _, r := range cq.ResourceGroups[0].Resources {
		covered[r] = ""
	}
	sum := 0.0
	for j := range q.Classes {
		c := &q.Classes[j]
		cp := fmt.Sprintf("%s.classes[%d]", p, j)
		if err := checkLabel(cp+".name", c.Name); err != nil {
			return err
		}
		for k := range j {
			if q.Classes[k].Name == c.Name {
				return fmt.Errorf("%s.name: %q is also the name of %s.classes[%d]", cp, c.Name, p, k)
			}
		}
		if !(c.Share > 0 && c.Share <= 1) {
			return fmt.Errorf("%s.share: must be in (0, 1], got %v", cp, c.Share)
		}
		sum += c.Share
		if c.Priority != "" {
			if _, ok := s.PriorityClasses[c.Priority]; !ok {
				return fmt.Errorf("%s.priority: %q is not in priorityClasses (%s)", cp, c.Priority, strings.Join(sortedKeys(s.PriorityClasses), ", "))
			}
		}
		if c.MeanService.Duration <= 0 {
			return fmt.Errorf("%s.meanService: must be > 0, got %v", cp, c.MeanService.Duration)
		}
		if err := validateService(cp+".service", c.Service); err != nil {
			return err
		}
		if len(c.Demand) == 0 {
			return fmt.Errorf("%s.demand: is required", cp)
		}
		positive := c.DRA != nil
		for _, r := range sortedKeys(c.Demand) {
			v, err := parseQuantity(cp+".demand."+r, c.Demand[r])
			if err != nil {
				return err
			}
			if !cq.Covers(r) {
				return fmt.Errorf("%s.demand.%s: %s has no quota for %s: give it in %s.quota", cp, r, q.Name, r, p)
			}
			positive = positive || v.Sign() > 0
		}
		if !positive {
			return fmt.Errorf("%s.demand: requests nothing", cp)
		}
		if c.UnfeasibleFraction < 0 || c.UnfeasibleFraction >= 1 || math.IsNaN(c.UnfeasibleFraction) {
			return fmt.Errorf("%s.unfeasibleFraction: must be in [0, 1), got %v", cp, c.UnfeasibleFraction)
		}
		switch {
		case c.UnfeasibleFraction > 0 && len(c.UnfeasibleDemand) == 0:
			return fmt.Errorf("%s.unfeasibleDemand: is required with unfeasibleFraction", cp)
		case c.UnfeasibleFraction == 0 && len(c.UnfeasibleDemand) > 0:
			return fmt.Errorf("%s.unfeasibleDemand: is unused without unfeasibleFraction", cp)
		}
		for _, r := range sortedKeys(c.UnfeasibleDemand) {
			if _, err := parseQuantity(cp+".unfeasibleDemand."+r, c.UnfeasibleDemand[r]); err != nil {
				return err
			}
		}
		if c.DRA != nil {
			sc := &Scenario{Quota: covered, Demand: c.Demand, UnfeasibleDemand: c.UnfeasibleDemand, DRA: c.DRA}
			if err := sc.validateDRA(); err != nil {
				return fmt.Errorf("%s.%w", cp, err)
			}
			if u, ok := mapped[c.DRA.DeviceClass]; ok && u.resource != c.DRA.Resource {
				return fmt.Errorf("%s.dra.deviceClass: %s is mapped to %s by %s: Kueue maps a DeviceClass to one resource", cp, c.DRA.DeviceClass, u.resource, u.path)
			} else if !ok {
				mapped[c.DRA.DeviceClass] = draUse{resource: c.DRA.Resource, path: cp + ".dra"}
			}
		}
		dem, _ := demandOf(c.Demand, c.DRA) // parsed above
		if f, why := fitsSomeFlavor(cq, dem); f == "" {
			return fmt.Errorf("%s.demand: %s can never hold it, even borrowing (%s): give such workloads as unfeasibleDemand", cp, q.Name, why)
		}
		if c.UnfeasibleFraction > 0 {
			ud, _ := demandOf(c.UnfeasibleDemand, c.DRA)
			if f, _ := fitsSomeFlavor(cq, ud); f != "" {
				return fmt.Errorf("%s.unfeasibleDemand: fits flavor %s of %s (nominal quota plus what it can borrow), so these workloads would not be Unfeasible", cp, f, q.Name)
			}
		}
	}
	if math.Abs(sum-1) > shareTolerance {
		return fmt.Errorf("%s.classes: shares sum to %v, want 1", p, sum)
	}
	k, err := capacity.KEffMix(cq, s.classMix(i), capacity.BasisNominal)
	if err != nil {
		return fmt.Errorf("%s: k_eff of the class mix: %w", p, err)
	}
	if q.Utilization != nil && (k.Servers < 1 || k.Unbounded) {
		return fmt.Errorf("%s.utilization: the nominal quota holds no workload of the class mix (k_eff %d, bottleneck %s): give arrivalRate instead", p, k.Servers, k.Resource)
	}
	return nil
}

func validateService(p string, sv ServiceSpec) error {
	switch sv.Distribution {
	case "", "exponential", "deterministic":
	case "erlang":
		if sv.Shape < 1 {
			return fmt.Errorf("%s.shape: erlang service needs shape ≥ 1, got %d", p, sv.Shape)
		}
	case "lognormal":
		if !(sv.CV > 0) || math.IsInf(sv.CV, 0) {
			return fmt.Errorf("%s.cv: lognormal service needs cv > 0, got %v", p, sv.CV)
		}
	default:
		return fmt.Errorf("%s.distribution: must be exponential, erlang, lognormal or deterministic, got %q", p, sv.Distribution)
	}
	if !(sv.TruncateAt >= 0) || math.IsInf(sv.TruncateAt, 0) {
		return fmt.Errorf("%s.truncateAt: must be ≥ 0 (0: no truncation), got %v", p, sv.TruncateAt)
	}
	return nil
}

func validateArrivals(p string, a ArrivalsSpec) error {
	switch a.Process {
	case "", "poisson", "periodic":
	case "bursty":
		if a.BurstSize < 2 {
			return fmt.Errorf("%s.burstSize: bursty arrivals need burstSize ≥ 2, got %d", p, a.BurstSize)
		}
	default:
		return fmt.Errorf("%s.process: must be poisson, periodic or bursty, got %q", p, a.Process)
	}
	return nil
}

// ParseRate reads an arrival rate such as "1.5/s", "90/m" or "30/h" and
// returns it per second.
func ParseRate(s string) (float64, error) {
	num, unit, ok := strings.Cut(s, "/")
	if !ok {
		return 0, fmt.Errorf("%q: want arrivals per unit of time, e.g. \"1.5/s\" (units s, m, h)", s)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q: the rate must be a number > 0", s)
	}
	switch strings.TrimSpace(unit) {
	case "s":
		return v, nil
	case "m", "min":
		return v / 60, nil
	case "h":
		return v / 3600, nil
	}
	return 0, fmt.Errorf("%q: unknown unit %q (want s, m or h)", s, strings.TrimSpace(unit))
}

func checkLabel(p, v string) error {
	if v == "" {
		return fmt.Errorf("%s: is required", p)
	}
	if len(validation.IsDNS1123Label(v)) > 0 {
		return fmt.Errorf("%s: %q is not a DNS-1123 label (lower-case alphanumerics and '-', at most 63 characters)", p, v)
	}
	return nil
}

func parseQuantity(p, v string) (resource.Quantity, error) {
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return q, fmt.Errorf("%s: %q is not a quantity: %w", p, v, err)
	}
	if q.Sign() < 0 {
		return q, fmt.Errorf("%s: must be ≥ 0, got %s", p, v)
	}
	return q, nil
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// demandOf is a workload's request in canonical units (see canonical):
// the demand, plus the DRA devices counted as their mapped resource.
func demandOf(demand map[string]string, dra *DRASpec) (map[string]int64, error) {
	out := make(map[string]int64, len(demand)+1)
	for r, v := range demand {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, err
		}
		out[r] = canonical(r, q)
	}
	if dra != nil {
		out[dra.Resource] += dra.Count
	}
	return out, nil
}

// fitsSomeFlavor returns the first flavor (in the queue's order) where the
// demand fits the potential capacity (nominal + borrowable) of every
// resource it requests, or "" and why it fits none.
func fitsSomeFlavor(cq *capacity.ClusterQueue, dem map[string]int64) (string, string) {
	g := cq.ResourceGroups[0]
	var why []string
	if cq.Covers(capacity.PodsResource) {
		dem = maps.Clone(dem)
		dem[capacity.PodsResource] = 1
	}
	for _, f := range g.Flavors {
		miss := ""
		for _, r := range sortedKeys(dem) {
			d := dem[r]
			if d <= 0 {
				continue
			}
			ri := slices.Index(g.Resources, r)
			if ri < 0 {
				miss = r + " has no quota"
				break
			}
			if pot := f.Quotas[ri].Potential(); d > pot {
				miss = fmt.Sprintf("%s %s > %s", r, capacity.FormatQuantity(r, d), capacity.FormatQuantity(r, pot))
				break
			}
		}
		if miss == "" {
			return f.Name, ""
		}
		why = append(why, f.Name+": "+miss)
	}
	return "", strings.Join(why, "; ")
}

// capacityQueues is the capacity model of every queue (the quotas must
// have been validated): one resource group of the queue's resources
// (sorted) and flavors (in Flavors order), with Nominal and Borrowable in
// canonical units. Borrowable is what Kueue's potentialAvailable allows in
// a flat cohort: the queue's guaranteed part (nominal − lendingLimit, 0
// without lendingLimit) plus what the cohort's members lend (their
// lendingLimit, or their nominal), capped at nominal + borrowingLimit,
// minus nominal. ExpectedBorrowable is left 0.
func (s *Spec) capacityQueues() ([]*capacity.ClusterQueue, error) {
	type key struct{ cohort, flavor, resource string }
	nominal := make([]map[capacity.FlavorResource]int64, len(s.ClusterQueues))
	lendable := make([]map[capacity.FlavorResource]int64, len(s.ClusterQueues))
	cohortLends := map[key]int64{}
	for i, q := range s.ClusterQueues {
		nominal[i], lendable[i] = map[capacity.FlavorResource]int64{}, map[capacity.FlavorResource]int64{}
		for f, rs := range q.Quota {
			for r, rq := range rs {
				fr := capacity.FlavorResource{Flavor: f, Resource: r}
				n, err := resource.ParseQuantity(rq.Nominal)
				if err != nil {
					return nil, err
				}
				nominal[i][fr] = canonical(r, n)
				lendable[i][fr] = nominal[i][fr]
				if rq.LendingLimit != "" {
					l, err := resource.ParseQuantity(rq.LendingLimit)
					if err != nil {
						return nil, err
					}
					lendable[i][fr] = canonical(r, l)
				}
				if q.Cohort != "" {
					cohortLends[key{q.Cohort, f, r}] += lendable[i][fr]
				}
			}
		}
	}
	out := make([]*capacity.ClusterQueue, len(s.ClusterQueues))
	for i, q := range s.ClusterQueues {
		g := capacity.ResourceGroup{}
		for _, f := range s.FlavorNames() {
			rs, ok := q.Quota[f]
			if !ok {
				continue
			}
			if g.Resources == nil {
				g.Resources = sortedKeys(rs)
			}
			fq := capacity.FlavorQuotas{Name: f}
			for _, r := range g.Resources {
				fr := capacity.FlavorResource{Flavor: f, Resource: r}
				quota := capacity.Quota{Nominal: nominal[i][fr]}
				if q.Cohort != "" {
					pot := nominal[i][fr] - lendable[i][fr] + cohortLends[key{q.Cohort, f, r}]
					if bl := rs[r].BorrowingLimit; bl != "" {
						b, err := resource.ParseQuantity(bl)
						if err != nil {
							return nil, err
						}
						pot = min(pot, nominal[i][fr]+canonical(r, b))
					}
					quota.Borrowable = max(0, pot-nominal[i][fr])
				}
				fq.Quotas = append(fq.Quotas, quota)
			}
			g.Flavors = append(g.Flavors, fq)
		}
		out[i] = &capacity.ClusterQueue{Name: q.Name, ResourceGroups: []capacity.ResourceGroup{g}}
	}
	return out, nil
}

// classMix is queue i's classes as a capacity mix: each class's demand
// (DRA devices as their mapped resource; the feasible demand, unfeasible
// draws left out) weighted by its share. Demands must have been validated.
func (s *Spec) classMix(i int) []capacity.Class {
	q := &s.ClusterQueues[i]
	out := make([]capacity.Class, 0, len(q.Classes))
	for _, c := range q.Classes {
		req, _ := demandOf(c.Demand, c.DRA)
		out = append(out, capacity.Class{
			Workload: capacity.Workload{PodSets: []capacity.PodSet{{Name: "main", Count: 1, Requests: req}}},
			Rate:     c.Share,
		})
	}
	return out
}

// DeviceClassMappings is the Kueue Configuration the spec needs
// (resources.deviceClassMappings): one mapping per logical resource, with
// every DeviceClass the classes claim it through, deduplicated; sorted by
// resource, then DeviceClass. nil without DRA.
func (s *Spec) DeviceClassMappings() []configapi.DeviceClassMapping {
	byResource := map[string][]string{}
	for _, q := range s.ClusterQueues {
		for _, c := range q.Classes {
			if d := c.DRA; d != nil && !slices.Contains(byResource[d.Resource], d.DeviceClass) {
				byResource[d.Resource] = append(byResource[d.Resource], d.DeviceClass)
			}
		}
	}
	var out []configapi.DeviceClassMapping
	for _, r := range sortedKeys(byResource) {
		classes := byResource[r]
		slices.Sort(classes)
		m := configapi.DeviceClassMapping{Name: corev1.ResourceName(r)}
		for _, dc := range classes {
			m.DeviceClassNames = append(m.DeviceClassNames, corev1.ResourceName(dc))
		}
		out = append(out, m)
	}
	return out
}

// PriorMeanService is the mean service time an operator of the scenario's
// cluster would configure as the estimator's prior: the share-weighted mean
// of every queue's classes, averaged over the queues; 0 (no prior) when the
// scenario's prior is none.
func (s *Spec) PriorMeanService() time.Duration {
	if s.Prior == PriorNone {
		return 0
	}
	var sum float64
	for _, q := range s.ClusterQueues {
		for _, c := range q.Classes {
			sum += c.Share * c.MeanService.Seconds()
		}
	}
	if len(s.ClusterQueues) == 0 {
		return 0
	}
	return time.Duration(sum / float64(len(s.ClusterQueues)) * float64(time.Second))
}

// canonical is a quantity in the unit Kueue's quota arithmetic uses:
// millicores for cpu, the plain value for everything else.
func canonical(name string, q resource.Quantity) int64 {
	if name == string(corev1.ResourceCPU) {
		return q.MilliValue()
	}
	return q.Value()
}
