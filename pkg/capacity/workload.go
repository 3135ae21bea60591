package capacity

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ErrInvalidWorkload is wrapped by every error [Workload.Validate] returns.
var ErrInvalidWorkload = errors.New("invalid workload")

// PodsResource is the resource name Kueue uses to count pods against quota.
// When a ClusterQueue covers it, every pod set demands Count of it.
const PodsResource = "pods"

// PodSet is one homogeneous set of pods of a workload.
type PodSet struct {
	// Name is used in messages and assignments; it may be empty.
	Name string
	// Count is the number of pods. Zero means the pod set demands nothing;
	// a negative count makes the workload invalid.
	Count int64
	// Requests are the per-pod requests by resource name, in canonical
	// units. Zero entries are ignored; negative entries make the workload
	// invalid. A "pods" entry is ignored: the pods demand is always Count,
	// and only when the ClusterQueue covers "pods" (as in Kueue).
	Requests map[string]int64
}

// Workload is the demand of one workload: its pod sets, in spec order.
type Workload struct {
	PodSets []PodSet
}

// Validate returns an error wrapping ErrInvalidWorkload for a negative pod
// count or a negative request (nil when valid).
func (w Workload) Validate() error {
	var errs []error
	for i, ps := range w.PodSets {
		if ps.Count < 0 {
			errs = append(errs, fmt.Errorf("%w: pod set %s has negative count %d", ErrInvalidWorkload, podSetName(ps, i), ps.Count))
		}
		for _, r := range sortedKeys(ps.Requests) {
			if v := ps.Requests[r]; v < 0 && r != PodsResource {
				errs = append(errs, fmt.Errorf("%w: pod set %s requests negative %s %d", ErrInvalidWorkload, podSetName(ps, i), r, v))
			}
		}
	}
	return errors.Join(errs...)
}

func (w Workload) valid() bool {
	for _, ps := range w.PodSets {
		if ps.Count < 0 {
			return false
		}
		for r, v := range ps.Requests {
			if v < 0 && r != PodsResource {
				return false
			}
		}
	}
	return true
}

// TotalDemand is the workload's demand summed over its pod sets:
// Σ_podsets Count × per-pod request for every resource requested with a
// positive amount, plus "pods" = Σ Count when cq covers "pods". Products and
// sums saturate at Unlimited. Zero demands are left out, so an all-zero
// workload yields an empty map. The workload must be valid.
func (w Workload) TotalDemand(cq *ClusterQueue) map[string]int64 {
	out := make(map[string]int64)
	coversPods := cq.Covers(PodsResource)
	for _, ps := range w.PodSets {
		if ps.Count <= 0 {
			continue
		}
		for r, v := range ps.Requests {
			if v <= 0 || r == PodsResource {
				continue
			}
			out[r] = saturatingAdd(out[r], saturatingMul(ps.Count, v))
		}
		if coversPods {
			out[PodsResource] = saturatingAdd(out[PodsResource], ps.Count)
		}
	}
	return out
}

// demandLayout indexes the covered resources of a ClusterQueue: group g's
// resources occupy slots offset[g] .. offset[g]+len(Resources)-1.
type demandLayout struct {
	slots   int
	podsIdx int // slot of "pods", or -1
}

func layoutOf(cq *ClusterQueue) demandLayout {
	l := demandLayout{podsIdx: -1}
	for _, g := range cq.ResourceGroups {
		for _, r := range g.Resources {
			if r == PodsResource {
				l.podsIdx = l.slots
			}
			l.slots++
		}
	}
	return l
}

// slotOf returns the slot of resource, or -1 when no group covers it.
func slotOf(cq *ClusterQueue, resource string) int {
	s := 0
	for _, g := range cq.ResourceGroups {
		if i := indexOf(g.Resources, resource); i >= 0 {
			return s + i
		}
		s += len(g.Resources)
	}
	return -1
}

// podSetDemand adds to dem (one entry per slot) the pod set's total demand
// Count × per-pod request, saturating. It reports whether the pod set
// requests a positive amount of some resource no group covers, and whether
// the pod set is valid (see Workload.Validate); dem is unspecified when not.
func podSetDemand(cq *ClusterQueue, l demandLayout, ps PodSet, dem []int64) (uncovered, valid bool) {
	if ps.Count < 0 {
		return false, false
	}
	valid = true
	for r, v := range ps.Requests {
		if r == PodsResource {
			continue
		}
		if v <= 0 {
			valid = valid && v == 0
			continue
		}
		s := slotOf(cq, r)
		if s < 0 {
			uncovered = true
			continue
		}
		dem[s] = saturatingAdd(dem[s], saturatingMul(ps.Count, v))
	}
	if l.podsIdx >= 0 {
		dem[l.podsIdx] = saturatingAdd(dem[l.podsIdx], ps.Count)
	}
	return uncovered && ps.Count > 0, valid
}

// uncoveredResources lists, sorted, the resources the workload requests with
// a positive amount (in a pod set with a positive count) that no group of cq
// covers.
func uncoveredResources(cq *ClusterQueue, w Workload) []string {
	var out []string
	for _, ps := range w.PodSets {
		if ps.Count <= 0 {
			continue
		}
		for r, v := range ps.Requests {
			if v > 0 && r != PodsResource && cq.groupOf(r) < 0 && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	slices.Sort(out)
	return out
}

func podSetName(ps PodSet, i int) string {
	if ps.Name != "" {
		return ps.Name
	}
	return fmt.Sprintf("#%d", i)
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// saturatingMul returns a×b for a, b ≥ 0, saturating at Unlimited.
func saturatingMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a == Unlimited || b == Unlimited || a > math.MaxInt64/b {
		return Unlimited
	}
	return a * b
}

// ShapeKey is a key that workloads of equal demand share: each pod set's
// name, count and per-pod requests in resource name order.
func (w Workload) ShapeKey() string {
	var b strings.Builder
	for _, ps := range w.PodSets {
		b.WriteString(ps.Name)
		b.WriteByte('/')
		b.WriteString(strconv.FormatInt(ps.Count, 10))
		for _, name := range sortedKeys(ps.Requests) {
			b.WriteByte(' ')
			b.WriteString(name)
			b.WriteByte('=')
			b.WriteString(strconv.FormatInt(ps.Requests[name], 10))
		}
		b.WriteByte(';')
	}
	return b.String()
}
