package estimator

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMaxStalenessFor(t *testing.T) {
	cases := map[string]struct {
		period time.Duration
		want   time.Duration
	}{
		"production default period: the cap":      {period: time.Second, want: 10 * time.Second},
		"evaluation's scaled period: ten periods": {period: 100 * time.Millisecond, want: time.Second},
		"between 1s and the cap: the cap":         {period: 5 * time.Second, want: 10 * time.Second},
		"the cap itself":                          {period: 10 * time.Second, want: 10 * time.Second},
		"above the cap: one period":               {period: 30 * time.Second, want: 30 * time.Second},
		"one nanosecond: ten of them":             {period: time.Nanosecond, want: 10 * time.Nanosecond},
		"zero period":                             {period: 0, want: 0},
		"negative period":                         {period: -time.Second, want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, maxStalenessFor(tc.period)); diff != "" {
				t.Errorf("maxStalenessFor(%v) (-want,+got):\n%s", tc.period, diff)
			}
		})
	}
}

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
			if diff := cmp.Diff(tc.want, e.opts.maxStaleness); diff != "" {
				t.Errorf("max staleness (-want,+got):\n%s", diff)
			}
		})
	}
}
