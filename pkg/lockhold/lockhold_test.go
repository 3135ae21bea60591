package lockhold

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// steppedClock advances by step at every reading of Now.
type steppedClock struct {
	now  time.Time
	step time.Duration
}

func (c *steppedClock) Now() time.Time {
	c.now = c.now.Add(c.step)
	return c.now
}

func (c *steppedClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

func TestTimerKeepsTheLongestHold(t *testing.T) {
	cases := map[string]struct {
		steps []time.Duration
		reset bool
		want  time.Duration
	}{
		"no hold":                {},
		"one hold":               {steps: []time.Duration{time.Millisecond}, want: time.Millisecond},
		"the longest of several": {steps: []time.Duration{time.Millisecond, 3 * time.Millisecond, 2 * time.Millisecond}, want: 3 * time.Millisecond},
		"none after a reset":     {steps: []time.Duration{time.Millisecond}, reset: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			clk := &steppedClock{now: time.Unix(0, 0)}
			timer := New(&mu, clk)
			for _, step := range tc.steps {
				clk.step = step
				timer.Lock().Unlock()
			}
			if tc.reset {
				timer.Reset()
			}
			if diff := cmp.Diff(tc.want, timer.Longest()); diff != "" {
				t.Errorf("Longest (-want,+got):\n%s", diff)
			}
			if !mu.TryLock() {
				t.Fatal("the mutex is still held")
			}
		})
	}
}
