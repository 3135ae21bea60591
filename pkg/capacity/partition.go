package capacity

// Admissibility is the verdict of [Classify].
type Admissibility int

const (
	// Invalid: the ClusterQueue or the workload is malformed; no verdict.
	// It is the zero value so that an unset Classification is never taken
	// for Quotable.
	Invalid Admissibility = iota
	// Quotable: the workload fits the ClusterQueue's potential capacity, so
	// it is admitted eventually once enough running work completes; its wait
	// is finite (paper Def. 3).
	Quotable
	// Unfeasible: the workload can never be admitted without changing the
	// ClusterQueue, its cohort or the workload; its wait is infinite.
	Unfeasible
)

func (a Admissibility) String() string {
	switch a {
	case Quotable:
		return "Quotable"
	case Unfeasible:
		return "Unfeasible"
	default:
		return "Invalid"
	}
}

// FailureKind says why a [Failure] happened.
type FailureKind int

const (
	// UncoveredResource: the workload requests a resource that no resource
	// group of the ClusterQueue covers.
	UncoveredResource FailureKind = iota + 1
	// ExceedsPotential: the demand exceeds the potential capacity (nominal +
	// borrowable) of a flavor in one resource.
	ExceedsPotential
)

// Failure is one reason a workload is Unfeasible: for ExceedsPotential, the
// first resource (in the group's order) in which Flavor cannot hold Demand.
type Failure struct {
	Kind FailureKind
	// PodSets names the pod sets whose summed demand is Demand: one pod set
	// that fits no flavor on its own, or all the pod sets touching the group
	// when each fits alone but no assignment of them to flavors fits. For
	// UncoveredResource it is nil.
	PodSets []string
	// Group is the index of the resource group in ClusterQueue.ResourceGroups
	// (-1 for UncoveredResource).
	Group    int
	Flavor   string
	Resource string
	// Demand is the total demand in Resource (canonical units).
	Demand int64
	// Quota is the flavor-resource's quota; Quota.Potential() is the bound
	// that Demand exceeds.
	Quota Quota
}

// String renders the failure for a user, e.g.
// "flavor default: cpu 20 > potential 2 (nominal 2, borrowable 0)" or
// "resource example.com/foo is not covered by any resource group of
// ClusterQueue".
func (f Failure) String() string {
	var buf [128]byte
	return string(f.appendTo(buf[:0]))
}

func (f Failure) appendTo(b []byte) []byte {
	if f.Kind == UncoveredResource {
		b = append(b, "resource "...)
		b = append(b, f.Resource...)
		return append(b, " is not covered by any resource group of ClusterQueue"...)
	}
	b = append(b, "flavor "...)
	b = append(b, f.Flavor...)
	b = append(b, ": "...)
	b = append(b, f.Resource...)
	b = append(b, ' ')
	if f.Demand == Unlimited {
		// The product or sum overflowed int64: not "unlimited".
		b = append(b, "overflowing int64"...)
	} else {
		b = appendQuantity(b, f.Resource, f.Demand)
	}
	b = append(b, " > potential "...)
	b = appendQuantity(b, f.Resource, f.Quota.Potential())
	b = append(b, " (nominal "...)
	b = appendQuantity(b, f.Resource, f.Quota.Nominal)
	b = append(b, ", borrowable "...)
	b = appendQuantity(b, f.Resource, f.Quota.Borrowable)
	return append(b, ')')
}

// Assignment gives the flavor a Quotable workload's pod set gets in one
// resource group: the first fitting flavor in Kueue's order.
type Assignment struct {
	// PodSet indexes Workload.PodSets.
	PodSet int
	// Group indexes ClusterQueue.ResourceGroups.
	Group  int
	Flavor string
}

// Classification is the result of [Classify].
type Classification struct {
	Admissibility Admissibility
	// Reason is empty for Quotable (unless Unproven). For Unfeasible it
	// lists the failures a user can act on, separated by "; ", e.g.
	// "flavor default: cpu 20 > potential 2 (nominal 2, borrowable 0)".
	// Multi-pod-set workloads prefix each group's failures with
	// "pod set NAME: " or "pod sets A, B together: ". For Invalid it is the
	// validation error.
	Reason string
	// Failures are the Unfeasible reasons as data, in Reason's order.
	Failures []Failure
	// Assignments (Quotable only) give, pod set by pod set and group by
	// group, the flavor of each resource group the pod set touches.
	Assignments []Assignment
	// Unproven is set when the assignment search for several pod sets
	// sharing a group ran out of its budget before deciding: the workload is
	// then reported Quotable (Unfeasible is only claimed with a proof) and
	// the undecided pod sets have no Assignment.
	Unproven bool
	// Err is the validation error for Invalid, nil otherwise.
	Err error
}

