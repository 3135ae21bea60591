package forecast

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// This file holds a small discrete-event oracle: an M/G/k queue with vector
// demands, Poisson arrivals and BestEffortFIFO or StrictFIFO admission (no
// cycle cap), simulated exactly. At each arrival it asks the forecaster
// about the newcomer given the live state and records, beside the
// forecast, the paper's Approximation 1 and an EMA baseline (α = 0.3) over
// the waits of already-admitted workloads.

type oracleClass struct {
	demand capacity.Quantities
	weight float64
	// service, when set, draws this class's service times in place of
	// the spec's.
	service func(*rand.Rand) float64
}

type oracleSpec struct {
	capacity    capacity.Quantities
	classes     []oracleClass
	arrivalRate float64
	// service draws the service times of the classes without their own.
	service   func(*rand.Rand) float64
	workloads int
	policy    Policy
	seed      uint64
	// model returns the service model the forecaster uses, given the
	// service times completed so far.
	model func(completed []float64) ServiceModel
	// arrivals, when set, are the future arrivals every forecast is given.
	arrivals []Arrival
	// classLaws, when set, are the forecasts' Queue.ServiceClasses, one
	// per class: every running and pending workload of class c names
	// classLaws[c] (ServiceClass c+1).
	classLaws []ServiceModel
}

type oracleRecord struct {
	arrival, admitted float64
	forecast          Estimate
	ema               float64 // EMA prediction at arrival; NaN before any admission
	// queued is how many were pending when it arrived, itself included;
	// fitted, whether its demand fitted the free capacity then.
	queued int
	fitted bool
	class  int
}

type oracleJob struct {
	id       int
	class    int
	arrival  float64
	admitted float64
	end      float64
}

func runOracle(t testing.TB, spec oracleSpec, f *Forecaster) []oracleRecord {
	t.Helper()
	rng := rand.New(rand.NewPCG(spec.seed, 1))
	frng := rand.New(rand.NewPCG(spec.seed, 2))
	totalWeight := 0.0
	for _, c := range spec.classes {
		totalWeight += c.weight
	}
	jobs := make([]oracleJob, spec.workloads)
	now := 0.0
	for i := range jobs {
		now += rng.ExpFloat64() / spec.arrivalRate
		u := rng.Float64() * totalWeight
		class := 0
		for class < len(spec.classes)-1 && u >= spec.classes[class].weight {
			u -= spec.classes[class].weight
			class++
		}
		jobs[i] = oracleJob{id: i, class: class, arrival: now}
	}

	records := make([]oracleRecord, len(jobs))
	free := spec.capacity.Clone()
	var running, pending []int
	var completed []float64
	ema := math.NaN()
	const alpha = 0.3
	next := 0

	admit := func(now float64) {
		for {
			picked := -1
			for pi, id := range pending {
				if free.Fits(spec.classes[jobs[id].class].demand) {
					picked = pi
					break
				}
				if spec.policy == StrictFIFO {
					break
				}
			}
			if picked < 0 {
				return
			}
			id := pending[picked]
			pending = append(pending[:picked], pending[picked+1:]...)
			j := &jobs[id]
			j.admitted = now
			if svc := spec.classes[j.class].service; svc != nil {
				j.end = now + svc(rng)
			} else {
				j.end = now + spec.service(rng)
			}
			free.Sub(spec.classes[j.class].demand)
			running = append(running, id)
			w := now - j.arrival
			if math.IsNaN(ema) {
				ema = w
			} else {
				ema = alpha*w + (1-alpha)*ema
			}
		}
	}

	var model ServiceModel
	modelAt := -1
	for next < len(jobs) || len(pending) > 0 || len(running) > 0 {
		// Earliest completion.
		ri, tEnd := -1, math.Inf(1)
		for i, id := range running {
			if jobs[id].end < tEnd {
				ri, tEnd = i, jobs[id].end
			}
		}
		if next < len(jobs) && jobs[next].arrival < tEnd {
			j := &jobs[next]
			now = j.arrival
			pending = append(pending, j.id)
			if modelAt < 0 || len(completed) >= modelAt+100 {
				model, modelAt = spec.model(completed), len(completed)
			}
			q := Queue{Capacity: spec.capacity, Service: model, Policy: spec.policy, Arrivals: spec.arrivals, ServiceClasses: spec.classLaws}
			lawOf := func(class int) int32 {
				if spec.classLaws == nil {
					return 0
				}
				return int32(class + 1)
			}
			for _, id := range running {
				c := jobs[id].class
				q.Running = append(q.Running, Running{Usage: spec.classes[c].demand, AgeSeconds: now - jobs[id].admitted, ServiceClass: lawOf(c)})
			}
			for _, id := range pending {
				c := jobs[id].class
				q.Pending = append(q.Pending, Pending{ID: fmt.Sprint(id), Options: []capacity.Quantities{spec.classes[c].demand}, Quotable: true, ServiceClass: lawOf(c)})
			}
			est, err := f.Forecast(q, frng)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, q, est, f.horizonSeconds)
			records[j.id] = oracleRecord{arrival: j.arrival, forecast: est[len(est)-1], ema: ema,
				queued: len(pending), fitted: free.Fits(spec.classes[j.class].demand), class: j.class}
			next++
			admit(now)
			continue
		}
		if ri < 0 {
			t.Fatal("oracle stuck: pending workloads but nothing runs")
		}
		now = tEnd
		id := running[ri]
		running = append(running[:ri], running[ri+1:]...)
		free.Add(spec.classes[jobs[id].class].demand)
		completed = append(completed, jobs[id].end-jobs[id].admitted)
		admit(now)
	}
	for i := range records {
		records[i].admitted = jobs[i].admitted
	}
	return records
}

