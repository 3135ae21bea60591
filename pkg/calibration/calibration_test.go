package calibration

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var t0 = time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)

func TestNewRejectsInvalidOptions(t *testing.T) {
	tests := map[string]struct {
		p    float64
		opts Options
	}{
		"level 0":               {p: 0},
		"level 1":               {p: 1},
		"level NaN":             {p: math.NaN()},
		"step 1":                {p: 0.9, opts: Options{Step: 1}},
		"negative step":         {p: 0.9, opts: Options{Step: -0.1}},
		"negative window":       {p: 0.9, opts: Options{Window: -1}},
		"more scores than kept": {p: 0.9, opts: Options{Window: 10, MinScores: 11}},
		"negative half-life":    {p: 0.9, opts: Options{HalfLife: -time.Second}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := New(tc.p, tc.opts); !errors.Is(err, ErrInvalidOptions) {
				t.Errorf("err = %v, want ErrInvalidOptions", err)
			}
		})
	}
}

func TestAdjust(t *testing.T) {
	tests := map[string]struct {
		raw, q, eps float64
		want        float64
	}{
		"no adjustment":         {raw: 4, q: 0, eps: 0.5, want: 4},
		"doubles":               {raw: 4, q: math.Log(2), eps: 1, want: 9},   // (4+1)·2 − 1
		"halves to zero":        {raw: 0.2, q: -5, eps: 1, want: 0},          // (1.2)·e⁻⁵ − 1 < 0
		"zero raw grows":        {raw: 0, q: math.Log(3), eps: 0.5, want: 1}, // 0.5·3 − 0.5
		"overflow stays finite": {raw: 1e300, q: 1e3, eps: 1, want: math.MaxFloat64},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Adjust(tc.raw, tc.q, tc.eps), cmpopts.EquateApprox(1e-12, 0)); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
}