// searchBudget bounds the number of (pod set, flavor) trials of one group's
// assignment search.
var searchBudget = 100_000

// Classify decides the paper's partition (Def. 3) for workload w in cq.
//
// w is Quotable iff every positive request is for a resource cq covers and,
// for every resource group g that w touches, there is an assignment of each
// pod set touching g to a flavor f of g such that, for every resource r of
// g,
//
//	Σ_{pod sets p assigned to f} Count_p × request_p(r) ≤ Potential(f, r)
//
// where Potential = nominal + borrowable (saturating; Unlimited always
// fits). Pod sets assigned the same flavor accumulate because they share
// the ClusterQueue's capacity, as Kueue's flavor assigner accumulates the
// usage of previously assigned pod sets. Groups are independent because a
// flavor belongs to exactly one group. Flavors are tried in Kueue's order
// and pod sets in spec order, depth first, so the reported assignment is the
// first fitting one in that order; when Kueue's greedy first-fit pass
// succeeds it is exactly that pass. The search backtracks where the greedy
// pass would stop, because Kueue's choice for an earlier pod set depends
// on live usage and FlavorFungibility and may differ: Unfeasible therefore
// means that no assignment fits at all. Consecutive pod sets with equal
// demand are not permuted, and the search is bounded (see Unproven).
//
// Edge cases: zero requests and pod sets with Count 0 demand nothing; a
// workload demanding nothing is Quotable with no assignments; "pods" counts
// Count when cq covers it; Count × request saturates at Unlimited; a
// malformed cq or w (see Validate) gives Invalid. Node affinity, taints,
// topology (TAS pod set groups) and the flavor-fungibility policy are not
// modelled: the verdict is about quota only.
//
// Cost: one pass over the requests plus, per touched group, O(pod sets ×
// flavors × resources); one allocation (the assignments) when Quotable with
// up to 64 pod-set × resource slots.
func Classify(cq *ClusterQueue, w Workload) Classification { return classify(cq, w, true) }

// Verdict is Classify without the Assignments: the same Admissibility,
// Reason, Failures, Unproven and Err, and no allocation at all when Quotable
// with up to 64 pod-set × resource slots. It is for callers that only label
// the workload, such as the scheduler's hook, which does so for every head
// it could not admit in every cycle.
func Verdict(cq *ClusterQueue, w Workload) Classification { return classify(cq, w, false) }

