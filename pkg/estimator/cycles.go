package estimator

// cycleWindowSize is how many of the scheduler's last busy cycles the rolls
// draw their admission gaps from (forecast.Queue.CyclePeriodSample): at one
// cycle a second the last minute, at twenty the last three seconds. The
// busy times of one scheduler are far from equal — a cycle that writes the
// status of heads it could not admit takes up to seconds on a loaded API
// server, one that writes none milliseconds — so a smoothed value read at a
// refresh (an average of the last ten, say) is often far from the mean of
// the cycles a workload will wait through, and more often short than long;
// a window of 64 holds the long cycles in about their proportion.
const cycleWindowSize = 64

// cycleWindow holds the busy times, in seconds, of the scheduler's last
// cycleWindowSize cycles. The scheduler's goroutine adds to it (observe,
// O(1), no allocation); a refresh reads it through sample, which copies
// it at most once per change, so that the rolls of every ClusterQueue in
// a refresh share one read-only slice. Guarded by the estimator's mu.
type cycleWindow struct {
	busy [cycleWindowSize]float64
	// n is how many values busy holds, next where the next one goes.
	n, next int
	// published is the copy sample last returned, nil when busy changed
	// since; it is never written after it was returned.
	published []float64
	mean      float64
}

// observe adds one cycle's busy time in seconds (finite and ≥ 0, which
// the caller checks), replacing the oldest when the window is full.
func (w *cycleWindow) observe(seconds float64) {
	w.busy[w.next] = seconds
	w.next = (w.next + 1) % cycleWindowSize
	w.n = min(w.n+1, cycleWindowSize)
	w.published = nil
}

// sample returns the mean of the window and its values (in no particular
// order; the caller must not write them), or 0 and nil while it is empty.
func (w *cycleWindow) sample() (mean float64, values []float64) {
	if w.n == 0 {
		return 0, nil
	}
	if w.published == nil {
		w.published = append(make([]float64, 0, w.n), w.busy[:w.n]...)
		sum := 0.0
		for _, v := range w.published {
			sum += v
		}
		w.mean = sum / float64(w.n)
	}
	return w.mean, w.published
}
