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

// What the censored ages are for: soon after a ClusterQueue starts, the
// first completions are the short ones. In an M/M/4 at ρ 0.7 (mean service
// 2 s) observed at its 10th completion, the sample mean averages well below
// 2 s (by about a fifth); the Kaplan–Meier mean with the running
// workloads' ages removes most of that bias (what is left, about 6 %, is
// the Kaplan–Meier estimate's own in samples this small).
func TestCensoredBootstrapCorrectsTheEarlyCompletionsBias(t *testing.T) {
	const runs, servers, mean, rho = 400, 4, 2.0, 0.7
	r := rand.New(rand.NewPCG(5, 6))
	naive, censored := 0.0, 0.0
	for range runs {
		free := make([]float64, servers)
		type job struct{ start, end float64 }
		var jobs []job
		at := 0.0
		for range 40 {
			at += r.ExpFloat64() * mean / (rho * servers)
			i := 0
			for j := range free {
				if free[j] < free[i] {
					i = j
				}
			}
			start := max(at, free[i])
			free[i] = start + r.ExpFloat64()*mean
			jobs = append(jobs, job{start, free[i]})
		}
		ends := make([]float64, len(jobs))
		for i, j := range jobs {
			ends[i] = j.end
		}
		slices.Sort(ends)
		now := ends[9]
		var done, ages []float64
		for _, j := range jobs {
			switch {
			case j.end <= now:
				done = append(done, j.end-j.start)
			case j.start <= now:
				ages = append(ages, now-j.start)
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
	if !(naive < 0.9*mean) {
		t.Errorf("sample mean at the 10th completion %v: the bias this model corrects is not there (want < %v)", naive, 0.9*mean)
	}
	if math.Abs(censored-mean) > (mean-naive)/3 {
		t.Errorf("Kaplan–Meier mean at the 10th completion %v, want within a third of the sample mean's distance from %v (sample mean %v)", censored, mean, naive)
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
