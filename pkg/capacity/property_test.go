package capacity

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// source feeds the generators: a seeded PCG for property tests, the fuzz
// input for the fuzz test.
type source interface {
	byte() byte
	u64() uint64
}

type randSource struct{ r *rand.Rand }

func (s randSource) byte() byte  { return byte(s.r.Uint32()) }
func (s randSource) u64() uint64 { return s.r.Uint64() }

type byteSource struct{ data []byte }

func (s *byteSource) byte() byte {
	if len(s.data) == 0 {
		return 0
	}
	b := s.data[0]
	s.data = s.data[1:]
	return b
}

func (s *byteSource) u64() uint64 {
	var v uint64
	for range 8 {
		v = v<<8 | uint64(s.byte())
	}
	return v
}

func intn(s source, n int) int { return int(s.byte()) % n }

var resourcePool = []string{"cpu", "memory", "pods", "nvidia.com/gpu", "example.com/x"}

// amount draws a quota or request. Well-formed draws are small and
// non-negative, with Unlimited when allowUnlimited; extreme draws also give
// negative, huge and arbitrary values.
func amount(s source, extreme, allowUnlimited bool) int64 {
	b := s.byte()
	if extreme {
		switch b % 8 {
		case 0:
			return 0
		case 1:
			return Unlimited
		case 2:
			return -int64(s.byte())
		case 3:
			return int64(s.u64())
		case 4:
			return Unlimited - 1
		}
		return int64(s.byte() % 40)
	}
	switch {
	case b%16 == 0:
		return 0
	case b%16 == 1 && allowUnlimited:
		return Unlimited
	}
	return int64(s.byte() % 24)
}

// genClusterQueue draws 1-3 groups over disjoint resources with 1-3 flavors
// each. Extreme draws may repeat names and break every rule Validate checks.
func genClusterQueue(s source, extreme bool) *ClusterQueue {
	pool := append([]string(nil), resourcePool...)
	for i := len(pool) - 1; i > 0; i-- {
		j := intn(s, i+1)
		pool[i], pool[j] = pool[j], pool[i]
	}
	q := &ClusterQueue{Name: "gen"}
	numGroups := 1 + intn(s, 3)
	next := 0
	for g := range numGroups {
		if next >= len(pool) {
			break
		}
		n := 1 + intn(s, 2)
		if g == numGroups-1 {
			n = 1 + intn(s, len(pool)-next)
		}
		n = min(n, len(pool)-next)
		grp := ResourceGroup{Resources: append([]string(nil), pool[next:next+n]...)}
		next += n
		if extreme && intn(s, 8) == 0 {
			grp.Resources = append(grp.Resources, resourcePool[intn(s, len(resourcePool))])
		}
		for f := range 1 + intn(s, 3) {
			name := fmt.Sprintf("f%d%d", g, f)
			if extreme && intn(s, 8) == 0 {
				name = "f00"
			}
			fq := FlavorQuotas{Name: name}
			for range grp.Resources {
				qt := Quota{Nominal: amount(s, extreme, extreme), Borrowable: amount(s, extreme, true)}
				if extreme {
					qt.ExpectedBorrowable = amount(s, true, true)
				} else if qt.Borrowable > 0 {
					qt.ExpectedBorrowable = int64(s.u64() % uint64(min(qt.Borrowable, 1<<40)+1))
				}
				fq.Quotas = append(fq.Quotas, qt)
			}
			if extreme && intn(s, 8) == 0 && len(fq.Quotas) > 0 {
				fq.Quotas = fq.Quotas[1:]
			}
			grp.Flavors = append(grp.Flavors, fq)
		}
		q.ResourceGroups = append(q.ResourceGroups, grp)
	}
	return q
}

// genWorkload draws 1-3 pod sets requesting resources of the pool (and an
// uncovered one now and then).
func genWorkload(s source, extreme bool) Workload {
	var w Workload
	for p := range 1 + intn(s, 3) {
		ps := PodSet{Name: fmt.Sprintf("ps%d", p), Count: int64(intn(s, 4)), Requests: map[string]int64{}}
		if extreme {
			ps.Count = amount(s, true, true)
		}
		for _, r := range resourcePool {
			if intn(s, 3) > 0 {
				ps.Requests[r] = amount(s, extreme, extreme) / 2
			}
		}
		if intn(s, 16) == 0 {
			ps.Requests["example.com/uncovered"] = 1
		}
		w.PodSets = append(w.PodSets, ps)
	}
	return w
}

