package forecast

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The Kaplan–Meier masses, tail and mean of small hand-computed cases.
func TestKaplanMeierMasses(t *testing.T) {
	type law struct {
		Times, Masses        []float64
		Tail, TailMean, Mean float64
	}
	cases := map[string]struct {
		observations, ages []float64
		want               law
	}{
		// t=1: 4 at risk, S 3/4; t=2: 3 at risk (2, 3 and the age 2.5),
		// S 1/2; t=3: the age left, 1 at risk, S 0.
		"a censored time between two completions": {
			observations: []float64{1, 2, 3}, ages: []float64{2.5},
			want: law{Times: []float64{1, 2, 3}, Masses: []float64{0.25, 0.25, 0.5}, TailMean: 8.5 / 3, Mean: 2.25},
		},
		// t=1: 3 at risk, S 2/3 left beyond it, at 1 s + Exp(θ),
		// θ = (1 + 2 + 4)/1 = 7 s: mean 1/3 + 2/3·8.
		"censored times beyond the last completion": {
			observations: []float64{1}, ages: []float64{2, 4},
			want: law{Times: []float64{1}, Masses: []float64{1.0 / 3}, Tail: 2.0 / 3, TailMean: 7, Mean: 17.0 / 3},
		},
		// A workload running exactly as long as a completion was at risk
		// there: t=2: 3 at risk, S 2/3; t=5: 1 at risk, S 0.
		"a tie between an age and a completion": {
			observations: []float64{2, 5}, ages: []float64{2},
			want: law{Times: []float64{2, 5}, Masses: []float64{1.0 / 3, 2.0 / 3}, TailMean: 4.5, Mean: 4},
		},
		"ties among the completions": {
			observations: []float64{1, 1, 3}, ages: []float64{2},
			want: law{Times: []float64{1, 3}, Masses: []float64{0.5, 0.5}, TailMean: 7.0 / 3, Mean: 2},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			km := newKaplanMeier(tc.observations, tc.ages)
			got := law{Times: km.times, Tail: km.tail, TailMean: km.tailMean, Mean: km.mean}
			for k := range km.times {
				got.Masses = append(got.Masses, km.prefix[k+1]-km.prefix[k])
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("law (-want +got):\n%s", diff)
			}
		})
	}
}

// Without running ages (or with ages that say nothing) the model is the
// plain bootstrap of the sample; with them, its draws follow the
// Kaplan–Meier law: the sample mean of many draws is its mean, and a
// residual at an age is a completion time above it less the age, or a tail
// draw past the last completion.
func TestCensoredBootstrapDraws(t *testing.T) {
	obs := []float64{1, 2, 3}
	for name, ages := range map[string][]float64{"none": nil, "zero, NaN, Inf and negative": {0, math.NaN(), math.Inf(1), -2}} {
		b, err := NewCensoredBootstrap(obs, ages)
		if err != nil {
			t.Fatal(err)
		}
		if b.km != nil || b.Mean() != 2 {
			t.Errorf("ages %s: Kaplan–Meier %v, mean %v; want the plain bootstrap, mean 2", name, b.km != nil, b.Mean())
		}
	}
	b, err := NewCensoredBootstrap(obs, []float64{2.5, 0})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	const n = 200000
	sum := 0.0
	for range n {
		sum += b.Sample(r)
	}
	if got := sum / n; math.Abs(got-2.25) > 0.02 {
		t.Errorf("mean of %d draws %v, want the law's 2.25", n, got)
	}
	// Given S > 2.5 only the completion at 3 s is left.
	for range 100 {
		if got := b.Residual(2.5, r); got != 0.5 {
			t.Fatalf("residual at 2.5 s: %v, want 0.5", got)
		}
	}
	// Past the last completion: Exp(θ), θ = 8.5/3 s.
	sum = 0
	for range n {
		sum += b.Residual(10, r)
	}
	if got := sum / n; math.Abs(got-8.5/3) > 0.05 {
		t.Errorf("mean residual past the last completion %v, want θ = %v", got, 8.5/3)
	}
}

// A replica's resample of n observations and m ages holds n + m service
// times in order, each imputed one above its age.
func TestCensoredResample(t *testing.T) {
	b, err := NewCensoredBootstrap([]float64{1, 2, 3, 4}, []float64{3.5, 10})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	var dst Empirical
	sawImputed := false
	for range 200 {
		b.resampleInto(&dst, nil, r)
		if len(dst.sorted) != 6 || !slices.IsSorted(dst.sorted) {
			t.Fatalf("resample %v: want 6 values in order", dst.sorted)
		}
		for _, v := range dst.sorted {
			if !(v >= 1) || math.IsInf(v, 0) {
				t.Fatalf("resample %v holds %v", dst.sorted, v)
			}
			if v > 10 {
				sawImputed = true
			}
		}
	}
	if !sawImputed {
		t.Error("no resample imputed a service time above the 10 s age")
	}
}

// simulateFIFO runs an M/M/k FIFO queue (mean service 2 s, utilization
// rho) from empty for the given arrivals and returns each job's start and
// end, in arrival order.
func simulateFIFO(r *rand.Rand, k, arrivals int, rho float64) (start, end []float64) {
	const mean = 2.0
	free := make([]float64, k)
	at := 0.0
	for range arrivals {
		at += r.ExpFloat64() * mean / (rho * float64(k))
		i := 0
		for j := range free {
			if free[j] < free[i] {
				i = j
			}
		}
		s := max(at, free[i])
		free[i] = s + r.ExpFloat64()*mean
		start, end = append(start, s), append(end, free[i])
	}
	return start, end
}

