package capacity

import (
	"errors"
	"math"
	"testing"
)

func TestKEff(t *testing.T) {
	cpuMem := res("cpu", "memory")
	cases := map[string]struct {
		cq      *ClusterQueue
		w       Workload
		basis   CapacityBasis
		want    KEffResult
		wantErr error
	}{
		"paper: 2 cpu, 500m/64Mi -> 4, cpu binds": {
			cq:   cq(group(cpuMem, flavor("default", nominal(cores(2)), nominal(4*gi)))),
			w:    one(map[string]int64{"cpu": 500, "memory": 64 * mi}),
			want: KEffResult{Servers: 4, Flavor: "default", Resource: "cpu", Capacity: cores(2), Demand: 500},
		},
		"paper: 4 cpu / 2Gi, 500m/512Mi -> 4, memory binds": {
			cq:   cq(group(cpuMem, flavor("default", nominal(cores(4)), nominal(2*gi)))),
			w:    one(map[string]int64{"cpu": 500, "memory": 512 * mi}),
			want: KEffResult{Servers: 4, Flavor: "default", Resource: "memory", Capacity: 2 * gi, Demand: float64(512 * mi)},
		},
		"paper: the CPU-only scalar estimate is 8": {
			cq:   cq(group(res("cpu"), flavor("default", nominal(cores(4))))),
			w:    one(map[string]int64{"cpu": 500}),
			want: KEffResult{Servers: 8, Flavor: "default", Resource: "cpu", Capacity: cores(4), Demand: 500},
		},
		"paper: 4 GPU / 8 cpu / 8Gi, 1 GPU/500m/256Mi -> 4, GPU binds": {
			cq:   cq(group(res("cpu", "memory", "nvidia.com/gpu"), flavor("default", nominal(cores(8)), nominal(8*gi), nominal(4)))),
			w:    one(map[string]int64{"nvidia.com/gpu": 1, "cpu": 500, "memory": 256 * mi}),
			want: KEffResult{Servers: 4, Flavor: "default", Resource: "nvidia.com/gpu", Capacity: 4, Demand: 1},
		},
		"GPU in its own group binds the same": {
			cq: cq(
				group(cpuMem, flavor("std", nominal(cores(8)), nominal(8*gi))),
				group(res("nvidia.com/gpu"), flavor("gpu", nominal(4))),
			),
			w:    one(map[string]int64{"nvidia.com/gpu": 1, "cpu": 500, "memory": 256 * mi}),
			want: KEffResult{Servers: 4, Group: 1, Flavor: "gpu", Resource: "nvidia.com/gpu", Capacity: 4, Demand: 1},
		},
		"paper: 20 cpu against 2 does not fit once": {
			cq:   cq(group(res("cpu"), flavor("default", nominal(cores(2))))),
			w:    one(map[string]int64{"cpu": cores(20)}),
			want: KEffResult{Servers: 0, Flavor: "default", Resource: "cpu", Capacity: cores(2), Demand: 20000},
		},
		"best flavor wins": {
			cq:   cq(group(res("cpu"), flavor("small", nominal(cores(2))), flavor("large", nominal(cores(8))))),
			w:    one(map[string]int64{"cpu": cores(1)}),
			want: KEffResult{Servers: 8, Flavor: "large", Resource: "cpu", Capacity: cores(8), Demand: 1000},
		},
		"tie keeps the first flavor": {
			cq:   cq(group(res("cpu"), flavor("a", nominal(cores(4))), flavor("b", nominal(4500)))),
			w:    one(map[string]int64{"cpu": cores(1)}),
			want: KEffResult{Servers: 4, Flavor: "a", Resource: "cpu", Capacity: cores(4), Demand: 1000},
		},
		"tie keeps the first resource": {
			cq:   cq(group(cpuMem, flavor("a", nominal(cores(4)), nominal(4*gi)))),
			w:    one(map[string]int64{"cpu": cores(1), "memory": gi}),
			want: KEffResult{Servers: 4, Flavor: "a", Resource: "cpu", Capacity: cores(4), Demand: 1000},
		},
		"smallest group binds": {
			cq: cq(
				group(res("cpu"), flavor("std", nominal(cores(8)))),
				group(res("nvidia.com/gpu"), flavor("t4", nominal(1)), flavor("a100", nominal(2))),
			),
			w:    one(map[string]int64{"cpu": 500, "nvidia.com/gpu": 1}),
			want: KEffResult{Servers: 2, Group: 1, Flavor: "a100", Resource: "nvidia.com/gpu", Capacity: 2, Demand: 1},
		},
		"untouched group does not bind": {
			cq: cq(
				group(res("cpu"), flavor("std", nominal(cores(8)))),
				group(res("nvidia.com/gpu"), flavor("t4", nominal(0))),
			),
			w:    one(map[string]int64{"cpu": cores(2)}),
			want: KEffResult{Servers: 4, Flavor: "std", Resource: "cpu", Capacity: cores(8), Demand: 2000},
		},
		"pod sets are summed": {
			cq:   cq(group(res("cpu"), flavor("default", nominal(cores(8))))),
			w:    workload(podSet("driver", 1, map[string]int64{"cpu": cores(1)}), podSet("workers", 2, map[string]int64{"cpu": 500})),
			want: KEffResult{Servers: 4, Flavor: "default", Resource: "cpu", Capacity: cores(8), Demand: 2000},
		},
		"pods resource binds": {
			cq:   cq(group(res("cpu", "pods"), flavor("default", nominal(cores(100)), nominal(10)))),
			w:    workload(podSet("p", 3, map[string]int64{"cpu": 100})),
			want: KEffResult{Servers: 3, Flavor: "default", Resource: "pods", Capacity: 10, Demand: 3},
		},
		"unlimited dimension does not bind": {
			cq:   cq(group(cpuMem, flavor("default", nominal(Unlimited), nominal(2*gi)))),
			w:    one(map[string]int64{"cpu": cores(64), "memory": 512 * mi}),
			want: KEffResult{Servers: 4, Flavor: "default", Resource: "memory", Capacity: 2 * gi, Demand: float64(512 * mi)},
		},
		"unbounded when nothing binds": {
			cq:   cq(group(cpuMem, flavor("default", nominal(Unlimited), nominal(2*gi)))),
			w:    one(map[string]int64{"cpu": cores(64)}),
			want: KEffResult{Servers: math.MaxInt, Unbounded: true, Flavor: "default"},
		},
		"unbounded flavor beats a bounded one": {
			cq:   cq(group(res("cpu"), flavor("a", nominal(cores(4))), flavor("b", nominal(Unlimited)))),
			w:    one(map[string]int64{"cpu": cores(1)}),
			want: KEffResult{Servers: math.MaxInt, Unbounded: true, Flavor: "b"},
		},
		"bounded group binds over an unbounded one": {
			cq: cq(
				group(res("cpu"), flavor("a", nominal(Unlimited))),
				group(res("memory"), flavor("m", nominal(gi))),
			),
			w:    one(map[string]int64{"cpu": cores(1), "memory": 256 * mi}),
			want: KEffResult{Servers: 4, Group: 1, Flavor: "m", Resource: "memory", Capacity: gi, Demand: float64(256 * mi)},
		},
		"uncovered resource gives 0": {
			cq:   cq(group(res("cpu"), flavor("default", nominal(cores(8))))),
			w:    one(map[string]int64{"cpu": cores(1), "example.com/foo": 2}),
			want: KEffResult{Servers: 0, Group: -1, Resource: "example.com/foo", Demand: 2},
		},
		"overflowing demand gives 0": {
			cq:   cq(group(res("cpu"), flavor("default", nominal(cores(8))))),
			w:    workload(podSet("huge", 1<<40, map[string]int64{"cpu": 1 << 40})),
			want: KEffResult{Servers: 0, Flavor: "default", Resource: "cpu", Capacity: cores(8), Demand: float64(Unlimited)},
		},
		"zero demand": {
			cq:      cq(group(res("cpu"), flavor("default", nominal(cores(8))))),
			w:       one(map[string]int64{"cpu": 0}),
			want:    KEffResult{Group: -1},
			wantErr: ErrZeroDemand,
		},
		"no pod sets": {
			cq:      cq(group(res("cpu"), flavor("default", nominal(cores(8))))),
			w:       Workload{},
			want:    KEffResult{Group: -1},
			wantErr: ErrZeroDemand,
		},
		"borrowing basis: expected": {
			cq:    cq(group(res("cpu"), flavor("default", Quota{Nominal: cores(2), Borrowable: cores(6), ExpectedBorrowable: cores(2)}))),
			w:     one(map[string]int64{"cpu": cores(1)}),
			basis: BasisExpectedBorrowing,
			want:  KEffResult{Servers: 4, Flavor: "default", Resource: "cpu", Capacity: cores(4), Demand: 1000},
		},
		"borrowing basis: potential": {
			cq:    cq(group(res("cpu"), flavor("default", Quota{Nominal: cores(2), Borrowable: cores(6), ExpectedBorrowable: cores(2)}))),
			w:     one(map[string]int64{"cpu": cores(1)}),
			basis: BasisPotential,
			want:  KEffResult{Servers: 8, Flavor: "default", Resource: "cpu", Capacity: cores(8), Demand: 1000},
		},
		"borrowing basis: unlimited potential": {
			cq:    cq(group(res("cpu"), flavor("default", Quota{Nominal: cores(2), Borrowable: Unlimited}))),
			w:     one(map[string]int64{"cpu": cores(1)}),
			basis: BasisPotential,
			want:  KEffResult{Servers: math.MaxInt, Unbounded: true, Flavor: "default"},
		},
		"invalid capacity": {
			cq:      cq(group(res("cpu"), flavor("default", nominal(-3)))),
			w:       one(map[string]int64{"cpu": 1}),
			want:    KEffResult{Group: -1},
			wantErr: ErrInvalidCapacity,
		},
		"invalid workload": {
			cq:      cq(group(res("cpu"), flavor("default", nominal(3)))),
			w:       workload(podSet("p", -1, nil)),
			want:    KEffResult{Group: -1},
			wantErr: ErrInvalidWorkload,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := KEff(tc.cq, tc.w, tc.basis)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("KEff = %+v\nwant   %+v", got, tc.want)
			}
		})
	}
}

