package refreshschedule

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// stepClock reads a time that advances by a millisecond at each read.
type stepClock struct{ t time.Time }

func (c *stepClock) Now() time.Time {
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

// Run refreshes at the ticks where due says so, and returns once its
// context is done.
func TestRunRefreshesWhenDueUntilDone(t *testing.T) {
	cases := map[string]struct {
		// dueEvery: due says yes at every dueEvery-th tick.
		dueEvery int
		ticks    int
		want     int
	}{
		"every tick":       {dueEvery: 1, ticks: 4, want: 4},
		"every other tick": {dueEvery: 2, ticks: 4, want: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ticks, refreshes := 0, 0
			due := func(time.Time) bool {
				ticks++
				if ticks == tc.ticks {
					defer cancel()
				}
				return ticks%tc.dueEvery == 0
			}
			Run(ctx, &stepClock{t: time.Unix(1000, 0)}, 5*time.Millisecond, time.Second, 1000, due, func() { refreshes++ })
			if diff := cmp.Diff(tc.want, refreshes); diff != "" {
				t.Errorf("refreshes (-want +got):\n%s", diff)
			}
		})
	}
}