// classScore sums, over the workloads of one demand class that waited, how
// many there were, how many the published P50 covered, the forecasts'
// error (expected − actual, seconds) and the waits (seconds).
type classScore struct {
	n, covered int
	bias, wait float64
}

// scoreByClass scores the records of a two-class oracle run by class,
// over the workloads that waited.
func scoreByClass(records []oracleRecord) [2]classScore {
	var by [2]classScore
	for _, r := range records {
		w := r.admitted - r.arrival
		if w <= 0 {
			continue
		}
		c := &by[r.class]
		c.n++
		c.bias += r.forecast.ExpectedWaitSeconds - w
		c.wait += w
		if w <= r.forecast.P50Seconds {
			c.covered++
		}
	}
	return by
}

// namedScore is one demand class's score in one arm of a test.
type namedScore struct {
	name string
	s    classScore
}

// checkLastSideUnbiased logs the scores of one demand class at ρ rho in
// each arm, fails the test unless at least 300 of the class waited in
// each, and checks the last arm: its mean forecast within ±5 % of the
// mean wait, its P50 covering 0.45–0.55 of the waits.
func checkLastSideUnbiased(t *testing.T, rho float64, class string, sides []namedScore) {
	t.Helper()
	for _, side := range sides {
		if side.s.n < 300 {
			t.Fatalf("ρ %.2f, %s: only %d %s workloads waited", rho, side.name, side.s.n, class)
		}
		t.Logf("ρ %.2f, %s, %s: %d waited %.1fs on average; bias %+.0f %%, P50 coverage %.2f", rho, class, side.name,
			side.s.n, side.s.wait/float64(side.s.n), 100*side.s.bias/side.s.wait, float64(side.s.covered)/float64(side.s.n))
	}
	last := sides[len(sides)-1]
	if rel := last.s.bias / last.s.wait; math.Abs(rel) > 0.05 {
		t.Errorf("ρ %.2f, %s, %s: bias %+.1f %% of the mean wait, want within ±5 %%", rho, class, last.name, 100*rel)
	}
	if cov := float64(last.s.covered) / float64(last.s.n); cov < 0.45 || cov > 0.55 {
		t.Errorf("ρ %.2f, %s, %s: P50 coverage %.2f, want within [0.45, 0.55]", rho, class, last.name, cov)
	}
}

