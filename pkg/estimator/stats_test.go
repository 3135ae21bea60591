package estimator

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStatsInvariantPanicsOnlyOnAnError(t *testing.T) {
	cases := map[string]struct {
		err       error
		wantPanic bool
	}{
		"no error": {},
		"an error": {err: errors.New("broken"), wantPanic: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got any
			func() {
				defer func() { got = recover() }()
				statsInvariant(tc.err)
			}()
			if diff := cmp.Diff(tc.wantPanic, got != nil); diff != "" {
				t.Errorf("panic %v (-want +got):\n%s", got, diff)
			}
		})
	}
}
