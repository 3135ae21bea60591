package refreshschedule

import "time"

// Next is when to look again, at least about delay after now: the
// first multiple of period (counted from the zero time, so whole seconds
// for a 1s period) at or after now + delay − period, and after now. Every
// replica of the manager thus refreshes on the same wall-clock ticks, from
// the same informer state, and serves the same estimates; one that
// refreshed at its own phase would answer up to a period apart, with
// another "now" in its forecast.
func Next(now time.Time, delay, period time.Duration) time.Time {
	if period <= 0 {
		return now.Add(delay)
	}
	next := now.Add(delay).Truncate(period)
	if !next.After(now) {
		next = next.Add(period)
	}
	return next
}

// Budget keeps the refresh loop within its CPU budget, millicores
// of one core, on average. It holds a balance of refresh time: every
// second of wall time adds millicores/1000 s to it, up to one period's
// worth (so the loop cannot save up for a burst), and every refresh takes
// its duration from it. The next refresh waits for the first tick at
// which the balance is no longer negative, though never longer than the
// maximum staleness, which wins over the budget (the balance is then not
// let fall further than that wait repays).
//
// At the default 10 millicores and a 1s period: a refresh of ≤ 10 ms runs
// at every tick; one of 12 ms skips about one tick in six; one of 50 ms
// runs every 5 s; one of ≥ 100 ms every 10 s, the maximum staleness. A
// duration ≤ 0 (a clock that went backwards) costs nothing.
type Budget struct {
	period, maxStaleness time.Duration
	// perSecond is the refresh time one second of wall time earns.
	perSecond float64
	balance   time.Duration
	at        time.Time // when balance was last brought up to date
}

// NewBudget returns the budget of a loop that refreshes every period, at
// least every maxStaleness, on millicores of one core, starting at now
// with one period's worth.
func NewBudget(period, maxStaleness time.Duration, millicores int, now time.Time) *Budget {
	b := &Budget{period: period, maxStaleness: maxStaleness, perSecond: float64(millicores) / 1000, at: now}
	b.balance = b.earned(period)
	return b
}

// earned is the refresh time d of wall time earns.
func (b *Budget) earned(d time.Duration) time.Duration {
	return time.Duration(float64(d) * b.perSecond)
}

// Spend records a refresh that took d and ended at end, and returns the
// delay for Next: the period, plus the wall time that earns back a
// negative balance, capped at the maximum staleness.
func (b *Budget) Spend(end time.Time, d time.Duration) time.Duration {
	if elapsed := end.Sub(b.at); elapsed > 0 {
		b.balance = min(b.balance+b.earned(elapsed), b.earned(b.period))
		b.at = end
	}
	if b.perSecond <= 0 {
		return b.period
	}
	b.balance -= max(d, 0)
	if b.balance >= 0 {
		return b.period
	}
	owed := time.Duration(float64(-b.balance) / b.perSecond)
	if wait := b.period + owed; wait < b.maxStaleness {
		return wait
	}
	// The staleness wins: the debt is capped at what the longest wait
	// repays.
	b.balance = max(b.balance, -b.earned(b.maxStaleness-b.period))
	return max(b.period, b.maxStaleness)
}

// stalenessCap is the longest maximum staleness the rule of
// [MaxStalenessFor] derives from a refresh period shorter than it.
const stalenessCap = 10 * time.Second

// MaxStalenessFor is the maximum staleness of an estimator whose options
// leave it unset, derived from its refresh period p:
//
//	max(p, min(10s, 10·p))
//
// Ten refresh periods, so that a scaled-down period (the evaluation's
// 100ms, for the production default of 1s) republishes ten times as often
// as production does; at most 10s, so that the ages users read never lag
// more than that while the period is short; never less than one period,
// which the refresh loop cannot beat. 1s gives 10s, 100ms gives 1s, 30s
// gives 30s. A period ≤ 0 gives 0 (and the estimator refuses the period).
func MaxStalenessFor(p time.Duration) time.Duration {
	if p <= 0 {
		return 0
	}
	tenPeriods := stalenessCap
	if p < stalenessCap/10 {
		tenPeriods = 10 * p
	}
	return max(p, tenPeriods)
}