// The queue of TestBestEffortFIFOForecastsOfLargeWorkloadsNeedSamePriorityArrivals,
// given the arrivals of both shapes, where that test finds the roll within
// ±5 % with one service law for both shapes; here the large workloads'
// services last 1.5× the small ones' (30 s against 20 s, as mt-mixed's 3 s
// against 2 s).
//
// Given one law, that of the ClusterQueue's completions (mean 22 s, what
// the estimator measured before it kept a sample per demand shape), the
// large workloads that run hold their 2 CPU longer than the roll lets
// them, and the forecasts come out short: what mt-mixed's large workloads
// showed on the real scheduler (README "Large workloads behind small ones
// in BestEffortFIFO"). Given each shape's law (Queue.ServiceClasses, for
// the running, pending and arriving workloads alike), they are not.
//
// 6 000 workloads (the first 300 discarded), scored when they waited: at
// ρ 0.75 / 0.9, with one law the large workloads' mean forecast is 19 % /
// 16 % short (P50 coverage 0.39 / 0.32), the small ones' 15 % / 7 %; with
// a law per shape the large ones' is 1 % short and exact, the small ones'
// 3 % short and 1 % long, and P50 covers 0.48–0.52 of each.
func TestShapesOfDifferentServiceNeedAServiceLawEach(t *testing.T) {
	small, large := cpu(500), cpu(2000)
	const meanSmall, meanLarge = 20.0, 30.0
	for _, rho := range []float64{0.75, 0.9} {
		// The CPU-seconds an arrival brings: 0.8·0.5·E[S_small] + 0.2·2·E[S_large].
		lambda := rho * 4 / (0.8*0.5*meanSmall + 0.2*2*meanLarge)
		pooled := 0.8*meanSmall + 0.2*meanLarge
		spec := oracleSpec{
			capacity: cpu(4000),
			classes: []oracleClass{
				{demand: small, weight: 0.8, service: exponentialService(meanSmall)},
				{demand: large, weight: 0.2, service: exponentialService(meanLarge)},
			},
			arrivalRate: lambda,
			workloads:   6000,
			seed:        7,
			policy:      BestEffortFIFO,
			model:       func([]float64) ServiceModel { return mustExponential(t, pooled) },
			arrivals: []Arrival{
				{RatePerSecond: 0.8 * lambda, Options: []capacity.Quantities{small}},
				{RatePerSecond: 0.2 * lambda, Options: []capacity.Quantities{large}},
			},
		}
		oneLaw := scoreByClass(runOracle(t, spec, mustNew(t))[300:])
		spec.classLaws = []ServiceModel{mustExponential(t, meanSmall), mustExponential(t, meanLarge)}
		spec.arrivals = []Arrival{
			{RatePerSecond: 0.8 * lambda, Options: []capacity.Quantities{small}, ServiceClass: 1},
			{RatePerSecond: 0.2 * lambda, Options: []capacity.Quantities{large}, ServiceClass: 2},
		}
		lawEach := scoreByClass(runOracle(t, spec, mustNew(t))[300:])
		for c, class := range []string{"small", "large"} {
			checkLastSideUnbiased(t, rho, class, []namedScore{{"one law", oneLaw[c]}, {"a law per shape", lawEach[c]}})
		}
		if rel := oneLaw[1].bias / oneLaw[1].wait; rel > -0.10 {
			t.Errorf("ρ %.2f, large, one law: bias %+.1f %% of the mean wait, want below −10 %% (one service law for both shapes)", rho, 100*rel)
		}
	}
}

// erlangC is P(wait > 0) in M/M/k with offered load a = kρ, through the
// stable Erlang-B recursion B₀ = 1, Bₙ = a·Bₙ₋₁/(n + a·Bₙ₋₁), then
// C = B/(1 − ρ(1 − B)).
func erlangC(k int, rho float64) float64 {
	a := float64(k) * rho
	b := 1.0
	for n := 1; n <= k; n++ {
		b = a * b / (float64(n) + a*b)
	}
	return b / (1 - rho*(1-b))
}

// paperWait is the paper's Approximation 1:
// W = C(k,ρ)·E[S]/(k(1−ρ))·(C_S²+1)/2.
func paperWait(k int, rho, meanS, cs2 float64) float64 {
	return erlangC(k, rho) * meanS / (float64(k) * (1 - rho)) * (cs2 + 1) / 2
}

