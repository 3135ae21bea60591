package capacity

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzCapacity drives Validate, Classify, KEff and KEffMix with arbitrary
// capacities, workloads and rates (negative, huge, Unlimited, duplicate
// names, short quota lists) and checks that nothing panics and every answer
// is well defined.
func FuzzCapacity(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add([]byte(strings.Repeat("\x05\x11", 40)))
	f.Add([]byte(strings.Repeat("\x01\xff\x03\x80", 32)))
	f.Add([]byte(strings.Repeat("\x07\x02\x00\x09\x0b", 30)))
	f.Add([]byte("\x02\x02\x02\x04\x04\x03\xde\xad\xbe\xef\x00\x00\x00\x01\x06\x06\x06"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &byteSource{data: data}
		q := genClusterQueue(s, true)
		w := genWorkload(s, true)
		if intn(s, 4) == 0 {
			q = nil
		}
		capErr, wlErr := q.Validate(), w.Validate()
		if capErr != nil && !errors.Is(capErr, ErrInvalidCapacity) || wlErr != nil && !errors.Is(wlErr, ErrInvalidWorkload) {
			t.Fatalf("validation errors not wrapped: %v / %v", capErr, wlErr)
		}
		if (capErr == nil) != q.valid() || (wlErr == nil) != w.valid() {
			t.Fatalf("valid() disagrees with Validate(): %v / %v", capErr, wlErr)
		}

		c := Classify(q, w)
		withoutAssignments := c
		withoutAssignments.Assignments = nil
		if diff := cmp.Diff(withoutAssignments, Verdict(q, w), sameErrorMessage); diff != "" {
			t.Fatalf("Verdict differs from Classify without its assignments (-Classify +Verdict):\n%s", diff)
		}
		switch c.Admissibility {
		case Invalid:
			if capErr == nil && wlErr == nil || c.Err == nil {
				t.Fatalf("Invalid without an invalid input: %v", c.Err)
			}
		case Quotable:
			if capErr != nil || wlErr != nil || len(c.Failures) > 0 {
				t.Fatalf("Quotable with errors %v / %v or failures %v", capErr, wlErr, c.Failures)
			}
			if ok, why := fitsAssignments(q, w, c); !ok {
				t.Fatalf("Quotable assignments do not fit: %s", why)
			}
		case Unfeasible:
			if c.Reason == "" || len(c.Failures) == 0 {
				t.Fatalf("Unfeasible without a reason")
			}
		default:
			t.Fatalf("Admissibility %d", c.Admissibility)
		}
		if c.Admissibility != Invalid && !c.Unproven && smallEnough(q, w) {
			if bf := bruteForceQuotable(q, w); bf != (c.Admissibility == Quotable) {
				t.Fatalf("Classify %v, brute force Quotable %v", c.Admissibility, bf)
			}
		}

		for _, b := range []CapacityBasis{BasisNominal, BasisExpectedBorrowing, BasisPotential, CapacityBasis(intn(s, 8))} {
			k, err := KEff(q, w, b)
			checkKEff(t, k, err)
			rates := []float64{math.Float64frombits(s.u64()), float64(intn(s, 5))}
			m, err := KEffMix(q, []Class{{w, rates[0]}, {genWorkload(s, true), rates[1]}}, b)
			checkKEff(t, m, err)
		}
	})
}

func checkKEff(t *testing.T, k KEffResult, err error) {
	t.Helper()
	// A finite k beyond math.MaxInt is clamped, so MaxInt alone does not
	// mean Unbounded.
	if k.Servers < 0 || k.Unbounded && k.Servers != math.MaxInt || k.Capacity < 0 ||
		math.IsNaN(k.Demand) || math.IsInf(k.Demand, 0) || k.Demand < 0 {
		t.Fatalf("bad k_eff %+v", k)
	}
	if err != nil && (k.Servers != 0 || k.Unbounded) {
		t.Fatalf("error %v with a result %+v", err, k)
	}
}

// smallEnough bounds the brute-force enumeration in the fuzz test.
func smallEnough(q *ClusterQueue, w Workload) bool {
	if q == nil || len(w.PodSets) > 4 {
		return false
	}
	for _, g := range q.ResourceGroups {
		if len(g.Flavors) > 4 {
			return false
		}
	}
	return true
}
