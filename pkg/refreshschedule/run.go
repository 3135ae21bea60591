package refreshschedule

import (
	"context"
	"time"
)

// Clock is what Run reads the time from (the estimator's injected clock).
type Clock interface {
	Now() time.Time
}

// Run runs a refresh loop until ctx is done. It wakes on the ticks Next
// gives, every period or later as its Budget (of millicores, at least
// once per maxStaleness) allows, and at each calls refresh if due says a
// refresh is due at that time; what a refresh took is spent from the
// budget. The timers are the runtime's; every time read comes from clock.
func Run(ctx context.Context, clock Clock, period, maxStaleness time.Duration, millicores int, due func(now time.Time) bool, refresh func()) {
	now := clock.Now()
	budget := NewBudget(period, maxStaleness, millicores, now)
	timer := time.NewTimer(Next(now, period, period).Sub(now))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		delay := period
		now := clock.Now()
		if due(now) {
			refresh()
			end := clock.Now()
			delay = budget.Spend(end, end.Sub(now))
		}
		after := clock.Now()
		timer.Reset(Next(after, delay, period).Sub(after))
	}
}