func TestErlangC(t *testing.T) {
	cases := map[string]struct {
		k         int
		rho, want float64
	}{
		// M/M/1: C = ρ.
		"single server": {1, 0.7, 0.7},
		// M/M/2 at ρ = 0.5: C = 2ρ²/(1+ρ) = 1/3.
		"two servers": {2, 0.5, 1.0 / 3},
		// M/M/4 at ρ = 0.9 (a = 3.6): B = 0.27070 by hand, C = B/(1 − 0.9·(1 − B)) = 0.78775.
		"four servers": {4, 0.9, 0.78775},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := erlangC(tc.k, tc.rho); !approx(got, tc.want, 1e-4) {
				t.Errorf("C(%d, %v) = %v, want %v", tc.k, tc.rho, got, tc.want)
			}
		})
	}
}

type scores struct {
	n                             int
	maeForecast, maeEMA, maePaper float64
	maeP50                        float64
	coverageP90                   float64
	meanWait                      float64
}

func score(records []oracleRecord, warmup int, paper float64) scores {
	var s scores
	covered := 0
	for _, r := range records[warmup:] {
		w := r.admitted - r.arrival
		s.n++
		s.meanWait += w
		s.maeForecast += math.Abs(r.forecast.ExpectedWaitSeconds - w)
		s.maeP50 += math.Abs(r.forecast.P50Seconds - w)
		s.maeEMA += math.Abs(r.ema - w)
		s.maePaper += math.Abs(paper - w)
		if w <= r.forecast.P90Seconds+1e-9 {
			covered++
		}
	}
	n := float64(s.n)
	s.meanWait /= n
	s.maeForecast /= n
	s.maeP50 /= n
	s.maeEMA /= n
	s.maePaper /= n
	s.coverageP90 = float64(covered) / n
	return s
}

func exponentialService(mean float64) func(*rand.Rand) float64 {
	return func(r *rand.Rand) float64 { return mean * r.ExpFloat64() }
}

// exactMM4 is M/M/4 — 2 CPU, 500m workloads, exponential services of mean
// meanS seconds, Poisson arrivals at utilization rho — forecast with the
// true service law.
func exactMM4(t testing.TB, rho, meanS float64, workloads int, seed uint64) oracleSpec {
	return oracleSpec{
		capacity:    cpu(2000),
		classes:     []oracleClass{{demand: cpu(500), weight: 1}},
		arrivalRate: rho * 4 / meanS,
		service:     exponentialService(meanS),
		workloads:   workloads,
		seed:        seed,
		model:       func([]float64) ServiceModel { return mustExponential(t, meanS) },
	}
}

