package cohortview

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/forecast"
)

// A HolderSet is full at maxHolders holders once their usage covers the
// lent quota, and takes more until it does.
func TestHolderSetIsFullOnceItsHoldersCoverTheLentQuota(t *testing.T) {
	cpu := capacity.FlavorResource{Flavor: "default", Resource: "cpu"}
	mem := capacity.FlavorResource{Flavor: "default", Resource: "memory"}
	cases := map[string]struct {
		lent  capacity.Quantities
		usage capacity.Quantities
		want  int
	}{
		"the bound covers it":       {lent: capacity.Quantities{cpu: 1000}, usage: capacity.Quantities{cpu: 500}, want: maxHolders},
		"beyond the bound":          {lent: capacity.Quantities{cpu: 2000}, usage: capacity.Quantities{cpu: 25}, want: 80},
		"another resource not held": {lent: capacity.Quantities{cpu: 1000}, usage: capacity.Quantities{cpu: 500, mem: 10}, want: maxHolders},
		"nothing lent":              {usage: capacity.Quantities{cpu: 1}, want: maxHolders},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := NewHolderSet[string](tc.lent)
			for i := 0; i < 1000 && !s.Full(); i++ {
				s.Add(forecast.Running{Usage: tc.usage}, Source[string]{ClusterQueue: "borrower"})
			}
			if diff := cmp.Diff(tc.want, len(s.Holders)); diff != "" {
				t.Errorf("holders (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(len(s.Holders), len(s.Sources)); diff != "" {
				t.Errorf("sources (-holders +sources):\n%s", diff)
			}
			if _, changed := tc.lent[cpu]; changed && tc.lent[cpu] <= 0 {
				t.Errorf("the lent quota passed in was changed: %v", tc.lent)
			}
		})
	}
}
