package estimator

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// New derives the maximum staleness from the refresh period unless an
// option sets it, and an explicit one wins.
func TestNewDerivesMaxStalenessFromTheRefreshPeriod(t *testing.T) {
	env := newTestEnv(t, envObjects{})
	cases := map[string]struct {
		opts []Option
		want time.Duration
	}{
		"no options":    {want: 10 * time.Second},
		"scaled period": {opts: []Option{WithRefreshPeriod(100 * time.Millisecond)}, want: time.Second},
		"long period":   {opts: []Option{WithRefreshPeriod(time.Minute)}, want: time.Minute},
		"explicit":      {opts: []Option{WithRefreshPeriod(100 * time.Millisecond), WithMaxStaleness(3 * time.Second)}, want: 3 * time.Second},
		"explicit zero": {opts: []Option{WithMaxStaleness(0)}, want: 10 * time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e, err := New(env.cache, env.queues, tc.opts...)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if diff := cmp.Diff(tc.want, e.opts.MaxStaleness); diff != "" {
				t.Errorf("max staleness (-want,+got):\n%s", diff)
			}
		})
	}
}
