package capacity

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

var (
	// ErrZeroDemand: the workload (or class mix) demands nothing in any
	// resource, so k_eff is not defined; the result then has Servers 0.
	ErrZeroDemand = errors.New("demand is zero")
	// ErrInvalidMix: a class mix has no class, a negative, NaN or infinite
	// rate, or rates that sum to zero.
	ErrInvalidMix = errors.New("invalid class mix")
)

// CapacityBasis selects the capacity C(q, f, r) that k_eff divides.
type CapacityBasis int

const (
	// BasisNominal uses the nominal quota: the paper's k_eff (Eq. 3, 4).
	BasisNominal CapacityBasis = iota
	// BasisExpectedBorrowing uses nominal + E[B], the expected borrowable
	// amount: the paper's k_eff⁺ (§3.5, "Accounting for Cohort Borrowing").
	BasisExpectedBorrowing
	// BasisPotential uses nominal + max borrowable (PotAvail): the most
	// workloads that could ever run at once.
	BasisPotential
)

func (b CapacityBasis) String() string {
	switch b {
	case BasisNominal:
		return "nominal"
	case BasisExpectedBorrowing:
		return "nominal+expected-borrowing"
	case BasisPotential:
		return "potential"
	default:
		return fmt.Sprintf("CapacityBasis(%d)", int(b))
	}
}

// KEffResult is an effective server count with its bottleneck.
type KEffResult struct {
	// Servers is k_eff, the number of workloads that fit at once (≥ 0),
	// clamped to math.MaxInt. 0 means the demand does not fit even once:
	// under BasisNominal the nominal-only model cannot serve it; under
	// BasisPotential a single-pod-set workload is Unfeasible.
	Servers int
	// Unbounded is set when no capacity binds: every resource demanded has
	// Unlimited capacity in the chosen flavors. Servers is then math.MaxInt
	// (which a clamped finite count can also reach); callers modelling
	// servers should treat Unbounded as "no queueing".
	Unbounded bool
	// Group indexes the bottleneck resource group (-1 when the bottleneck
	// is a resource no group covers).
	Group int
	// Flavor is the bottleneck flavor f*: the best flavor (largest k) of the
	// bottleneck group; "" for an uncovered resource.
	Flavor string
	// Resource is the binding resource: the argmin of ⌊C/d⌋ within Flavor
	// (first in the group's order on ties); "" when Unbounded.
	Resource string
	// Capacity is C(q, f*, r*) under the chosen basis; 0 for an uncovered
	// resource.
	Capacity int64
	// Demand is d(f*, r*): the workload's total demand, or the mix's mean
	// demand Σ_j φ_j d_j, in canonical units.
	Demand float64
}

// KEff returns the single-class effective server count of paper Eq. 3,
//
//	k_eff(q, j) = max_{f ∈ F_j} min_{r : d_j(r) > 0} ⌊C(q, f, r) / d_j(r)⌋,
//
// where d_j is the workload's total demand (summed over pod sets, "pods" =
// Σ Count when covered) and C is the capacity under basis. A workload needs
// one flavor of every resource group it touches, so the compatible "flavor"
// is one flavor per group and the formula evaluates as
//
//	k_eff = min_{groups g touched} max_{f ∈ g} min_{r ∈ g, d(r) > 0} ⌊C(f, r)/d(r)⌋.
//
// All pod sets are placed on the same flavor of a group (a conservative
// simplification of Kueue's per-pod-set choice). Ties keep the first flavor
// (Kueue's order) and the first group; the bottleneck is the group with the
// smallest k, its best flavor and, within it, the resource of smallest
// ⌊C/d⌋. Integer division is exact.
//
// Edge cases: an Unlimited capacity does not bind; if nothing binds the
// result is Unbounded. A positive request for a resource no group covers
// gives Servers 0 with Group -1 and that resource (the alphabetically first
// one). A workload demanding nothing returns Servers 0 and ErrZeroDemand. A
// malformed cq or w returns an error wrapping ErrInvalidCapacity or
// ErrInvalidWorkload.
func KEff(cq *ClusterQueue, w Workload, basis CapacityBasis) (KEffResult, error) {
	if err := checkInputs(cq, basis); err != nil {
		return KEffResult{Group: -1}, err
	}
	l := layoutOf(cq)
	var buf [32]int64
	dem := sized(buf[:], l.slots)
	uncovered := false
	for _, ps := range w.PodSets {
		unc, ok := podSetDemand(cq, l, ps, dem)
		if !ok {
			return KEffResult{Group: -1}, w.Validate()
		}
		uncovered = uncovered || unc
	}
	if uncovered {
		r := uncoveredResources(cq, w)[0]
		return KEffResult{Group: -1, Resource: r, Demand: float64(w.TotalDemand(cq)[r])}, nil
	}
	return bottleneck(cq, basis, demandVector{ints: dem})
}

