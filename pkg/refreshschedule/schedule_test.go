package refreshschedule

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// defaultMillicores is the estimator's default refresh CPU
// (engine.DefaultRefreshCPUMillicores).
const defaultMillicores = 10

func TestNext(t *testing.T) {
	at := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse("15:04:05.000", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := map[string]struct {
		now    string
		delay  time.Duration
		period time.Duration
		want   string
	}{
		"the next whole second":                    {now: "10:00:00.300", delay: time.Second, period: time.Second, want: "10:00:01.000"},
		"just before a tick":                       {now: "10:00:00.999", delay: time.Second, period: time.Second, want: "10:00:01.000"},
		"on a tick: the next one":                  {now: "10:00:01.000", delay: time.Second, period: time.Second, want: "10:00:02.000"},
		"a stretched delay stays on the ticks":     {now: "10:00:00.300", delay: 5 * time.Second, period: time.Second, want: "10:00:05.000"},
		"a 250ms period":                           {now: "10:00:00.300", delay: 250 * time.Millisecond, period: 250 * time.Millisecond, want: "10:00:00.500"},
		"two replicas a moment apart share a tick": {now: "10:00:00.450", delay: time.Second, period: time.Second, want: "10:00:01.000"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Next(at(tc.now), tc.delay, tc.period)
			if want := at(tc.want); !got.Equal(want) {
				t.Errorf("Next(%s, %v, %v) = %s, want %s", tc.now, tc.delay, tc.period, got.Format("15:04:05.000"), tc.want)
			}
			if !got.After(at(tc.now)) {
				t.Errorf("Next is not after now")
			}
		})
	}
}

func TestRefreshBudgetDelaysTheFirstRefreshByItsCost(t *testing.T) {
	cases := map[string]struct {
		millicores int
		last, want time.Duration
	}{
		"fast refresh keeps the period":              {200, 50 * time.Millisecond, time.Second},
		"exactly the budget keeps it":                {200, 200 * time.Millisecond, time.Second},
		"slow refresh stretches the wait":            {200, 1200 * time.Millisecond, 6 * time.Second},
		"the default budget stretches 50ms to 5s":    {defaultMillicores, 50 * time.Millisecond, 5 * time.Second},
		"the maximum staleness caps the stretch":     {defaultMillicores, 300 * time.Millisecond, 10 * time.Second},
		"a whole CPU stretches only what exceeds it": {1000, 1500 * time.Millisecond, 1500 * time.Millisecond},
		"no measurement":                             {200, 0, time.Second},
		"clock went backwards":                       {200, -time.Second, time.Second},
	}
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := NewBudget(time.Second, 10*time.Second, tc.millicores, start)
			if got := b.Spend(start.Add(max(tc.last, 0)), tc.last); got != tc.want {
				t.Errorf("first refresh of %v at %dm: delay %v, want %v", tc.last, tc.millicores, got, tc.want)
			}
		})
	}
}

// TestRefreshLoopStaysWithinItsCPUBudget runs the loop's schedule
// (Next after each Budget.Spend) for an hour of refreshes of a
// fixed cost: the time spent refreshing is at most the budget's share of
// the hour (plus the one period it may save) or one refresh per maximum
// staleness, whichever is more, at least nine tenths of
// what the budget or the ticks allow, every tick refreshes when a
// refresh costs no more than a period's share, and no two refreshes are
// further apart than the maximum staleness.
func TestRefreshLoopStaysWithinItsCPUBudget(t *testing.T) {
	const period, staleness, hour = time.Second, 10 * time.Second, time.Hour
	for _, millicores := range []int{defaultMillicores, 200} {
		for _, cost := range []time.Duration{time.Millisecond, 9 * time.Millisecond, 10 * time.Millisecond, 12 * time.Millisecond,
			19 * time.Millisecond, 50 * time.Millisecond, 150 * time.Millisecond, 900 * time.Millisecond, 3 * time.Second} {
			start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
			b := NewBudget(period, staleness, millicores, start)
			now := Next(start, period, period)
			var spent time.Duration
			refreshes, longest := 0, time.Duration(0)
			for last := now; now.Sub(start) < hour; {
				longest = max(longest, now.Sub(last))
				last = now
				end := now.Add(cost)
				spent += cost
				refreshes++
				now = Next(end, b.Spend(end, cost), period)
			}
			share := float64(millicores) / 1000
			// The budget's share, or one refresh per maximum staleness
			// (the ticks after end + staleness − period) when that is more.
			allowed := max(time.Duration(share*float64(hour))+time.Duration(share*float64(period))+cost,
				cost*(hour/(staleness-period)+1))
			if spent > allowed {
				t.Errorf("%dm, refreshes of %v: spent %v in an hour, more than the %v allowed", millicores, cost, spent, allowed)
			}
			usable := min(share, float64(cost)/float64(period)) * float64(hour)
			if cost < staleness/10 && float64(spent) < 0.9*usable {
				t.Errorf("%dm, refreshes of %v: spent %v in an hour, less than nine tenths of the %v usable", millicores, cost, spent, time.Duration(usable))
			}
			if cost <= time.Duration(share*float64(period)) && refreshes < int(hour/period)-1 {
				t.Errorf("%dm, refreshes of %v: %d refreshes in an hour, want one every tick", millicores, cost, refreshes)
			}
			if longest > staleness+cost {
				t.Errorf("%dm, refreshes of %v: %v between two refreshes, more than the maximum staleness %v", millicores, cost, longest, staleness)
			}
		}
	}
}

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
			if diff := cmp.Diff(tc.want, MaxStalenessFor(tc.period)); diff != "" {
				t.Errorf("MaxStalenessFor(%v) (-want,+got):\n%s", tc.period, diff)
			}
		})
	}
}
