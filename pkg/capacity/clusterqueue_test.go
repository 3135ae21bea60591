package capacity

import (
	"errors"
	"maps"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	cases := map[string]struct {
		cq   *ClusterQueue
		want []string // substrings, one per expected error; nil = valid
	}{
		"valid": {
			cq: cq(
				group(res("cpu", "memory"), flavor("a", nominal(1), Quota{Nominal: 2, Borrowable: Unlimited, ExpectedBorrowable: 5})),
				group(res("nvidia.com/gpu"), flavor("b", nominal(0))),
			),
		},
		"zero value": {cq: &ClusterQueue{}},
		"nil":        {cq: nil, want: []string{"nil ClusterQueue"}},
		"negative nominal": {
			cq:   cq(group(res("cpu"), flavor("default", nominal(-1)))),
			want: []string{"invalid ClusterQueue capacity: flavor default resource cpu: negative nominal quota -1"},
		},
		"negative borrowable": {
			cq:   cq(group(res("cpu"), flavor("default", Quota{Nominal: 1, Borrowable: -2}))),
			want: []string{"flavor default resource cpu: negative borrowable amount -2"},
		},
		"negative expected borrowable": {
			cq:   cq(group(res("cpu"), flavor("default", Quota{ExpectedBorrowable: -2}))),
			want: []string{"flavor default resource cpu: negative expected borrowable amount -2"},
		},
		"expected borrowable above borrowable": {
			cq:   cq(group(res("memory"), flavor("default", Quota{Borrowable: gi, ExpectedBorrowable: 2 * gi}))),
			want: []string{"flavor default resource memory: expected borrowable amount 2Gi exceeds borrowable amount 1Gi"},
		},
		"resource in two groups": {
			cq:   cq(group(res("cpu"), flavor("a", nominal(1))), group(res("cpu"), flavor("b", nominal(1)))),
			want: []string{"resource cpu is listed more than once (again in resource group 1)"},
		},
		"flavor in two groups": {
			cq:   cq(group(res("cpu"), flavor("a", nominal(1))), group(res("memory"), flavor("a", nominal(1)))),
			want: []string{"flavor a is listed more than once (again in resource group 1)"},
		},
		"flavor twice in a group": {
			cq:   cq(group(res("cpu"), flavor("a", nominal(1)), flavor("a", nominal(1)))),
			want: []string{"flavor a is listed more than once (again in resource group 0)"},
		},
		"quota count mismatch": {
			cq:   cq(group(res("cpu", "memory"), flavor("a", nominal(1)))),
			want: []string{"resource group 0: flavor a has 1 quotas for 2 covered resources"},
		},
		"empty group and names": {
			cq: cq(ResourceGroup{}, group(res(""), flavor("", nominal(1)))),
			want: []string{
				"resource group 0 covers no resource",
				"resource group 0 has no flavor",
				"resource group 1: resource 0 has an empty name",
				"resource group 1: flavor 0 has an empty name",
			},
		},
		"several problems reported together": {
			cq:   cq(group(res("cpu", "memory"), flavor("a", nominal(-1), Quota{Borrowable: -1}))),
			want: []string{"negative nominal quota -1", "resource memory: negative borrowable amount -1"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := tc.cq.Validate()
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				if !tc.cq.valid() {
					t.Errorf("valid() = false for a valid ClusterQueue")
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want %q", tc.want)
			}
			if !errors.Is(err, ErrInvalidCapacity) {
				t.Errorf("error %v does not wrap ErrInvalidCapacity", err)
			}
			if tc.cq.valid() {
				t.Errorf("valid() = true for an invalid ClusterQueue")
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("got %d errors %q, want %d", len(lines), lines, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(lines[i], w) {
					t.Errorf("error %d = %q, want it to contain %q", i, lines[i], w)
				}
			}
		})
	}
}

func TestQuotaAndPotential(t *testing.T) {
	q := cq(
		group(res("cpu", "memory"),
			flavor("a", Quota{Nominal: cores(2), Borrowable: cores(3)}, Quota{Nominal: gi, Borrowable: Unlimited})),
		group(res("nvidia.com/gpu"), flavor("b", Quota{Nominal: Unlimited - 1, Borrowable: 5})),
	)
	cases := map[string]struct {
		fr        FlavorResource
		potential int64
		covered   bool
	}{
		"finite sum":              {FlavorResource{"a", "cpu"}, cores(5), true},
		"unlimited borrowing":     {FlavorResource{"a", "memory"}, Unlimited, true},
		"saturating sum":          {FlavorResource{"b", "nvidia.com/gpu"}, Unlimited, true},
		"flavor of another group": {FlavorResource{"b", "cpu"}, 0, false},
		"unknown resource":        {FlavorResource{"a", "example.com/foo"}, 0, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := q.Potential(tc.fr); got != tc.potential {
				t.Errorf("Potential(%v) = %d, want %d", tc.fr, got, tc.potential)
			}
			if _, ok := q.Quota(tc.fr); ok != tc.covered {
				t.Errorf("Quota(%v) covered = %v, want %v", tc.fr, ok, tc.covered)
			}
		})
	}
	var nilCQ *ClusterQueue
	if nilCQ.Potential(FlavorResource{"a", "cpu"}) != 0 || nilCQ.Covers("cpu") {
		t.Errorf("nil ClusterQueue covers something")
	}
	if !q.Covers("nvidia.com/gpu") || q.Covers("pods") {
		t.Errorf("Covers wrong")
	}
}