// classify is Classify, with the assignments built only when assign is set.
func classify(cq *ClusterQueue, w Workload, assign bool) Classification {
	if !cq.valid() {
		err := cq.Validate()
		return Classification{Admissibility: Invalid, Reason: err.Error(), Err: err}
	}
	l := layoutOf(cq)
	numPodSets := len(w.PodSets)
	numGroups := len(cq.ResourceGroups)

	var demBuf [64]int64
	dem := sized(demBuf[:], numPodSets*l.slots)
	uncovered := false
	for p, ps := range w.PodSets {
		unc, ok := podSetDemand(cq, l, ps, dem[p*l.slots:(p+1)*l.slots])
		if !ok {
			err := w.Validate()
			return Classification{Admissibility: Invalid, Reason: err.Error(), Err: err}
		}
		uncovered = uncovered || unc
	}

	var out Classification
	if uncovered {
		for _, r := range uncoveredResources(cq, w) {
			out.Failures = append(out.Failures, Failure{Kind: UncoveredResource, Group: -1, Resource: r})
		}
	}

	var chosenBuf [32]int
	chosen := sizedInt(chosenBuf[:], numPodSets*numGroups)
	for i := range chosen {
		chosen[i] = -1
	}
	var memberBuf, choiceBuf [16]int
	var usageBuf [64]int64
	off := 0
	for g := range cq.ResourceGroups {
		s := groupSearch{
			grp:        &cq.ResourceGroups[g],
			groupIndex: g,
			dem:        dem,
			slots:      l.slots,
			off:        off,
			budget:     searchBudget,
		}
		off += len(s.grp.Resources)
		s.members = memberBuf[:0]
		for p := range numPodSets {
			if s.touches(p) {
				s.members = append(s.members, p)
			}
		}
		if len(s.members) == 0 {
			continue
		}
		failed := false
		for _, p := range s.members {
			if s.firstFit(p) < 0 {
				failed = true
				out.Failures = s.aloneFailures(out.Failures, w, p)
			}
		}
		if failed {
			continue
		}
		s.choice = sizedInt(choiceBuf[:], len(s.members))
		s.usage = sized(usageBuf[:], len(s.grp.Flavors)*len(s.grp.Resources))
		clear(s.usage)
		switch {
		case !s.totalFitsSomewhere():
			out.Failures = s.combinedFailures(out.Failures, w)
			continue
		case s.place(0):
			for i, p := range s.members {
				chosen[p*numGroups+g] = s.choice[i]
			}
		case s.exhausted:
			out.Unproven = true
		default:
			out.Failures = s.combinedFailures(out.Failures, w)
		}
	}

	if len(out.Failures) > 0 {
		out.Admissibility = Unfeasible
		out.Reason = reasonOf(out.Failures, numPodSets > 1)
		return out
	}
	out.Admissibility = Quotable
	if out.Unproven {
		out.Reason = "the flavor assignment search for several pod sets ran out of budget; assumed Quotable"
	}
	if !assign {
		return out
	}
	n := 0
	for _, f := range chosen {
		if f >= 0 {
			n++
		}
	}
	if n > 0 {
		out.Assignments = make([]Assignment, 0, n)
		for p := range numPodSets {
			for g := range numGroups {
				if f := chosen[p*numGroups+g]; f >= 0 {
					out.Assignments = append(out.Assignments, Assignment{PodSet: p, Group: g, Flavor: cq.ResourceGroups[g].Flavors[f].Name})
				}
			}
		}
	}
	return out
}

// groupSearch assigns the pod sets touching one resource group to flavors.
type groupSearch struct {
	grp        *ResourceGroup
	groupIndex int
	dem        []int64 // pod set p, slot s at dem[p*slots+s]
	slots      int
	off        int     // first slot of the group
	members    []int   // pod sets with a positive demand in the group
	choice     []int   // flavor index per member
	usage      []int64 // finite-potential usage of flavor f, resource r at usage[f*R+r]
	nodes      int
	budget     int
	// exhausted is set when the search stopped on its budget.
	exhausted bool
}

func (s *groupSearch) d(p, r int) int64 { return s.dem[p*s.slots+s.off+r] }

func (s *groupSearch) touches(p int) bool {
	for r := range s.grp.Resources {
		if s.d(p, r) > 0 {
			return true
		}
	}
	return false
}

// failsAlone returns the first resource in which pod set p alone exceeds
// flavor f's potential, or -1.
func (s *groupSearch) failsAlone(p, f int) int {
	for r, q := range s.grp.Flavors[f].Quotas {
		if d := s.d(p, r); d > 0 && exceeds(d, q.Potential()) {
			return r
		}
	}
	return -1
}

// firstFit returns the first flavor that holds pod set p alone, or -1.
func (s *groupSearch) firstFit(p int) int {
	for f := range s.grp.Flavors {
		if s.failsAlone(p, f) < 0 {
			return f
		}
	}
	return -1
}

// total returns the members' summed demand in resource r, saturating.
func (s *groupSearch) total(r int) int64 {
	var t int64
	for _, p := range s.members {
		t = saturatingAdd(t, s.d(p, r))
	}
	return t
}

// totalFitsSomewhere is a necessary condition for an assignment: in every
// resource, the members' total demand fits the flavors' summed potential.
func (s *groupSearch) totalFitsSomewhere() bool {
	for r := range s.grp.Resources {
		var capSum int64
		for _, f := range s.grp.Flavors {
			capSum = saturatingAdd(capSum, f.Quotas[r].Potential())
		}
		if exceeds(s.total(r), capSum) {
			return false
		}
	}
	return true
}

