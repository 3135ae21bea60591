package capacity

import (
	"errors"
	"fmt"
)

// ErrInvalidCapacity is wrapped by every error [ClusterQueue.Validate]
// returns.
var ErrInvalidCapacity = errors.New("invalid ClusterQueue capacity")

// Quota is the capacity of one flavor-resource of a ClusterQueue, in
// canonical units.
type Quota struct {
	// Nominal is the nominal quota C(q, f, r) (Kueue's nominalQuota).
	Nominal int64
	// Borrowable is MaxBorrow(q, f, r): the most the ClusterQueue can borrow
	// from its cohort for this flavor-resource, already bounded by borrowing
	// and lending limits along the cohort tree. From a Kueue snapshot it is
	// PotentialAvailable(fr) - QuotaFor(fr).Nominal. Unlimited is allowed;
	// 0 without a cohort.
	Borrowable int64
	// ExpectedBorrowable is E[B(q, f, r)], the borrowable capacity the
	// ClusterQueue can expect on average given its siblings' utilization
	// (paper §3.5, "Accounting for Cohort Borrowing"). It only feeds k_eff⁺
	// ([BasisExpectedBorrowing]); 0 when unknown. 0 ≤ it ≤ Borrowable.
	ExpectedBorrowable int64
}

// QuotaOf is the Quota of a flavor-resource whose nominal quota is
// nominal, whose potential capacity (nominal plus what can be borrowed
// along the cohort tree) is potential, and of which the ClusterQueue could
// hold beyond nominal beyondNominal now (its usage plus what is available
// to it, less nominal; negative when some of its nominal quota is lent
// out). Borrowable is potential − nominal, Unlimited when the potential is
// Unlimited; ExpectedBorrowable is what could be borrowed at this instant,
// the state-conditioned stand-in for E[B] of paper §3.5, and Borrowable
// when either is Unlimited.
func QuotaOf(nominal, potential, beyondNominal int64) Quota {
	q := Quota{Nominal: nominal}
	switch {
	case potential == Unlimited && nominal != Unlimited:
		q.Borrowable = Unlimited
	case potential > nominal:
		q.Borrowable = potential - nominal
	}
	if q.Nominal == Unlimited || q.Borrowable == Unlimited {
		q.ExpectedBorrowable = q.Borrowable
	} else {
		q.ExpectedBorrowable = min(max(beyondNominal, 0), q.Borrowable)
	}
	return q
}

// Potential is PotAvail = Nominal + Borrowable (paper §3.1, "Potential
// Available Capacity"), saturating at Unlimited.
func (q Quota) Potential() int64 { return saturatingAdd(q.Nominal, q.Borrowable) }

// FlavorQuotas is one flavor of a resource group with its quota for each
// covered resource.
type FlavorQuotas struct {
	// Name is the ResourceFlavor name.
	Name string
	// Quotas[i] is the quota of the group's Resources[i] in this flavor; it
	// has exactly as many entries as the group has resources.
	Quotas []Quota
}

// ResourceGroup mirrors one entry of a ClusterQueue's spec.resourceGroups:
// the resources it covers and its flavors in the order Kueue tries them.
// A pod set gets one flavor per resource group, used for all the group's
// resources.
type ResourceGroup struct {
	// Resources are the covered resource names, e.g. "cpu", "memory", "pods".
	Resources []string
	// Flavors are tried in this order (Kueue's order).
	Flavors []FlavorQuotas
}

// ClusterQueue is the capacity description of one ClusterQueue in pure
// numbers. The zero value covers no resource. As in Kueue, a resource and a
// flavor may each appear in only one resource group; [ClusterQueue.Validate]
// checks this and the signs of the quotas.
type ClusterQueue struct {
	// Name is used in messages only; it may be empty.
	Name           string
	ResourceGroups []ResourceGroup
}

// Quota returns the quota of fr and whether the ClusterQueue covers fr (the
// flavor is in the group that covers the resource). A flavor-resource that
// is not covered has a zero Quota.
func (cq *ClusterQueue) Quota(fr FlavorResource) (Quota, bool) {
	if cq == nil {
		return Quota{}, false
	}
	for _, g := range cq.ResourceGroups {
		ri := indexOf(g.Resources, fr.Resource)
		if ri < 0 {
			continue
		}
		for _, f := range g.Flavors {
			if f.Name == fr.Flavor && ri < len(f.Quotas) {
				return f.Quotas[ri], true
			}
		}
	}
	return Quota{}, false
}

// Potential returns PotAvail(q, f, r) = nominal + borrowable for fr,
// saturating at Unlimited; 0 when fr is not covered.
func (cq *ClusterQueue) Potential(fr FlavorResource) int64 {
	q, _ := cq.Quota(fr)
	return q.Potential()
}

// Covers reports whether some resource group covers the resource.
func (cq *ClusterQueue) Covers(resource string) bool {
	return cq.groupOf(resource) >= 0
}