// observedAt splits the jobs at now into completed service times and the
// ages of those still running.
func observedAt(start, end []float64, now float64) (done, ages []float64) {
	for i := range start {
		switch {
		case end[i] <= now:
			done = append(done, end[i]-start[i])
		case start[i] <= now:
			ages = append(ages, now-start[i])
		}
	}
	return done, ages
}

// What the censored ages are for: soon after a ClusterQueue starts, the
// first completions are the short ones. In an M/M/k at ρ 0.7 (mean service
// 2 s) observed at its n-th completion, the sample mean averages well below
// 2 s, the more so the more slots; the Kaplan–Meier mean with the running
// workloads' ages removes most of that bias (what is left is the
// Kaplan–Meier estimate's own in samples this small). -v prints the table.
func TestCensoredBootstrapCorrectsTheEarlyCompletionsBias(t *testing.T) {
	const runs, mean = 300, 2.0
	r := rand.New(rand.NewPCG(5, 6))
	for _, k := range []int{4, 16, 64} {
		for _, n := range []int{10, 30} {
			naive, censored := 0.0, 0.0
			for range runs {
				start, end := simulateFIFO(r, k, 10*k+4*n, 0.7)
				ends := slices.Sorted(slices.Values(end))
				done, ages := observedAt(start, end, ends[n-1])
				plain, err := NewBootstrap(done)
				if err != nil {
					t.Fatal(err)
				}
				b, err := NewCensoredBootstrap(done, ages)
				if err != nil {
					t.Fatal(err)
				}
				naive += plain.Mean() / runs
				censored += b.Mean() / runs
			}
			t.Logf("%2d slots, at the %2d-th completion: sample mean %.2f s, Kaplan–Meier %.2f s (true %.1f s)", k, n, naive, censored, mean)
			if !(naive < 0.95*mean) {
				t.Errorf("%d slots, %d completions: sample mean %v: the bias this model corrects is not there", k, n, naive)
			}
			if math.Abs(censored-mean) > (mean-naive)/2 {
				t.Errorf("%d slots, %d completions: Kaplan–Meier mean %v, want within half the sample mean's distance from %v (sample mean %v)", k, n, censored, mean, naive)
			}
		}
	}
}

// Why the ages are not used once the sample is a window of a steady state:
// the workloads running at a moment are the long ones (the inspection
// paradox), and over a sample of the last 50 completions of an M/M/64 at
// ρ 0.7 their ages push the Kaplan–Meier mean far above the true 2 s, while
// the sample alone is right. -v prints both.
func TestRunningAgesOverstateASteadyStateWindow(t *testing.T) {
	const runs, k, window = 100, 64, 50
	r := rand.New(rand.NewPCG(7, 8))
	naive, censored := 0.0, 0.0
	for range runs {
		start, end := simulateFIFO(r, k, 3000, 0.7)
		now := start[len(start)-1]
		var completed []float64
		for i := range end {
			if end[i] <= now {
				completed = append(completed, end[i])
			}
		}
		slices.Sort(completed)
		cutoff := completed[len(completed)-window]
		var done, ages []float64
		for i := range start {
			switch {
			case end[i] <= now && end[i] >= cutoff:
				done = append(done, end[i]-start[i])
			case end[i] > now && start[i] <= now:
				ages = append(ages, now-start[i])
			}
		}
		plain, err := NewBootstrap(done)
		if err != nil {
			t.Fatal(err)
		}
		b, err := NewCensoredBootstrap(done, ages)
		if err != nil {
			t.Fatal(err)
		}
		naive += plain.Mean() / runs
		censored += b.Mean() / runs
	}
	t.Logf("steady state, %d slots, the last %d completions: sample mean %.2f s, Kaplan–Meier with the running ages %.2f s (true 2 s)", k, window, naive, censored)
	if math.Abs(naive-2) > 0.2 || !(censored > 1.5*2) {
		t.Errorf("sample mean %v, Kaplan–Meier %v: want about 2 s and more than 3 s", naive, censored)
	}
}

// Whatever the observations and ages, the censored model's draws and mean
// are finite and non-negative, and a resample holds n + m values.
func FuzzCensoredBootstrap(f *testing.F) {
	f.Add([]byte{10, 20, 30}, []byte{25}, uint64(1))
	f.Add([]byte{0, 0}, []byte{255, 1}, uint64(2))
	f.Add([]byte{7}, []byte{7, 7, 200}, uint64(3))
	f.Fuzz(func(t *testing.T, obs, ages []byte, seed uint64) {
		if len(obs) == 0 || len(obs) > 64 || len(ages) > 64 {
			return
		}
		var o, a []float64
		for _, v := range obs {
			o = append(o, float64(v)/8)
		}
		for _, v := range ages {
			a = append(a, float64(v)/4)
		}
		b, err := NewCensoredBootstrap(o, a)
		if err != nil {
			t.Fatal(err)
		}
		ok := func(v float64) bool { return v >= 0 && !math.IsInf(v, 0) }
		if !ok(b.Mean()) {
			t.Fatalf("mean %v", b.Mean())
		}
		r := rand.New(rand.NewPCG(seed, 0))
		for _, age := range append([]float64{0, math.NaN(), -1}, a...) {
			if v := b.Residual(age, r); !ok(v) {
				t.Fatalf("residual at %v: %v", age, v)
			}
		}
		if v := b.Sample(r); !ok(v) {
			t.Fatalf("sample %v", v)
		}
		var dst Empirical
		b.resampleInto(&dst, nil, r)
		if want := len(o) + len(b.censored); b.km != nil && len(dst.sorted) != want {
			t.Fatalf("resample of %d values, want %d", len(dst.sorted), want)
		}
	})
}