// bumpCapacity returns a copy of q with one quota raised by delta in
// nominal, borrowable or expected borrowable (kept ≤ borrowable).
func bumpCapacity(s source, q *ClusterQueue, delta int64) *ClusterQueue {
	out := &ClusterQueue{Name: q.Name}
	for _, g := range q.ResourceGroups {
		ng := ResourceGroup{Resources: g.Resources}
		for _, f := range g.Flavors {
			ng.Flavors = append(ng.Flavors, FlavorQuotas{Name: f.Name, Quotas: append([]Quota(nil), f.Quotas...)})
		}
		out.ResourceGroups = append(out.ResourceGroups, ng)
	}
	g := &out.ResourceGroups[intn(s, len(out.ResourceGroups))]
	f := &g.Flavors[intn(s, len(g.Flavors))]
	qt := &f.Quotas[intn(s, len(f.Quotas))]
	switch intn(s, 3) {
	case 0:
		qt.Nominal = saturatingAdd(qt.Nominal, delta)
	case 1:
		qt.Borrowable = saturatingAdd(qt.Borrowable, delta)
	default:
		qt.Borrowable = saturatingAdd(qt.Borrowable, delta)
		qt.ExpectedBorrowable = saturatingAdd(qt.ExpectedBorrowable, delta)
	}
	return out
}

// bumpDemand returns a copy of w with one request or one count raised.
func bumpDemand(s source, w Workload) Workload {
	out := Workload{}
	for _, ps := range w.PodSets {
		req := map[string]int64{}
		for k, v := range ps.Requests {
			req[k] = v
		}
		out.PodSets = append(out.PodSets, PodSet{Name: ps.Name, Count: ps.Count, Requests: req})
	}
	ps := &out.PodSets[intn(s, len(out.PodSets))]
	if intn(s, 2) == 0 {
		ps.Count += 1 + int64(intn(s, 3))
	} else {
		r := resourcePool[intn(s, len(resourcePool))]
		ps.Requests[r] += 1 + int64(intn(s, 8))
	}
	return out
}

const propertyRuns = 3000

func TestPropertyClassifyAgreesWithBruteForce(t *testing.T) {
	s := randSource{rand.New(rand.NewPCG(1, 2))}
	counts := map[Admissibility]int{}
	for i := range propertyRuns {
		q, w := genClusterQueue(s, false), genWorkload(s, false)
		c := Classify(q, w)
		counts[c.Admissibility]++
		if c.Admissibility == Invalid {
			t.Fatalf("case %d: well-formed input classified Invalid: %v", i, c.Err)
		}
		if c.Unproven {
			t.Fatalf("case %d: search budget exhausted on a small input", i)
		}
		if bf := bruteForceQuotable(q, w); bf != (c.Admissibility == Quotable) {
			t.Fatalf("case %d: Classify = %v (%s), brute force Quotable = %v\ncq %+v\nw %+v", i, c.Admissibility, c.Reason, bf, q, w)
		}
		switch c.Admissibility {
		case Quotable:
			if ok, why := fitsAssignments(q, w, c); !ok || len(c.Failures) > 0 || c.Reason != "" {
				t.Fatalf("case %d: Quotable but %s, failures %v, reason %q", i, why, c.Failures, c.Reason)
			}
		case Unfeasible:
			if c.Reason == "" || len(c.Failures) == 0 || c.Assignments != nil {
				t.Fatalf("case %d: Unfeasible with reason %q, failures %v, assignments %v", i, c.Reason, c.Failures, c.Assignments)
			}
			for _, f := range c.Failures {
				if f.Kind == ExceedsPotential && !exceeds(f.Demand, f.Quota.Potential()) {
					t.Fatalf("case %d: failure %v does not exceed its potential", i, f)
				}
			}
		}
	}
	// The generator must exercise both verdicts substantially.
	if counts[Quotable] < propertyRuns/10 || counts[Unfeasible] < propertyRuns/10 {
		t.Errorf("unbalanced generator: %v", counts)
	}
}