// TestAcceptanceMMk is the acceptance test: k = 4 (2 CPU, 500m demands),
// E[S] = 20 s exponential, Poisson arrivals at ρ = 0.9, BestEffortFIFO.
// The state-conditioned forecast must beat the EMA baseline (MAE ≤ 0.75×)
// and the paper's formula (MAE ≤ 0.3×) with P90 coverage in [0.85, 0.97].
//
// At ρ = 0.9 the queue has long busy periods, so the MAE ratios of a short
// run depend on the seed: with 4 000 workloads the ratio to the paper's
// MAE ranged 0.21–0.31 over seeds 1–10, with 10 000 it ranged 0.23–0.28
// (ratio to EMA 0.59–0.65, coverage 0.91–0.93). Hence 10 000 workloads.
func TestAcceptanceMMk(t *testing.T) {
	const k, meanS, rho = 4, 20.0, 0.9
	paper := paperWait(k, rho, meanS, 1)
	cases := map[string]struct {
		model func([]float64) ServiceModel
	}{
		"a-priori exponential": {
			model: func([]float64) ServiceModel { return mustExponential(t, meanS) },
		},
		// The service model learned from the completions seen so far (an
		// exponential prior until 20 have completed).
		"empirical from completions": {
			model: func(done []float64) ServiceModel {
				if len(done) < 20 {
					return mustExponential(t, meanS)
				}
				e, err := NewEmpirical(done)
				if err != nil {
					t.Fatal(err)
				}
				return e
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := oracleSpec{
				capacity:    cpu(2000),
				classes:     []oracleClass{{demand: cpu(500), weight: 1}},
				arrivalRate: rho * k / meanS,
				service:     exponentialService(meanS),
				workloads:   10000,
				seed:        2024,
				model:       tc.model,
			}
			records := runOracle(t, spec, mustNew(t))
			s := score(records, 500, paper)
			t.Logf("n=%d mean wait %.2fs; MAE forecast %.2fs (P50 %.2fs), EMA %.2fs, paper %.2fs (W=%.2fs); forecast/EMA %.3f, forecast/paper %.3f; P90 coverage %.3f",
				s.n, s.meanWait, s.maeForecast, s.maeP50, s.maeEMA, s.maePaper, paper, s.maeForecast/s.maeEMA, s.maeForecast/s.maePaper, s.coverageP90)
			if s.maeForecast > 0.75*s.maeEMA {
				t.Errorf("forecast MAE %.2f > 0.75 × EMA MAE %.2f", s.maeForecast, s.maeEMA)
			}
			if s.maeForecast > 0.3*s.maePaper {
				t.Errorf("forecast MAE %.2f > 0.3 × paper MAE %.2f", s.maeForecast, s.maePaper)
			}
			if s.coverageP90 < 0.85 || s.coverageP90 > 0.97 {
				t.Errorf("P90 coverage %.3f not in [0.85, 0.97]", s.coverageP90)
			}
		})
	}
}

// TestVectorDemandsMemoryBottleneck: 4 CPU and 2Gi; a mix of cpu-heavy
// (1 CPU, 256Mi) and memory-heavy (250m, 768Mi) workloads, so memory binds
// and the packing depends on the mix. The paper's formula uses the
// dominant-resource k_eff (Eq. 4).
func TestVectorDemandsMemoryBottleneck(t *testing.T) {
	const meanS = 20.0
	heavyCPU := cpuMem(1000, gi/4)
	heavyMem := cpuMem(250, 3*gi/4)
	// Eq. 4 with φ = ½ each: mean demand (625m, 512Mi) → k = min(⌊4/0.625⌋,
	// ⌊2/0.5⌋) = 4, memory-bound.
	const k = 4
	const rho = 0.85
	spec := oracleSpec{
		capacity:    cpuMem(4000, 2*gi),
		classes:     []oracleClass{{demand: heavyCPU, weight: 1}, {demand: heavyMem, weight: 1}},
		arrivalRate: rho * k / meanS,
		service:     exponentialService(meanS),
		workloads:   2500,
		seed:        7,
		model:       func([]float64) ServiceModel { return mustExponential(t, meanS) },
	}
	records := runOracle(t, spec, mustNew(t))
	paper := paperWait(k, rho, meanS, 1)
	s := score(records, 200, paper)
	t.Logf("2-D: n=%d mean wait %.2fs; MAE forecast %.2fs, EMA %.2fs, paper %.2fs (W=%.2fs); P90 coverage %.3f",
		s.n, s.meanWait, s.maeForecast, s.maeEMA, s.maePaper, paper, s.coverageP90)
	if s.maeForecast > 0.75*s.maeEMA {
		t.Errorf("forecast MAE %.2f > 0.75 × EMA MAE %.2f", s.maeForecast, s.maeEMA)
	}
	if s.maeForecast > 0.5*s.maePaper {
		t.Errorf("forecast MAE %.2f > 0.5 × paper MAE %.2f", s.maeForecast, s.maePaper)
	}
	if s.coverageP90 < 0.8 || s.coverageP90 > 0.98 {
		t.Errorf("P90 coverage %.3f not in [0.8, 0.98]", s.coverageP90)
	}
}