// Class is one workload class of a mix: a representative workload (its
// demand d_j) and its arrival rate λ_j (any unit, only ratios matter).
type Class struct {
	Workload Workload
	Rate     float64
}

// KEffMix returns the multi-class dominant-resource effective server count
// of paper Eq. 4 (and, with BasisExpectedBorrowing, k_eff⁺):
//
//	k_eff(q) = min_r ⌊C(q, f*, r) / d̄(r)⌋,   d̄(r) = Σ_j φ_j d_j(r),  φ_j = λ_j / Σ λ,
//
// in canonical units. Class demands do not depend on the flavor (Kueue
// requests are flavor independent), so the mix behaves like one class with
// the mean demand d̄ and f* is chosen as in [KEff]: per resource group the
// flavor with the largest k (flavors of a group are alternatives), and the
// bottleneck is the group with the smallest k (every group is needed). The
// paper writes f* = argmin_f k_eff(q, f); reading the argmin over flavors
// of one group would pick a flavor the mix need not use (a zero-quota
// fallback flavor would force k = 0) and would make Eq. 4 with one class
// disagree with Eq. 3, so the argmin is taken over groups. With one class,
// KEffMix equals KEff.
//
// The quotient is computed in float64; a value within (n+4)·ε (relative,
// n weighted classes, ε = 2⁻⁵²) of an integer — the rounding error the
// computation can make — is taken as that integer before flooring, so that
// exact ratios such as 6000/(6000/3) are not floored to 2.999… Results
// beyond math.MaxInt are clamped to it.
//
// Edge cases: classes with Rate 0 carry no weight; any class with positive
// weight that requests an uncovered resource gives Servers 0 (pass only
// Quotable classes); an all-zero mean demand returns ErrZeroDemand; no
// class, a negative, NaN or infinite rate, or all rates 0 return
// ErrInvalidMix.
func KEffMix(cq *ClusterQueue, classes []Class, basis CapacityBasis) (KEffResult, error) {
	if err := checkInputs(cq, basis); err != nil {
		return KEffResult{Group: -1}, err
	}
	if len(classes) == 0 {
		return KEffResult{Group: -1}, fmt.Errorf("%w: no class", ErrInvalidMix)
	}
	maxRate := 0.0
	for i, c := range classes {
		if math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0) || c.Rate < 0 {
			return KEffResult{Group: -1}, fmt.Errorf("%w: class %d has rate %v", ErrInvalidMix, i, c.Rate)
		}
		if !c.Workload.valid() {
			return KEffResult{Group: -1}, fmt.Errorf("class %d: %w", i, c.Workload.Validate())
		}
		maxRate = max(maxRate, c.Rate)
	}
	if maxRate == 0 {
		return KEffResult{Group: -1}, fmt.Errorf("%w: all rates are zero", ErrInvalidMix)
	}
	// Scale rates by the largest so that the weights stay in [0, 1].
	sum := 0.0
	for _, c := range classes {
		sum += c.Rate / maxRate
	}
	l := layoutOf(cq)
	mean := make([]float64, l.slots)
	one := make([]int64, l.slots)
	var uncovered []string
	uncoveredMean := map[string]float64{}
	terms := 0
	for _, c := range classes {
		phi := c.Rate / maxRate / sum
		if phi == 0 {
			continue
		}
		terms++
		clear(one)
		for _, ps := range c.Workload.PodSets {
			podSetDemand(cq, l, ps, one) // validated above
		}
		for s, d := range one {
			mean[s] += phi * float64(d)
		}
		for _, r := range uncoveredResources(cq, c.Workload) {
			if !slices.Contains(uncovered, r) {
				uncovered = append(uncovered, r)
			}
			uncoveredMean[r] += phi * float64(c.Workload.TotalDemand(cq)[r])
		}
	}
	if len(uncovered) > 0 {
		slices.Sort(uncovered)
		return KEffResult{Group: -1, Resource: uncovered[0], Demand: uncoveredMean[uncovered[0]]}, nil
	}
	return bottleneck(cq, basis, demandVector{floats: mean, terms: terms})
}