func TestPropertyQuotableMonotoneInCapacity(t *testing.T) {
	s := randSource{rand.New(rand.NewPCG(3, 4))}
	for i := range propertyRuns {
		q, w := genClusterQueue(s, false), genWorkload(s, false)
		bigger := bumpCapacity(s, q, 1+int64(intn(s, 16)))
		before, after := Classify(q, w), Classify(bigger, w)
		if before.Admissibility == Quotable && after.Admissibility != Quotable {
			t.Fatalf("case %d: more capacity turned Quotable into %v (%s)", i, after.Admissibility, after.Reason)
		}
	}
}

func TestPropertyKEffMonotone(t *testing.T) {
	s := randSource{rand.New(rand.NewPCG(5, 6))}
	bases := []CapacityBasis{BasisNominal, BasisExpectedBorrowing, BasisPotential}
	for i := range propertyRuns {
		q, w := genClusterQueue(s, false), genWorkload(s, false)
		bigger := bumpCapacity(s, q, 1+int64(intn(s, 16)))
		heavier := bumpDemand(s, w)
		prev := -1
		for _, b := range bases {
			k, err := KEff(q, w, b)
			if err != nil {
				continue // zero demand
			}
			if k.Servers < 0 || k.Unbounded != (k.Servers == math.MaxInt) {
				t.Fatalf("case %d: bad result %+v", i, k)
			}
			if k.Servers < prev {
				t.Fatalf("case %d: basis %v gives %d < %d of a smaller basis", i, b, k.Servers, prev)
			}
			prev = k.Servers
			kc, err := KEff(bigger, w, b)
			if err != nil || kc.Servers < k.Servers {
				t.Fatalf("case %d %v: more capacity: %d -> %d (%v)", i, b, k.Servers, kc.Servers, err)
			}
			kd, err := KEff(q, heavier, b)
			if err != nil || kd.Servers > k.Servers {
				t.Fatalf("case %d %v: more demand: %d -> %d (%v)", i, b, k.Servers, kd.Servers, err)
			}
			m, err := KEffMix(bigger, []Class{{w, 1}, {heavier, 2}}, b)
			if err != nil {
				t.Fatalf("case %d: KEffMix: %v", i, err)
			}
			mc, err := KEffMix(bumpCapacity(s, bigger, 5), []Class{{w, 1}, {heavier, 2}}, b)
			if err != nil || mc.Servers < m.Servers {
				t.Fatalf("case %d %v: mix, more capacity: %d -> %d (%v)", i, b, m.Servers, mc.Servers, err)
			}
		}
	}
}

func TestPropertyKEffConsistency(t *testing.T) {
	s := randSource{rand.New(rand.NewPCG(7, 8))}
	for i := range propertyRuns {
		q, w := genClusterQueue(s, false), genWorkload(s, false)
		c := Classify(q, w)
		for _, b := range []CapacityBasis{BasisNominal, BasisExpectedBorrowing, BasisPotential} {
			k, err := KEff(q, w, b)
			if err != nil {
				if c.Admissibility != Quotable || len(c.Assignments) != 0 {
					t.Fatalf("case %d: KEff error %v but Classify %v with %v", i, err, c.Admissibility, c.Assignments)
				}
				continue
			}
			// Eq. 4 with one class (or identical classes) is Eq. 3.
			for _, classes := range [][]Class{{{w, 1}}, {{w, 0.5}, {w, 7}}} {
				m, err := KEffMix(q, classes, b)
				if err != nil || m.Servers != k.Servers || m.Unbounded != k.Unbounded || m.Flavor != k.Flavor || m.Resource != k.Resource || m.Group != k.Group {
					t.Fatalf("case %d %v: KEffMix %+v (%v) != KEff %+v", i, b, m, err, k)
				}
			}
			if b != BasisPotential {
				continue
			}
			// Fitting once on potential capacity is Quotable; for one pod set
			// the converse holds too.
			if k.Servers >= 1 && c.Admissibility != Quotable {
				t.Fatalf("case %d: k_eff on potential = %d but %v (%s)", i, k.Servers, c.Admissibility, c.Reason)
			}
			if len(w.PodSets) == 1 && k.Servers == 0 && c.Admissibility != Unfeasible {
				t.Fatalf("case %d: one pod set, k_eff on potential = 0 but %v", i, c.Admissibility)
			}
		}
	}
}
