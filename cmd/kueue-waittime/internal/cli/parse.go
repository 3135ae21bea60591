package cli

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"sigs.k8s.io/kueue/pkg/resources"
)

// NonNegativeFloat parses a finite number ≥ 0. The error is a plain
// message (the caller adds the flag or field name).
func NonNegativeFloat(raw string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("must be a finite number, got %q", raw)
	}
	if v < 0 {
		return 0, fmt.Errorf("must be >= 0, got %q", raw)
	}
	return v, nil
}

// PositiveDuration parses a Go duration ("20s", "1m30s") that is > 0 and
// returns it in seconds.
func PositiveDuration(raw string) (float64, error) {
	d, err := time.ParseDuration(strings.TrimSpace(raw))
	if err != nil {
		return 0, fmt.Errorf("must be a Go duration such as 20s or 1m30s, got %q", raw)
	}
	if d <= 0 {
		return 0, fmt.Errorf("must be > 0, got %q", raw)
	}
	return d.Seconds(), nil
}

// Quantity parses a Kubernetes quantity ("500m", "2Gi", "4") for the named
// resource into Kueue's canonical int64 units: milli-units for cpu, whole
// units (bytes for memory) otherwise, rounding up as Kueue's
// resources.ResourceValue does. Negative quantities, and quantities so large
// that the canonical value reaches math.MaxInt64 (which Kueue and the
// capacity model read as "unlimited"), are errors.
func Quantity(resourceName, raw string) (int64, error) {
	q, err := resource.ParseQuantity(strings.TrimSpace(raw))
	if err != nil {
		return 0, fmt.Errorf("%s: malformed quantity %q (want Kubernetes notation such as 500m, 2, 64Mi)", resourceName, raw)
	}
	if q.Sign() < 0 {
		return 0, fmt.Errorf("%s: must be >= 0, got %q", resourceName, raw)
	}
	v := resources.ResourceValue(corev1.ResourceName(resourceName), q)
	if v == math.MaxInt64 {
		return 0, fmt.Errorf("%s: quantity %q is too large", resourceName, raw)
	}
	return v, nil
}

// ResourceAmount is one `name=quantity` entry of a resource list, in
// canonical units.
type ResourceAmount struct {
	Name  string
	Value int64
}

// ResourceList parses a comma-separated `name=quantity` list such as
// "cpu=500m,memory=64Mi" in the order given. Empty entries are skipped;
// a missing "=", an empty name, a repeated name or a malformed quantity is
// an error. An empty list is an error.
func ResourceList(raw string) ([]ResourceAmount, error) {
	var out []ResourceAmount
	seen := map[string]bool{}
	for entry := range strings.SplitSeq(raw, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, value, ok := strings.Cut(entry, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("want name=quantity pairs such as cpu=500m,memory=64Mi, got %q", entry)
		}
		if strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("resource name %q contains spaces", name)
		}
		if seen[name] {
			return nil, fmt.Errorf("resource %s is listed twice", name)
		}
		seen[name] = true
		v, err := Quantity(name, value)
		if err != nil {
			return nil, err
		}
		out = append(out, ResourceAmount{Name: name, Value: v})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("want name=quantity pairs such as cpu=500m,memory=64Mi, got %q", raw)
	}
	return out, nil
}
