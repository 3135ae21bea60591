package forecast

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// streamOf is the stream replicaSource opens for stream index i from a
// caller's source seeded (3, 4).
func streamOf(i uint64) *rand.Rand {
	caller := rand.New(rand.NewPCG(3, 4))
	seed0, seed1 := caller.Uint64(), caller.Uint64()
	return rand.New(rand.NewPCG(seed0, streamSeed(seed1, i)))
}

func TestReplicaSourcePairsReplayThePartnersDrawsComplemented(t *testing.T) {
	cases := map[string]struct {
		evenDraws, oddDraws int
	}{
		"odd replica draws as many as its partner":                      {evenDraws: 5, oddDraws: 5},
		"odd replica draws fewer":                                       {evenDraws: 5, oddDraws: 2},
		"odd replica draws more: its partner's stream after the record": {evenDraws: 3, oddDraws: 6},
		"even replica draws nothing":                                    {evenDraws: 0, oddDraws: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			src := newReplicaSource(rand.New(rand.NewPCG(3, 4)), true)
			defer src.release()
			want := streamOf(0)
			var wantEven, gotEven, wantOdd, gotOdd []uint64
			src.startReplica(0)
			for range tc.evenDraws {
				wantEven = append(wantEven, want.Uint64())
				gotEven = append(gotEven, src.Uint64())
			}
			src.startReplica(1)
			for i := range tc.oddDraws {
				if i < tc.evenDraws {
					wantOdd = append(wantOdd, ^wantEven[i])
				} else {
					wantOdd = append(wantOdd, want.Uint64())
				}
				gotOdd = append(gotOdd, src.Uint64())
			}
			if diff := cmp.Diff(wantEven, gotEven); diff != "" {
				t.Errorf("even replica's draws (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantOdd, gotOdd); diff != "" {
				t.Errorf("odd replica's draws (-want +got):\n%s", diff)
			}
			// The next pair opens the next stream, whatever the first drew.
			src.startReplica(2)
			if got, w := src.Uint64(), streamOf(1).Uint64(); got != w {
				t.Errorf("third replica's first draw %x, want stream 1's first %x", got, w)
			}
		})
	}
}

func TestReplicaSourceIndependentReplicasOpenAStreamEach(t *testing.T) {
	src := newReplicaSource(rand.New(rand.NewPCG(3, 4)), false)
	defer src.release()
	for rep := range 4 {
		src.startReplica(rep)
		want := streamOf(uint64(rep))
		for i := range 3 {
			if got, w := src.Uint64(), want.Uint64(); got != w {
				t.Fatalf("replica %d, draw %d: %x, want its stream's %x", rep, i, got, w)
			}
		}
	}
}

func TestReplicaSourceMirrorsUniformsAndIndices(t *testing.T) {
	src := newReplicaSource(rand.New(rand.NewPCG(5, 6)), true)
	defer src.release()
	r := rand.New(src)
	src.startReplica(0)
	var u []float64
	var idx []int
	for range 100 {
		u = append(u, r.Float64())
		idx = append(idx, r.IntN(64))
	}
	src.startReplica(1)
	for i := range 100 {
		if got, want := r.Float64(), 1-u[i]; math.Abs(got-want) > 1e-15 {
			t.Fatalf("draw %d: mirrored uniform %v, want 1 − %v", i, got, u[i])
		}
		if got, want := r.IntN(64), 63-idx[i]; got != want {
			t.Fatalf("draw %d: mirrored index %d, want %d", i, got, want)
		}
	}
}

func TestReplicaSourceStopsRecordingAtItsCap(t *testing.T) {
	src := newReplicaSource(rand.New(rand.NewPCG(7, 8)), true)
	defer src.release()
	src.startReplica(0)
	for range maxRecordedDraws + 10 {
		src.Uint64()
	}
	if len(src.record) != maxRecordedDraws {
		t.Errorf("recorded %d draws, want the cap %d", len(src.record), maxRecordedDraws)
	}
}

func TestExpDrawIsFiniteNonNegativeAndIncreasingInItsUniform(t *testing.T) {
	// The extreme words: U = 0 and U = 1 − 2⁻⁵³ (Float64 reads a word's
	// low 53 bits).
	for _, word := range []uint64{0, math.MaxUint64} {
		x := expDraw(rand.New(constantSource(word)))
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || x > 37 {
			t.Errorf("word %x: expDraw %v, want finite in [0, 37]", word, x)
		}
	}
	prev := -1.0
	for _, word := range []uint64{0, 1 << 20, 1 << 40, 1 << 52, 1<<53 - 1<<20, 1<<53 - 1} {
		x := expDraw(rand.New(constantSource(word)))
		if !(x >= prev) {
			t.Errorf("word %x: expDraw %v below the previous word's %v", word, x, prev)
		}
		prev = x
	}
}

