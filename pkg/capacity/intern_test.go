package capacity

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInternerSharesOneCopyPerDistinctQuantities(t *testing.T) {
	cpu := FlavorResource{Flavor: "default", Resource: "cpu"}
	mem := FlavorResource{Flavor: "default", Resource: "memory"}
	cases := map[string]struct {
		first, second Quantities
		reset         bool
		wantShared    bool
	}{
		"equal":               {first: Quantities{cpu: 1, mem: 2}, second: Quantities{mem: 2, cpu: 1}, wantShared: true},
		"another amount":      {first: Quantities{cpu: 1}, second: Quantities{cpu: 2}},
		"another dimension":   {first: Quantities{cpu: 1}, second: Quantities{mem: 1}},
		"equal after a reset": {first: Quantities{cpu: 1}, second: Quantities{cpu: 1}, reset: true},
		"both empty":          {first: Quantities{}, second: Quantities{}, wantShared: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := NewInterner()
			a := u.Intern(tc.first)
			if tc.reset {
				u.Reset()
			}
			b := u.Intern(tc.second)
			if diff := cmp.Diff(tc.first, a); diff != "" {
				t.Errorf("first (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.second, b); diff != "" {
				t.Errorf("second (-want +got):\n%s", diff)
			}
			shared := reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
			if diff := cmp.Diff(tc.wantShared, shared); diff != "" {
				t.Errorf("one map shared (-want +got):\n%s", diff)
			}
			if reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(tc.first).UnsafePointer() {
				t.Errorf("the map passed in is kept")
			}
		})
	}
}