func TestInactiveUntilEnoughScores(t *testing.T) {
	c, err := New(0.9, Options{MinScores: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		c.Observe(t0, 1, 1, 5, 0.1) // misses, but too few to act on
		if q, ok := c.Adjustment(); ok || q != 0 || math.Abs(c.Miscoverage()-0.1) > 1e-12 {
			t.Fatalf("after %d scores: q %v ok %v α %v; want 0, false, 0.1", i+1, q, ok, c.Miscoverage())
		}
	}
	if c.Observe(t0, math.NaN(), 1, 1, 0.1) || c.Observe(t0, 1, 1, -1, 0.1) || c.Observe(t0, 1, 1, 1, 0) {
		t.Error("an invalid outcome was accepted")
	}
	c.Observe(t0, 1, 1, 5, 0.1)
	// Three equal scores ln(5.1/1.1): every quantile is that score.
	q, ok := c.Adjustment()
	if want := math.Log(5.1 / 1.1); !ok || math.Abs(q-want) > 1e-12 {
		t.Errorf("q = %v (%v), want %v", q, ok, want)
	}
}

// simulate feeds n exponential waits whose mean follows mean(i) to a
// forecaster whose raw P90 is wrong by the factor bias and returns the
// realized coverage of the published quantiles over all n predictions.
func simulate(t *testing.T, n int, mean func(i int) float64, bias float64) float64 {
	t.Helper()
	c, err := New(0.9, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	covered := 0
	for i := range n {
		at := t0.Add(time.Duration(i) * time.Second)
		// The forecaster believes the mean is 1 throughout.
		raw := bias * math.Ln10
		q, _ := c.Adjustment()
		published := Adjust(raw, q, 0.1)
		actual := rng.ExpFloat64() * mean(i)
		if actual <= published {
			covered++
		}
		c.Observe(at, raw, published, actual, 0.1)
	}
	return float64(covered) / float64(n)
}

// Long-run coverage lands within ±2% of nominal whatever the forecaster's
// bias and however the load moves (Gibbs & Candès 2021, Prop. 4.1).
func TestLongRunCoverageHoldsUnderShift(t *testing.T) {
	const n = 20_000
	tests := map[string]struct {
		mean func(i int) float64
		bias float64
	}{
		"stationary, raw P90 too short":   {mean: func(int) float64 { return 1 }, bias: 0.5},
		"stationary, raw P90 too long":    {mean: func(int) float64 { return 1 }, bias: 2},
		"load step: waits triple halfway": {mean: func(i int) float64 { return 1 + 2*float64(i/(n/2)) }, bias: 1},
		"service shift: waits drift ×5":   {mean: func(i int) float64 { return 1 + 4*float64(i)/n }, bias: 1},
		"oscillating load":                {mean: func(i int) float64 { return 2 + math.Sin(float64(i)/500) }, bias: 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := simulate(t, n, tc.mean, tc.bias); math.Abs(got-0.9) > 0.02 {
				t.Errorf("long-run coverage %v, want 0.9 ± 0.02", got)
			}
		})
	}
}

// Without calibration the same shift leaves the raw quantile far off: the
// test above measures the calibrator, not an easy case.
func TestRawCoverageUnderShiftIsOff(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	covered := 0
	const n = 20_000
	for i := range n {
		if rng.ExpFloat64()*(1+2*float64(i/(n/2))) <= math.Ln10 {
			covered++
		}
	}
	if got := float64(covered) / n; math.Abs(got-0.9) < 0.1 {
		t.Errorf("raw coverage %v is near nominal: the shift is too mild to test anything", got)
	}
}

func TestWindowKeepsTheLatestScores(t *testing.T) {
	c, err := New(0.5, Options{Window: 4, MinScores: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Eight scores ln(k+1) for k = 0..7 with ε = 1 and raw 0; the window
	// keeps ln 5 … ln 8, whose weighted median (equal times) is ln 6.
	for k := range 8 {
		c.Observe(t0, 0, 0, float64(k), 1)
	}
	c.alpha = 0.5 // look at the plain median
	c.qStale = true
	if q, _ := c.Adjustment(); c.Scores() != 4 || math.Abs(q-math.Log(6)) > 1e-12 {
		t.Errorf("scores %d, median %v; want 4, ln 6", c.Scores(), q)
	}
}

func TestOlderScoresWeighLess(t *testing.T) {
	c, err := New(0.5, Options{MinScores: 1, HalfLife: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	// Two old large scores and one recent small one: ten half-lives later
	// the recent one carries almost all the weight.
	c.Observe(t0, 0, 0, 9, 1)
	c.Observe(t0, 0, 0, 9, 1)
	c.Observe(t0.Add(10*time.Minute), 0, 0, 0, 1)
	c.alpha = 0.5
	c.qStale = true
	if q, _ := c.Adjustment(); q != 0 {
		t.Errorf("weighted median %v, want 0 (the recent score)", q)
	}
}

// A miss counted early and its score added at the outcome leave the
// calibrator where Observe of the same outcome does; before MinScores
// scores, MissedEarly counts nothing.
func TestMissedEarlyThenScoreEqualsObserve(t *testing.T) {
	early, err := New(0.5, Options{MinScores: 2})
	if err != nil {
		t.Fatal(err)
	}
	late, _ := New(0.5, Options{MinScores: 2})
	if early.MissedEarly() {
		t.Fatal("MissedEarly acted with no scores")
	}
	outcomes := []struct{ raw, published, actual float64 }{{1, 1, 0.5}, {1, 1, 2}, {2, 3, 7}, {2, 1.5, 9}, {4, 5, 1}}
	for i, o := range outcomes {
		at := t0.Add(time.Duration(i) * time.Second)
		late.Observe(at, o.raw, o.published, o.actual, 0.1)
		if o.actual > o.published && early.MissedEarly() {
			early.ObserveScore(at, o.raw, o.actual, 0.1)
		} else {
			early.Observe(at, o.raw, o.published, o.actual, 0.1)
		}
		qe, oke := early.Adjustment()
		ql, okl := late.Adjustment()
		if qe != ql || oke != okl || early.Miscoverage() != late.Miscoverage() {
			t.Fatalf("after outcome %d: early q %v (%v) α %v, observed q %v (%v) α %v", i, qe, oke, early.Miscoverage(), ql, okl, late.Miscoverage())
		}
	}
	if early.ObserveScore(t0, 1, math.NaN(), 0.1) || early.ObserveScore(t0, 1, 1, 0) {
		t.Error("an invalid outcome was accepted")
	}
}

// With outcomes known only at admission, a P50 calibrated on waits that
// suddenly run long learns it late; counting each miss when the wait
// passes the published P50 keeps the long-run coverage and covers the
// step's first predictions closer to nominal.
func TestMissedEarlyReactsSoonerToALoadStep(t *testing.T) {
	const n, step = 6000, 3000
	run := func(early bool) (all, after float64) {
		c, _ := New(0.5, Options{})
		rng := rand.New(rand.NewPCG(3, 5))
		type pending struct {
			at, raw, published, actual float64
			missed                     bool
		}
		var waiting []pending
		covered, coveredAfter := 0, 0
		for i := range n {
			now := float64(i) // one prediction a second
			// Resolve what is known by now: admissions, and (early)
			// misses of waits past their P50.
			kept := waiting[:0]
			for _, p := range waiting {
				switch {
				case p.at+p.actual <= now:
					if p.missed {
						c.ObserveScore(t0, p.raw, p.actual, 0.1)
					} else {
						c.Observe(t0, p.raw, p.published, p.actual, 0.1)
					}
				case early && !p.missed && p.at+p.published < now && c.MissedEarly():
					p.missed = true
					kept = append(kept, p)
				default:
					kept = append(kept, p)
				}
			}
			waiting = kept
			mean := 20.0
			if i >= step {
				mean = 200 // waits run ten times longer
			}
			q, _ := c.Adjustment()
			raw := 20 * math.Ln2 // the forecaster's median of the old load
			p := pending{at: now, raw: raw, published: Adjust(raw, q, 0.1), actual: rng.ExpFloat64() * mean}
			if p.actual <= p.published {
				covered++
				if i >= step && i < step+1000 {
					coveredAfter++
				}
			}
			waiting = append(waiting, p)
		}
		return float64(covered) / n, float64(coveredAfter) / 1000
	}
	lateAll, lateAfter := run(false)
	earlyAll, earlyAfter := run(true)
	t.Logf("coverage at admission: %.3f (first 1000 after the step %.3f); early misses: %.3f (%.3f)", lateAll, lateAfter, earlyAll, earlyAfter)
	if math.Abs(earlyAll-0.5) > math.Abs(lateAll-0.5)+0.01 {
		t.Errorf("early misses moved the long-run coverage away from 0.5: %.3f against %.3f", earlyAll, lateAll)
	}
	if !(earlyAfter > lateAfter+0.05) {
		t.Errorf("after the step, early misses covered %.3f, at admission %.3f: want early ≥ 0.05 better", earlyAfter, lateAfter)
	}
}