// Validate reports every malformation of the capacity description, each as
// an error wrapping ErrInvalidCapacity, joined with errors.Join (nil when
// valid):
//   - a resource group with no resources or no flavors, an empty resource
//     or flavor name;
//   - a resource or a flavor listed twice, within or across groups;
//   - a flavor whose Quotas do not have one entry per covered resource;
//   - a negative nominal quota, a negative borrowable amount, or an
//     expected borrowable amount outside [0, Borrowable].
//
// A nil *ClusterQueue is invalid.
func (cq *ClusterQueue) Validate() error {
	if cq == nil {
		return fmt.Errorf("%w: nil ClusterQueue", ErrInvalidCapacity)
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: %s", ErrInvalidCapacity, fmt.Sprintf(format, args...)))
	}
	for gi, g := range cq.ResourceGroups {
		if len(g.Resources) == 0 {
			bad("resource group %d covers no resource", gi)
		}
		if len(g.Flavors) == 0 {
			bad("resource group %d has no flavor", gi)
		}
		for ri, r := range g.Resources {
			if r == "" {
				bad("resource group %d: resource %d has an empty name", gi, ri)
				continue
			}
			if firstResource(cq.ResourceGroups, gi, ri) {
				continue
			}
			bad("resource %s is listed more than once (again in resource group %d)", r, gi)
		}
		for fi, f := range g.Flavors {
			if f.Name == "" {
				bad("resource group %d: flavor %d has an empty name", gi, fi)
			} else if !firstFlavor(cq.ResourceGroups, gi, fi) {
				bad("flavor %s is listed more than once (again in resource group %d)", f.Name, gi)
			}
			if len(f.Quotas) != len(g.Resources) {
				bad("resource group %d: flavor %s has %d quotas for %d covered resources", gi, f.Name, len(f.Quotas), len(g.Resources))
			}
			for ri, q := range f.Quotas {
				r := fmt.Sprintf("#%d", ri)
				if ri < len(g.Resources) {
					r = g.Resources[ri]
				}
				if q.Nominal < 0 {
					bad("flavor %s resource %s: negative nominal quota %d", f.Name, r, q.Nominal)
				}
				if q.Borrowable < 0 {
					bad("flavor %s resource %s: negative borrowable amount %d", f.Name, r, q.Borrowable)
				}
				if q.ExpectedBorrowable < 0 {
					bad("flavor %s resource %s: negative expected borrowable amount %d", f.Name, r, q.ExpectedBorrowable)
				} else if q.Borrowable >= 0 && q.ExpectedBorrowable > q.Borrowable {
					bad("flavor %s resource %s: expected borrowable amount %s exceeds borrowable amount %s",
						f.Name, r, FormatQuantity(r, q.ExpectedBorrowable), FormatQuantity(r, q.Borrowable))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// valid is Validate without building messages, for the hot paths.
func (cq *ClusterQueue) valid() bool {
	if cq == nil {
		return false
	}
	for gi, g := range cq.ResourceGroups {
		if len(g.Resources) == 0 || len(g.Flavors) == 0 {
			return false
		}
		for ri, r := range g.Resources {
			if r == "" || !firstResource(cq.ResourceGroups, gi, ri) {
				return false
			}
		}
		for fi, f := range g.Flavors {
			if f.Name == "" || !firstFlavor(cq.ResourceGroups, gi, fi) || len(f.Quotas) != len(g.Resources) {
				return false
			}
			for _, q := range f.Quotas {
				if q.Nominal < 0 || q.Borrowable < 0 || q.ExpectedBorrowable < 0 || q.ExpectedBorrowable > q.Borrowable {
					return false
				}
			}
		}
	}
	return true
}

// firstResource reports whether groups[gi].Resources[ri] is the first
// occurrence of that name across all groups.
func firstResource(groups []ResourceGroup, gi, ri int) bool {
	name := groups[gi].Resources[ri]
	for g := 0; g <= gi; g++ {
		rs := groups[g].Resources
		end := len(rs)
		if g == gi {
			end = ri
		}
		for _, r := range rs[:end] {
			if r == name {
				return false
			}
		}
	}
	return true
}

// firstFlavor reports whether groups[gi].Flavors[fi] is the first occurrence
// of that flavor name across all groups.
func firstFlavor(groups []ResourceGroup, gi, fi int) bool {
	name := groups[gi].Flavors[fi].Name
	for g := 0; g <= gi; g++ {
		fs := groups[g].Flavors
		end := len(fs)
		if g == gi {
			end = fi
		}
		for _, f := range fs[:end] {
			if f.Name == name {
				return false
			}
		}
	}
	return true
}

// groupOf returns the index of the group covering resource, or -1.
func (cq *ClusterQueue) groupOf(resource string) int {
	if cq == nil {
		return -1
	}
	for gi, g := range cq.ResourceGroups {
		if indexOf(g.Resources, resource) >= 0 {
			return gi
		}
	}
	return -1
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// capacityOf returns the capacity of q under basis.
func capacityOf(q Quota, basis CapacityBasis) int64 {
	switch basis {
	case BasisExpectedBorrowing:
		return saturatingAdd(q.Nominal, q.ExpectedBorrowable)
	case BasisPotential:
		return q.Potential()
	default:
		return q.Nominal
	}
}