// place assigns members[i:] depth first, flavors in order. Consecutive
// members with identical demand get non-decreasing flavor indices, which
// skips permutations of one solution and keeps the first solution in
// lexicographic order.
func (s *groupSearch) place(i int) bool {
	if i == len(s.members) {
		return true
	}
	p := s.members[i]
	start := 0
	if i > 0 && s.sameDemand(s.members[i-1], p) {
		start = s.choice[i-1]
	}
	numRes := len(s.grp.Resources)
	for f := start; f < len(s.grp.Flavors); f++ {
		s.nodes++
		if s.nodes > s.budget {
			s.exhausted = true
			return false
		}
		quotas := s.grp.Flavors[f].Quotas
		use := s.usage[f*numRes : (f+1)*numRes]
		fits := true
		for r, q := range quotas {
			d := s.d(p, r)
			if pot := q.Potential(); d > 0 && pot != Unlimited && d > pot-use[r] {
				fits = false
				break
			}
		}
		if !fits {
			continue
		}
		// Only finite potentials need bookkeeping; there usage+d ≤ potential,
		// so neither the addition nor the undo can overflow.
		for r, q := range quotas {
			if q.Potential() != Unlimited {
				use[r] += s.d(p, r)
			}
		}
		s.choice[i] = f
		if s.place(i + 1) {
			return true
		}
		for r, q := range quotas {
			if q.Potential() != Unlimited {
				use[r] -= s.d(p, r)
			}
		}
		if s.exhausted {
			return false
		}
	}
	return false
}

func (s *groupSearch) sameDemand(a, b int) bool {
	for r := range s.grp.Resources {
		if s.d(a, r) != s.d(b, r) {
			return false
		}
	}
	return true
}

// aloneFailures appends, for each flavor, the first resource in which pod
// set p alone exceeds its potential.
func (s *groupSearch) aloneFailures(dst []Failure, w Workload, p int) []Failure {
	names := []string{podSetName(w.PodSets[p], p)}
	for f := range s.grp.Flavors {
		if r := s.failsAlone(p, f); r >= 0 {
			dst = append(dst, s.failure(names, f, r, s.d(p, r)))
		}
	}
	return dst
}

// combinedFailures appends, for each flavor, the first resource in which
// the members' total demand exceeds its potential. When no assignment fits,
// the total fits no single flavor (else all members on that flavor would
// fit), so every flavor has such a resource.
func (s *groupSearch) combinedFailures(dst []Failure, w Workload) []Failure {
	names := make([]string, len(s.members))
	for i, p := range s.members {
		names[i] = podSetName(w.PodSets[p], p)
	}
	for f, fq := range s.grp.Flavors {
		for r, q := range fq.Quotas {
			if t := s.total(r); t > 0 && exceeds(t, q.Potential()) {
				dst = append(dst, s.failure(names, f, r, t))
				break
			}
		}
	}
	return dst
}

func (s *groupSearch) failure(podSets []string, f, r int, demand int64) Failure {
	return Failure{
		Kind:     ExceedsPotential,
		PodSets:  podSets,
		Group:    s.groupIndex,
		Flavor:   s.grp.Flavors[f].Name,
		Resource: s.grp.Resources[r],
		Demand:   demand,
		Quota:    s.grp.Flavors[f].Quotas[r],
	}
}

// exceeds reports demand > potential, where an Unlimited potential holds
// anything.
func exceeds(demand, potential int64) bool {
	return potential != Unlimited && demand > potential
}

// reasonOf joins the failures into one message. Consecutive failures of the
// same pod sets and group form one clause, prefixed with the pod set names
// when the workload has several pod sets.
func reasonOf(failures []Failure, multiPodSet bool) string {
	b := make([]byte, 0, 96*len(failures))
	for i, f := range failures {
		if i > 0 {
			b = append(b, "; "...)
		}
		newClause := i == 0 || f.Group != failures[i-1].Group || !sameNames(f.PodSets, failures[i-1].PodSets)
		if multiPodSet && newClause && f.Kind == ExceedsPotential {
			if len(f.PodSets) == 1 {
				b = append(b, "pod set "...)
				b = append(b, f.PodSets[0]...)
				b = append(b, ": "...)
			} else {
				b = append(b, "pod sets "...)
				for j, n := range f.PodSets {
					if j > 0 {
						b = append(b, ", "...)
					}
					b = append(b, n...)
				}
				b = append(b, " together: "...)
			}
		}
		b = f.appendTo(b)
	}
	return string(b)
}

func sameNames(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// sized returns buf[:n] when it is large enough, else a new zeroed slice.
// buf must be zeroed.
func sized(buf []int64, n int) []int64 {
	if n <= len(buf) {
		return buf[:n]
	}
	return make([]int64, n)
}

func sizedInt(buf []int, n int) []int {
	if n <= len(buf) {
		return buf[:n]
	}
	return make([]int, n)
}