func TestKEffUnknownBasis(t *testing.T) {
	q := cq(group(res("cpu"), flavor("default", nominal(3))))
	if _, err := KEff(q, one(map[string]int64{"cpu": 1}), CapacityBasis(7)); err == nil {
		t.Errorf("KEff with an unknown basis: no error")
	}
	if _, err := KEffMix(q, []Class{{Workload: one(map[string]int64{"cpu": 1}), Rate: 1}}, -1); err == nil {
		t.Errorf("KEffMix with an unknown basis: no error")
	}
	for b, want := range map[CapacityBasis]string{BasisNominal: "nominal", BasisExpectedBorrowing: "nominal+expected-borrowing", BasisPotential: "potential", 7: "CapacityBasis(7)"} {
		if got := b.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}

func TestKEffMix(t *testing.T) {
	cpuMem := res("cpu", "memory")
	cpuMemCQ := cq(group(cpuMem, flavor("default", Quota{Nominal: cores(8), Borrowable: cores(8), ExpectedBorrowable: cores(4)}, nominal(4*gi))))
	small := one(map[string]int64{"cpu": cores(1), "memory": gi})
	large := one(map[string]int64{"cpu": cores(2), "memory": 512 * mi})
	cases := map[string]struct {
		cq      *ClusterQueue
		classes []Class
		basis   CapacityBasis
		want    KEffResult
		wantErr error
	}{
		// φ = (1/4, 3/4): d̄ = (1750m, 640Mi); cpu 8000/1750 = 4.57, memory 4096/640 = 6.4.
		"weighted mean demand, cpu binds": {
			cq:      cpuMemCQ,
			classes: []Class{{small, 1}, {large, 3}},
			want:    KEffResult{Servers: 4, Flavor: "default", Resource: "cpu", Capacity: cores(8), Demand: 1750},
		},
		// φ = (3/4, 1/4): d̄ = (1250m, 896Mi); cpu 6.4, memory 4.57.
		"other weights, memory binds": {
			cq:      cpuMemCQ,
			classes: []Class{{small, 0.3}, {large, 0.1}},
			want:    KEffResult{Servers: 4, Flavor: "default", Resource: "memory", Capacity: 4 * gi, Demand: float64(896 * mi)},
		},
		// k_eff⁺: cpu (8000+4000)/1750 = 6.86, memory 6.4: a tie at 6, cpu first.
		"k_eff+ with expected borrowing": {
			cq:      cpuMemCQ,
			classes: []Class{{small, 1}, {large, 3}},
			basis:   BasisExpectedBorrowing,
			want:    KEffResult{Servers: 6, Flavor: "default", Resource: "cpu", Capacity: cores(12), Demand: 1750},
		},
		// Potential: cpu 16000/1750 = 9.14, memory 6.4.
		"potential basis": {
			cq:      cpuMemCQ,
			classes: []Class{{small, 1}, {large, 3}},
			basis:   BasisPotential,
			want:    KEffResult{Servers: 6, Flavor: "default", Resource: "memory", Capacity: 4 * gi, Demand: 640 * float64(mi)},
		},
		// d̄ = (3+3+1)/3 = 7/3 and 35/(7/3) = 15 exactly, but float64 gives
		// 14.999999999999998: the rounding error must not floor it to 14.
		"thirds do not floor exact ratios down": {
			cq: cq(group(res("nvidia.com/gpu"), flavor("default", nominal(35)))),
			classes: []Class{
				{one(map[string]int64{"nvidia.com/gpu": 3}), 1},
				{one(map[string]int64{"nvidia.com/gpu": 3}), 1},
				{one(map[string]int64{"nvidia.com/gpu": 1}), 1},
			},
			want: KEffResult{Servers: 15, Flavor: "default", Resource: "nvidia.com/gpu", Capacity: 35, Demand: 7.0 / 3},
		},
		"zero-rate class carries no weight": {
			cq:      cpuMemCQ,
			classes: []Class{{small, 0}, {large, 2}, {one(map[string]int64{"example.com/foo": 1}), 0}},
			want:    KEffResult{Servers: 4, Flavor: "default", Resource: "cpu", Capacity: cores(8), Demand: 2000},
		},
		// φ = (4/7, 3/7): d̄ = (10000/7 m, 5632/7 Mi); cpu 5.6, memory 5.09.
		"huge rates do not overflow": {
			cq:      cpuMemCQ,
			classes: []Class{{small, math.MaxFloat64}, {large, 3 * (math.MaxFloat64 / 4)}},
			want:    KEffResult{Servers: 5, Flavor: "default", Resource: "cpu", Capacity: cores(8), Demand: 10000.0 / 7},
		},
		"weighted class with an uncovered resource gives 0": {
			cq:      cpuMemCQ,
			classes: []Class{{small, 1}, {one(map[string]int64{"example.com/foo": 4}), 1}},
			want:    KEffResult{Group: -1, Resource: "example.com/foo", Demand: 2},
		},
		"zero mean demand": {cq: cpuMemCQ, classes: []Class{{Workload{}, 1}}, want: KEffResult{Group: -1}, wantErr: ErrZeroDemand},
		"no class":         {cq: cpuMemCQ, want: KEffResult{Group: -1}, wantErr: ErrInvalidMix},
		"all rates zero":   {cq: cpuMemCQ, classes: []Class{{small, 0}}, want: KEffResult{Group: -1}, wantErr: ErrInvalidMix},
		"negative rate":    {cq: cpuMemCQ, classes: []Class{{small, -1}}, want: KEffResult{Group: -1}, wantErr: ErrInvalidMix},
		"NaN rate":         {cq: cpuMemCQ, classes: []Class{{small, math.NaN()}}, want: KEffResult{Group: -1}, wantErr: ErrInvalidMix},
		"infinite rate":    {cq: cpuMemCQ, classes: []Class{{small, math.Inf(1)}}, want: KEffResult{Group: -1}, wantErr: ErrInvalidMix},
		"invalid workload": {cq: cpuMemCQ, classes: []Class{{one(map[string]int64{"cpu": -1}), 1}}, want: KEffResult{Group: -1}, wantErr: ErrInvalidWorkload},
		"invalid capacity": {cq: nil, classes: []Class{{small, 1}}, want: KEffResult{Group: -1}, wantErr: ErrInvalidCapacity},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := KEffMix(tc.cq, tc.classes, tc.basis)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if !approxEqual(got.Demand, tc.want.Demand, 1e-9) {
				t.Errorf("Demand = %v, want %v", got.Demand, tc.want.Demand)
			}
			got.Demand, tc.want.Demand = 0, 0
			if got != tc.want {
				t.Errorf("KEffMix = %+v\nwant      %+v", got, tc.want)
			}
		})
	}
}

// approxEqual reports |a-b| ≤ rel·max(1, |a|, |b|).
func approxEqual(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}