// TestStrictFIFOOracle: StrictFIFO with a mix of small and large demands;
// head-of-line blocking is part of what the forecast must capture.
func TestStrictFIFOOracle(t *testing.T) {
	const meanS = 20.0
	spec := oracleSpec{
		capacity:    cpu(4000),
		classes:     []oracleClass{{demand: cpu(500), weight: 3}, {demand: cpu(2500), weight: 1}},
		arrivalRate: 0.1,
		service:     exponentialService(meanS),
		workloads:   1500,
		policy:      StrictFIFO,
		seed:        99,
		model:       func([]float64) ServiceModel { return mustExponential(t, meanS) },
	}
	records := runOracle(t, spec, mustNew(t))
	s := score(records, 100, 0)
	t.Logf("strict: n=%d mean wait %.2fs; MAE forecast %.2fs, EMA %.2fs; P90 coverage %.3f", s.n, s.meanWait, s.maeForecast, s.maeEMA, s.coverageP90)
	if s.maeForecast > 0.75*s.maeEMA {
		t.Errorf("forecast MAE %.2f > 0.75 × EMA MAE %.2f", s.maeForecast, s.maeEMA)
	}
	if s.coverageP90 < 0.8 || s.coverageP90 > 0.98 {
		t.Errorf("P90 coverage %.3f not in [0.8, 0.98]", s.coverageP90)
	}
}

// TestTransientOverload: ρ = 1.2, where the paper's formula is undefined.
// The forecasts stay finite (checked on every call by runOracle) and still
// track the growing waits.
func TestTransientOverload(t *testing.T) {
	const k, meanS, rho = 4, 20.0, 1.2
	spec := exactMM4(t, rho, meanS, 600, 12)
	records := runOracle(t, spec, mustNew(t))
	s := score(records, 50, 0)
	t.Logf("overload: n=%d mean wait %.2fs; MAE forecast %.2fs, EMA %.2fs; P90 coverage %.3f", s.n, s.meanWait, s.maeForecast, s.maeEMA, s.coverageP90)
	last := records[len(records)-1].forecast
	if last.Clamped || last.ExpectedWaitSeconds < 100 {
		t.Errorf("last arrival forecast %+v: want a long, unclamped wait", last)
	}
	if s.maeForecast > 0.75*s.maeEMA {
		t.Errorf("forecast MAE %.2f > 0.75 × EMA MAE %.2f", s.maeForecast, s.maeEMA)
	}
}

// TestExactModelFloorOfTheMAERatiosInMMk measures how far below its
// baselines any forecast can go, so that the evaluation's ratios (and
// issue 12's targets of 0.75 × the EMA's MAE and 0.3 × the paper
// formula's at ρ ≥ 0.7) can be read against a floor.
//
// In M/M/k under FIFO a workload's wait is a function of the state it
// finds (how many run, how many wait ahead of it: service is memoryless and
// later arrivals queue behind it) and of future service times. The roll
// with the true model (exponential with the true mean) draws from the
// exact conditional distribution of the wait, so its P50 is, up to Monte
// Carlo error, the conditional median: the predictor of least MAE among
// all functions of the state. No forecast does better on these queues.
//
// Scored as the evaluation scores (workloads still pending when first
// estimated; here, those that found no room when they arrived), k = 4,
// E[S] = 20 s, 10 000 workloads, 200 futures, the paper's formula with its
// exact parameters (Erlang-C W_q, C_S² = 1) and the EMA with α = 0.3:
// the floor against the paper's formula is above 0.3 at ρ 0.7 and 0.8,
// and against the EMA between 0.5 and 0.75 at every ρ. Over seeds 1–6 and
// this one (2024), with 400 futures (200 give this seed's ratios to within
// 0.001): against the formula 0.52–0.59 at ρ 0.7, 0.44–0.51 at
// 0.8, 0.29–0.39 at 0.9; against the EMA 0.59–0.65; P90 coverage
// 0.886–0.915. So on a queue this simple, 0.3 × the formula's MAE is out of
// reach at ρ 0.7–0.8 for any forecast, and 0.75 × the EMA's leaves it about
// 0.1 of room.
func TestExactModelFloorOfTheMAERatiosInMMk(t *testing.T) {
	const k, meanS = 4, 20.0
	cases := map[string]struct {
		rho float64
		// paperFloorAbove: the conditional median's MAE is more than
		// 0.3 × the paper formula's.
		paperFloorAbove bool
	}{
		"rho 0.7": {rho: 0.7, paperFloorAbove: true},
		"rho 0.8": {rho: 0.8, paperFloorAbove: true},
		"rho 0.9": {rho: 0.9},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := exactMM4(t, tc.rho, meanS, 10000, 2024)
			records := runOracle(t, spec, mustNew(t, WithSamples(200)))
			paper := paperWait(k, tc.rho, meanS, 1)
			var n, covered int
			var maeP50, maeEMA, maePaper float64
			for _, r := range records[500:] {
				w := r.admitted - r.arrival
				if w <= 0 {
					continue // admitted on arrival: never pending at an estimate
				}
				n++
				maeP50 += math.Abs(r.forecast.P50Seconds - w)
				maeEMA += math.Abs(r.ema - w)
				maePaper += math.Abs(paper - w)
				if w <= r.forecast.P90Seconds {
					covered++
				}
			}
			toEMA, toPaper, coverage := maeP50/maeEMA, maeP50/maePaper, float64(covered)/float64(n)
			t.Logf("ρ %.1f: %d waited; conditional median's MAE ÷ EMA's %.3f, ÷ paper formula's %.3f; P90 coverage %.3f",
				tc.rho, n, toEMA, toPaper, coverage)
			if n < 2000 {
				t.Fatalf("only %d workloads waited", n)
			}
			if coverage < 0.87 || coverage > 0.93 {
				t.Errorf("P90 coverage %.3f not in [0.87, 0.93]: the roll is not drawing from the exact model", coverage)
			}
			if toEMA < 0.5 || toEMA > 0.75 {
				t.Errorf("conditional median's MAE ÷ EMA's = %.3f, want within [0.5, 0.75]", toEMA)
			}
			if tc.paperFloorAbove && toPaper <= 0.3 {
				t.Errorf("conditional median's MAE ÷ paper formula's = %.3f, want above 0.3", toPaper)
			}
		})
	}
}