// TestExpDrawIsWithinItsStatedErrorOfTheLogarithmAndNondecreasing sweeps
// U over every multiple of 2⁻²⁰ and both sides of every node of the table
// (one step of 2⁻⁵³ apart) and of the switch to the logarithm: the draw
// never falls below −ln(1−U) by more than rounding (10⁻¹⁵ of itself) nor
// exceeds it by more than 1.3·10⁻⁴ of itself, and it never decreases as U
// grows.
func TestExpDrawIsWithinItsStatedErrorOfTheLogarithmAndNondecreasing(t *testing.T) {
	// Float64 reads a word's low 53 bits as U·2⁵³.
	words := make([]uint64, 0, 1<<20+3*(expTableSteps+1))
	for j := range uint64(1 << 20) {
		words = append(words, j<<33)
	}
	for i := range uint64(expTableSteps) {
		node := i << 41
		words = append(words, node, node+1)
		if node > 0 {
			words = append(words, node-1)
		}
	}
	words = append(words, 1<<53-1)
	slices.Sort(words)
	words = slices.Compact(words)
	prev, worst := -1.0, 0.0
	for _, w := range words {
		u := float64(w) / (1 << 53)
		got := expDraw(rand.New(constantSource(w)))
		exact := -math.Log(1 - u)
		if got < exact*(1-1e-15) || got-exact > 1.3e-4*exact {
			t.Fatalf("U = %v: expDraw %v, −ln(1−U) %v: want within [−10⁻¹⁵, 1.3·10⁻⁴] of it, relative", u, got, exact)
		}
		if exact > 0 {
			worst = max(worst, (got-exact)/exact)
		}
		if got < prev {
			t.Fatalf("U = %v: expDraw %v below the previous U's %v", u, got, prev)
		}
		prev = got
	}
	t.Logf("%d values of U, largest relative excess %.3g", len(words), worst)
}

// moments are the sum and the sum of squares of a series of figures.
type moments struct{ sum, sumSq float64 }

func (m *moments) add(x float64) { m.sum, m.sumSq = m.sum+x, m.sumSq+x*x }

// constantSource returns the same word on every draw.
type constantSource uint64

func (c constantSource) Uint64() uint64 { return uint64(c) }

// TestAntitheticPairsHalveTheExpectedWaitVarianceAndDoNotRaiseTheP90s
// forecasts the Erlang queue of TestMatchesErlangWhenAllBusy (4 busy
// servers, 16 identical pending workloads, exponential service) with 32
// replicas under 400 seeds, in antithetic pairs and independently. Both
// must be unbiased (the mean over seeds of the expected wait within 1 % of
// the Erlang mean); at positions 3 and 15 the pairs must leave at most half
// the independent replicas' variance across seeds of the expected wait, and
// no more of the P90's. Measured when the pairing came in: 0.21 and 0.29 of
// the expected wait's variance, 0.88 and 0.75 of the P90's (a quantile
// gains less than a mean).
func TestAntitheticPairsHalveTheExpectedWaitVarianceAndDoNotRaiseTheP90s(t *testing.T) {
	const k, n, meanS, replicas, seeds = 4, 16, 20.0, 32, 400
	q := busyQueue(t, k, n, meanS)
	paired := mustNew(t, WithSamples(replicas))
	independent := mustNew(t, WithSamples(replicas))
	independent.independentReplicas = true
	variance := func(m moments) float64 {
		mean := m.sum / seeds
		return m.sumSq/seeds - mean*mean
	}
	for _, pos := range []int{3, 15} {
		var pairedMean, indepMean, pairedP90, indepP90 moments
		for seed := range uint64(seeds) {
			p := mustForecast(t, paired, q, seed)[pos]
			i := mustForecast(t, independent, q, seed)[pos]
			pairedMean.add(p.ExpectedWaitSeconds)
			indepMean.add(i.ExpectedWaitSeconds)
			pairedP90.add(p.P90Seconds)
			indepP90.add(i.P90Seconds)
		}
		erlangMean := float64(pos+1) * meanS / k
		for name, m := range map[string]moments{"paired": pairedMean, "independent": indepMean} {
			if got := m.sum / seeds; !approx(got, erlangMean, 0.01*erlangMean) {
				t.Errorf("position %d, %s replicas: mean expected wait %.3f s over the seeds, want the Erlang mean %.3f ± 1 %%", pos, name, got, erlangMean)
			}
		}
		meanRatio, p90Ratio := variance(pairedMean)/variance(indepMean), variance(pairedP90)/variance(indepP90)
		t.Logf("position %d: variance ratio paired / independent: expected wait %.3f, P90 %.3f", pos, meanRatio, p90Ratio)
		if meanRatio > 0.5 {
			t.Errorf("position %d: antithetic pairs leave %.3f of the expected wait's variance, want ≤ 0.5", pos, meanRatio)
		}
		if p90Ratio > 1 {
			t.Errorf("position %d: antithetic pairs raise the P90's variance (ratio %.3f)", pos, p90Ratio)
		}
	}
}

// TestSameSeedGivesTheHeadTheSameForecastWhateverWaitsBehindIt: the head of
// 4 busy servers is admitted at the first completion, which no workload
// behind it changes; with a stream per replica (common random numbers)
// rolls from one seed give it the same figures with 3 or 40 workloads
// behind it, in pairs and independently, while a stream shared by the
// replicas would shift every replica after the first by the extra draws.
func TestSameSeedGivesTheHeadTheSameForecastWhateverWaitsBehindIt(t *testing.T) {
	for name, independent := range map[string]bool{"antithetic pairs": false, "independent replicas": true} {
		t.Run(name, func(t *testing.T) {
			f := mustNew(t)
			f.independentReplicas = independent
			short := mustForecast(t, f, busyQueue(t, 4, 4, 20), 9)[0]
			long := mustForecast(t, f, busyQueue(t, 4, 41, 20), 9)[0]
			if diff := cmp.Diff(short, long); diff != "" {
				t.Errorf("the head's forecast with 3 and 40 behind it (-3 +40):\n%s", diff)
			}
		})
	}
}