func TestWorkloadTotalDemandAndValidate(t *testing.T) {
	withPods := cq(group(res("cpu", "pods"), flavor("a", nominal(1), nominal(1))))
	noPods := cq(group(res("cpu"), flavor("a", nominal(1))))
	w := workload(
		podSet("driver", 1, map[string]int64{"cpu": 500, "memory": gi, "pods": 9, "example.com/foo": 0}),
		podSet("workers", 3, map[string]int64{"cpu": cores(2)}),
		podSet("idle", 0, map[string]int64{"cpu": cores(100)}),
		podSet("huge", 1<<40, map[string]int64{"example.com/bar": 1 << 40}),
	)
	want := map[string]int64{"cpu": 6500, "memory": gi, "pods": 1 + 3 + 1<<40, "example.com/bar": Unlimited}
	if got := w.TotalDemand(withPods); !maps.Equal(got, want) {
		t.Errorf("TotalDemand(with pods) = %v, want %v", got, want)
	}
	delete(want, "pods")
	if got := w.TotalDemand(noPods); !maps.Equal(got, want) {
		t.Errorf("TotalDemand(without pods) = %v, want %v", got, want)
	}
	if err := w.Validate(); err != nil {
		t.Errorf("Validate() = %v", err)
	}
	bad := workload(podSet("p", -2, map[string]int64{"cpu": -1, "memory": -3}))
	err := bad.Validate()
	if !errors.Is(err, ErrInvalidWorkload) {
		t.Fatalf("Validate() = %v, want ErrInvalidWorkload", err)
	}
	const msg = "invalid workload: pod set p has negative count -2\ninvalid workload: pod set p requests negative cpu -1\ninvalid workload: pod set p requests negative memory -3"
	if err.Error() != msg {
		t.Errorf("Validate() = %q, want %q", err.Error(), msg)
	}
}

func TestFormatQuantity(t *testing.T) {
	cases := map[string]struct {
		resource string
		v        int64
		want     string
	}{
		"cpu cores":    {"cpu", 20000, "20"},
		"cpu milli":    {"cpu", 500, "500m"},
		"cpu zero":     {"cpu", 0, "0"},
		"memory Mi":    {"memory", 512 * mi, "512Mi"},
		"memory Ti":    {"memory", 3 << 40, "3Ti"},
		"memory bytes": {"memory", 1000, "1000"},
		"memory zero":  {"memory", 0, "0"},
		"storage Ki":   {"ephemeral-storage", 3 << 10, "3Ki"},
		"plain":        {"nvidia.com/gpu", 3, "3"},
		"negative":     {"cpu", -1500, "-1500m"},
		"unlimited":    {"cpu", Unlimited, "unlimited"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := FormatQuantity(tc.resource, tc.v); got != tc.want {
				t.Errorf("FormatQuantity = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSaturatingMul(t *testing.T) {
	cases := map[string]struct{ a, b, want int64 }{
		"zero":      {0, Unlimited, 0},
		"small":     {3, 7, 21},
		"edge":      {1 << 31, 1 << 31, 1 << 62},
		"overflow":  {1 << 32, 1 << 31, Unlimited},
		"unlimited": {2, Unlimited, Unlimited},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := saturatingMul(tc.a, tc.b); got != tc.want {
				t.Errorf("saturatingMul(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
			}
		})
	}
}