// TestExactModelFloorOfTheRelativeErrorInTransientOverload measures the
// least mean relative error (|forecast − wait| / wait, over the waits of
// at least 2 E[S], as issue 12's target for transient overload counts it)
// that any forecast can reach on M/M/4 under FIFO loaded at ρ 1.2 from
// empty, and the roll's own on the same workloads.
//
// A workload that finds all k = 4 servers busy and q − 1 workloads queued
// ahead waits for q completions, each after an exponential time of rate
// λ = k / E[S]: its wait W is Erlang(q, λ), exactly. Scored only when
// W ≥ c, the forecast p that minimizes E[|p − W| / W; W ≥ c] is the median
// of the density f(w)/w on [c, ∞); for q ≥ 2, f(w)/w is proportional to the
// Erlang(q − 1, λ) density, so p solves F_{q−1}(p) = (1 + F_{q−1}(c)) / 2,
// with F_n the Erlang(n, λ) distribution function (q = 1: W ≥ 2 E[S] has
// probability e^{−8} here; such a workload is predicted at c). Each
// workload's p is computed from its state, and the mean relative error of
// those p over the workloads that waited at least c is the floor.
//
// Ten runs of 600 workloads (seeds 1–10), the first 50 of each discarded
// as TestTransientOverload does, E[S] = 20 s, c = 40 s: 5 304 such waits
// (365 s on average in TestTransientOverload's run), the floor 0.111, the
// roll's mean 0.115 and its P50 0.115. The test fails if the roll's mean
// is more than 1.1 × the floor: on a queue the roll models exactly, it is
// as good as a forecast can be. The floor falls as waits grow (the
// relative spread of an Erlang(q) wait is 1/√q), so it says nothing of
// a queue whose long waits are a few services deep.
func TestExactModelFloorOfTheRelativeErrorInTransientOverload(t *testing.T) {
	const k, meanS, rho = 4, 20.0, 1.2
	const floorWait = 2 * meanS
	rate := k / meanS
	var n int
	var best, forecastMean, forecastP50 float64
	for seed := uint64(1); seed <= 10; seed++ {
		spec := exactMM4(t, rho, meanS, 600, seed)
		for _, r := range runOracle(t, spec, mustNew(t))[50:] {
			w := r.admitted - r.arrival
			if w < floorWait {
				continue
			}
			if r.fitted {
				t.Fatalf("a workload that fitted on arrival waited %.1fs", w)
			}
			p := floorWait
			if r.queued >= 2 {
				p = erlangQuantile(r.queued-1, rate, (1+erlangCDF(r.queued-1, rate, floorWait))/2)
			}
			n++
			best += math.Abs(p-w) / w
			forecastMean += math.Abs(r.forecast.ExpectedWaitSeconds-w) / w
			forecastP50 += math.Abs(r.forecast.P50Seconds-w) / w
		}
	}
	best, forecastMean, forecastP50 = best/float64(n), forecastMean/float64(n), forecastP50/float64(n)
	t.Logf("%d waits ≥ %.0fs: least relative error %.3f; the roll's mean %.3f, its P50 %.3f", n, floorWait, best, forecastMean, forecastP50)
	if n < 1000 {
		t.Fatalf("only %d waits of at least %.0fs", n, floorWait)
	}
	if best > forecastMean || best > forecastP50 {
		t.Errorf("the floor %.3f is above the roll's %.3f / %.3f: it is not the least", best, forecastMean, forecastP50)
	}
	if forecastMean > 1.1*best {
		t.Errorf("the roll's relative error %.3f > 1.1 × the floor %.3f", forecastMean, best)
	}
}

