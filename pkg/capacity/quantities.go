package capacity

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// FlavorResource names one dimension of a ClusterQueue's capacity vector: a
// resource (for example "cpu", "memory", "nvidia.com/gpu") in one
// ResourceFlavor. It mirrors Kueue's resources.FlavorResource without
// importing Kueue.
type FlavorResource struct {
	Flavor   string
	Resource string
}

func (fr FlavorResource) String() string { return fr.Flavor + "/" + fr.Resource }

// Quantities maps flavor-resource dimensions to amounts in Kueue's canonical
// int64 units: milli-units for cpu, bytes for memory, whole units otherwise
// (the units of resources.ResourceValue). A missing key means zero.
type Quantities map[FlavorResource]int64

// Unlimited marks a quota or limit with no bound. Any demand fits it.
const Unlimited int64 = math.MaxInt64

// Clone returns an independent copy.
func (q Quantities) Clone() Quantities {
	out := make(Quantities, len(q))
	for k, v := range q {
		out[k] = v
	}
	return out
}

// Add adds other into q, saturating at Unlimited.
func (q Quantities) Add(other Quantities) {
	for k, v := range other {
		q[k] = saturatingAdd(q[k], v)
	}
}

// Sub subtracts other from q. Unlimited stays Unlimited.
func (q Quantities) Sub(other Quantities) {
	for k, v := range other {
		if q[k] == Unlimited {
			continue
		}
		q[k] -= v
	}
}

// Fits reports whether demand fits within q in every dimension that demand
// requests (a zero request always fits).
func (q Quantities) Fits(demand Quantities) bool {
	for k, v := range demand {
		if v > 0 && v > q[k] {
			return false
		}
	}
	return true
}

// Keys returns the dimensions of q in a deterministic order (by flavor, then
// resource).
func (q Quantities) Keys() []FlavorResource {
	keys := make([]FlavorResource, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b FlavorResource) int {
		if c := strings.Compare(a.Flavor, b.Flavor); c != 0 {
			return c
		}
		return strings.Compare(a.Resource, b.Resource)
	})
	return keys
}

func (q Quantities) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range q.Keys() {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %s", k, FormatQuantity(k.Resource, q[k]))
	}
	b.WriteByte('}')
	return b.String()
}

// FormatQuantity renders an amount in canonical units the way a user would
// write it: cpu in cores (or millicores), memory-like resources in bytes with
// binary suffixes when exact, and everything else as a plain integer.
func FormatQuantity(resource string, v int64) string {
	var buf [24]byte
	return string(appendQuantity(buf[:0], resource, v))
}

// appendQuantity appends FormatQuantity(resource, v) to dst.
func appendQuantity(dst []byte, resource string, v int64) []byte {
	if v == Unlimited {
		return append(dst, "unlimited"...)
	}
	switch resource {
	case "cpu":
		if v%1000 == 0 {
			return strconv.AppendInt(dst, v/1000, 10)
		}
		return append(strconv.AppendInt(dst, v, 10), 'm')
	case "memory", "ephemeral-storage":
		for _, s := range binarySuffixes {
			if v != 0 && v%s.size == 0 {
				return append(strconv.AppendInt(dst, v/s.size, 10), s.suffix...)
			}
		}
	}
	return strconv.AppendInt(dst, v, 10)
}

var binarySuffixes = []struct {
	suffix string
	size   int64
}{{"Ti", 1 << 40}, {"Gi", 1 << 30}, {"Mi", 1 << 20}, {"Ki", 1 << 10}}

func saturatingAdd(a, b int64) int64 {
	if a == Unlimited || b == Unlimited {
		return Unlimited
	}
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		if b > 0 {
			return Unlimited
		}
		return math.MinInt64
	}
	return s
}