func checkInputs(cq *ClusterQueue, basis CapacityBasis) error {
	if basis < BasisNominal || basis > BasisPotential {
		return fmt.Errorf("capacity: unknown %v", basis)
	}
	if !cq.valid() {
		return cq.Validate()
	}
	return nil
}

// demandVector is a demand per slot: exact integers (one workload) or
// float means (a class mix). Exactly one field is set.
type demandVector struct {
	ints   []int64
	floats []float64
	terms  int // classes summed into floats
}

// epsilon is the float64 machine epsilon 2⁻⁵².
const epsilon = 0x1p-52

func (v demandVector) positive(s int) bool {
	if v.ints != nil {
		return v.ints[s] > 0
	}
	return v.floats[s] > 0
}

func (v demandVector) value(s int) float64 {
	if v.ints != nil {
		return float64(v.ints[s])
	}
	return v.floats[s]
}

// servers returns ⌊c / d(s)⌋ for a finite c ≥ 0 and d(s) > 0, clamped to
// math.MaxInt.
func (v demandVector) servers(c int64, s int) int {
	if v.ints != nil {
		return clampInt(float64(c/v.ints[s]), c/v.ints[s])
	}
	x := float64(c) / v.floats[s]
	// Each weighted term, the normalization and the division add at most
	// one rounding of relative size ε; undo that much error near integers.
	tol := float64(v.terms+4) * epsilon * x
	if r := math.Round(x); math.Abs(x-r) <= tol {
		x = r
	}
	x = math.Floor(x)
	if x >= math.MaxInt64 {
		return math.MaxInt
	}
	return clampInt(x, int64(x))
}

func clampInt(approx float64, exact int64) int {
	if approx >= float64(math.MaxInt) || exact > int64(math.MaxInt) {
		return math.MaxInt
	}
	return int(exact)
}

// bottleneck evaluates min over touched groups of max over flavors of min
// over demanded resources of ⌊C/d⌋.
func bottleneck(cq *ClusterQueue, basis CapacityBasis, dem demandVector) (KEffResult, error) {
	var (
		result  KEffResult
		found   bool // result holds a touched group
		touched bool
	)
	off := 0
	for g, grp := range cq.ResourceGroups {
		base := off
		off += len(grp.Resources)
		groupTouched := false
		for r := range grp.Resources {
			if dem.positive(base + r) {
				groupTouched = true
				break
			}
		}
		if !groupTouched {
			continue
		}
		touched = true
		var best KEffResult
		haveBest := false
		for _, f := range grp.Flavors {
			cur := KEffResult{Group: g, Flavor: f.Name, Unbounded: true, Servers: math.MaxInt}
			for r, q := range f.Quotas {
				if !dem.positive(base + r) {
					continue
				}
				c := capacityOf(q, basis)
				if c == Unlimited {
					continue
				}
				if k := dem.servers(c, base+r); cur.Unbounded || k < cur.Servers {
					cur = KEffResult{Servers: k, Group: g, Flavor: f.Name, Resource: grp.Resources[r], Capacity: c, Demand: dem.value(base + r)}
				}
			}
			if !haveBest || (!best.Unbounded && (cur.Unbounded || cur.Servers > best.Servers)) {
				best, haveBest = cur, true
			}
		}
		if !found || (!best.Unbounded && (result.Unbounded || best.Servers < result.Servers)) {
			result, found = best, true
		}
	}
	if !touched {
		return KEffResult{Group: -1}, ErrZeroDemand
	}
	return result, nil
}