// TestBestEffortFIFOForecastsOfLargeWorkloadsNeedSamePriorityArrivals: in
// a BestEffortFIFO queue of small (500m) and large (2 CPU) workloads of
// one priority, 4 CPU, E[S] = 20 s, 80 % small, a large head that does not
// fit is passed by every small workload that does — those pending and
// those yet to arrive, which take each 500m as it frees and keep the large
// one waiting for four to free at once. Forecast without future arrivals,
// the roll lets the large workload in once the small ones pending now are
// through: it is short. Given the arrivals of both shapes at their rates
// (of the same priority, so that they pass only a workload that does not
// fit), it is not.
//
// 6 000 workloads (the first 300 discarded), scored when they waited:
// without the arrivals the large workloads' mean forecast is 29 % short
// at ρ 0.75 and 32 % at ρ 0.9 (P50 coverage 0.34 and 0.21; 25 % and 0.41
// at ρ 0.6); with them −2 % and +1 % (0.49, 0.50), the small workloads
// within 4 % either way.
func TestBestEffortFIFOForecastsOfLargeWorkloadsNeedSamePriorityArrivals(t *testing.T) {
	small, large := cpu(500), cpu(2000)
	const meanS = 20.0
	for _, rho := range []float64{0.75, 0.9} {
		// A workload needs 0.8 CPU on average for E[S].
		lambda := rho * 4 / (0.8 * meanS)
		spec := oracleSpec{
			capacity:    cpu(4000),
			classes:     []oracleClass{{demand: small, weight: 0.8}, {demand: large, weight: 0.2}},
			arrivalRate: lambda,
			service:     exponentialService(meanS),
			workloads:   6000,
			seed:        7,
			policy:      BestEffortFIFO,
			model:       func([]float64) ServiceModel { return mustExponential(t, meanS) },
		}
		without := scoreByClass(runOracle(t, spec, mustNew(t))[300:])
		spec.arrivals = []Arrival{
			{RatePerSecond: 0.8 * lambda, Options: []capacity.Quantities{small}},
			{RatePerSecond: 0.2 * lambda, Options: []capacity.Quantities{large}},
		}
		with := scoreByClass(runOracle(t, spec, mustNew(t))[300:])
		for c, class := range []string{"small", "large"} {
			checkLastSideUnbiased(t, rho, class, []namedScore{{"without arrivals", without[c]}, {"with arrivals", with[c]}})
		}
		if rel := without[1].bias / without[1].wait; rel > -0.15 {
			t.Errorf("ρ %.2f, large, without arrivals: bias %+.1f %% of the mean wait, want below −15 %% (the roll misses the small workloads that pass)", rho, 100*rel)
		}
	}
}
