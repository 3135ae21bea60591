package dispatcheval

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func TestSimulate(t *testing.T) {
	one := []Worker{{Name: "a", CPUMilli: 3000}}
	two := []Worker{{Name: "a", CPUMilli: 2000}, {Name: "b", CPUMilli: 2000}}
	// Two Jobs, each filling a worker of two.
	twoWorkerFillers := Plan{Jobs: []Arrival{
		{Offset: 0, CPUMilli: 2000, Service: sec(10)},
		{Offset: sec(0.5), CPUMilli: 2000, Service: sec(10)},
	}}
	cases := map[string]struct {
		workers []Worker
		plan    Plan
		policy  simPolicy
		lag     float64
		want    simResult
	}{
		"a later Job that fits passes a head that does not (BestEffortFIFO)": {
			workers: one,
			plan: Plan{Jobs: []Arrival{
				{Offset: 0, CPUMilli: 2000, Service: sec(10)},
				{Offset: sec(1), CPUMilli: 2000, Service: sec(1)},
				{Offset: sec(2), CPUMilli: 1000, Service: sec(5)},
			}},
			policy: simRace,
			want:   simResult{Waits: []float64{0, 9, 0}},
		},
		"the race admits a Job where it fits first": {
			workers: two,
			plan: Plan{
				Background: map[string][]Arrival{
					"a": {{Offset: 0, CPUMilli: 2000, Service: sec(5)}},
					"b": {{Offset: 0, CPUMilli: 2000, Service: sec(3)}},
				},
				Jobs: []Arrival{{Offset: sec(1), CPUMilli: 2000, Service: sec(1)}},
			},
			policy: simRace,
			want:   simResult{Waits: []float64{2}},
		},
		"with a removal lag, a copy admitted on the second worker holds it meanwhile": {
			workers: two,
			plan:    twoWorkerFillers,
			policy:  simRace,
			lag:     1,
			// The first Job takes both workers until 1 s; the second waits
			// for the copy on b to be removed.
			want: simResult{Waits: []float64{0, 0.5}, HeldTwice: 1},
		},
		"without a lag no copy is admitted twice": {
			workers: two,
			plan:    twoWorkerFillers,
			policy:  simRace,
			want:    simResult{Waits: []float64{0, 0}},
		},
		"the clairvoyant dispatcher sees the queue ahead of a Job on each worker": {
			workers: two,
			plan: Plan{
				Background: map[string][]Arrival{
					// a: busy until 5. b: free at 3, but a 2-CPU workload
					// queued before the Job takes it until 7.
					"a": {{Offset: 0, CPUMilli: 2000, Service: sec(5)}},
					"b": {{Offset: 0, CPUMilli: 2000, Service: sec(3)}, {Offset: sec(0.5), CPUMilli: 2000, Service: sec(4)}},
				},
				Jobs: []Arrival{{Offset: sec(1), CPUMilli: 2000, Service: sec(1)}},
			},
			policy: simClairvoyant,
			want:   simResult{Waits: []float64{4}},
		},
		"the clairvoyant dispatcher breaks a tie by the most free quota": {
			workers: []Worker{{Name: "a", CPUMilli: 2000}, {Name: "b", CPUMilli: 4000}},
			plan: Plan{
				Jobs: []Arrival{
					{Offset: 0, CPUMilli: 1000, Service: sec(10)},
					// Every Job starts at once wherever it goes: the ties are
					// broken by the free quota.
					{Offset: sec(1), CPUMilli: 2000, Service: sec(10)},
					{Offset: sec(2), CPUMilli: 2000, Service: sec(10)},
				},
			},
			policy: simClairvoyant,
			// The first to b (4 free against 2), the second to b (3
			// against 2), the third to a, the only one with 2 CPUs left.
			want: simResult{Waits: []float64{0, 0, 0}},
		},
		"a Job larger than every worker is never admitted": {
			workers: two,
			plan:    Plan{Jobs: []Arrival{{Offset: 0, CPUMilli: 3000, Service: sec(1)}, {Offset: sec(1), CPUMilli: 1000, Service: sec(1)}}},
			policy:  simClairvoyant,
			want:    simResult{Waits: []float64{0}, Unadmitted: 1},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := simulate(Scenario{Workers: tc.workers}, tc.plan, tc.policy, tc.lag)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("simulate (-want +got):\n%s", diff)
			}
		})
	}
}

// headroomScenarios are the plans the headroom report replays: the
// evaluation's own, the same for longer, and three workers of different
// sizes and loads.
var headroomScenarios = []struct {
	name     string
	scenario Scenario
}{
	{"evaluation (2 workers, 30 Jobs)", evalScenario},
	{"evaluation, 300 Jobs", func() Scenario { s := evalScenario; s.Jobs = 300; return s }()},
	{"3 workers, 300 Jobs of 1–4 CPUs", Scenario{
		Workers: []Worker{
			{Name: "small", CPUMilli: 4000, BackgroundRate: 0.2, BackgroundCPUMilli: 1000, BackgroundMeanService: 8 * time.Second},
			{Name: "medium", CPUMilli: 6000, BackgroundRate: 0.4, BackgroundCPUMilli: 1000, BackgroundMeanService: 8 * time.Second},
			{Name: "large", CPUMilli: 8000, BackgroundRate: 0.8, BackgroundCPUMilli: 1000, BackgroundMeanService: 8 * time.Second},
		},
		Jobs: 300, JobRate: 0.4, Warmup: 15 * time.Second,
		JobCPUMilli: []int64{1000, 2000, 4000},
		MeanService: 5 * time.Second, MinService: time.Second, MaxService: 30 * time.Second,
	}},
}

// headroomSeeds is how many seeds (1…n) the report replays per scenario.
const headroomSeeds = 200

// headroomLag is the race's removal delay in the report, in seconds: about
// what MultiKueue takes to see a worker's admission and delete the other
// copies (the evaluation saw a third of the Jobs reserved on both workers).
const headroomLag = 1.0

// TestDispatchHeadroom replays headroomSeeds plans of each headroom
// scenario under the race (lag 0 and headroomLag) and the clairvoyant
// dispatcher, and writes the report to $DISPATCH_HEADROOM_OUT/headroom.md
// when set (make dispatch-headroom).
func TestDispatchHeadroom(t *testing.T) {
	var b strings.Builder
	b.WriteString("| scenario | offered CPU / quota | race, lag 0: mean / P90 (s) | race, lag 1 s: mean / P90 (s) | clairvoyant: mean / P90 (s) | clairvoyant / race (lag 1 s), mean | P90 | Jobs held on two workers (lag 1 s) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, hs := range headroomScenarios {
		var quota float64
		for _, w := range hs.scenario.Workers {
			quota += float64(w.CPUMilli) / 1000
		}
		var race0, race1, clair []WaitStats
		var offered []float64
		var meanRatios, p90Ratios []float64
		held, jobs := 0, 0
		for seed := uint64(1); seed <= headroomSeeds; seed++ {
			plan, err := hs.scenario.Draw(seed)
			if err != nil {
				t.Fatal(err)
			}
			offered = append(offered, plan.Offered()/quota)
			results := []simResult{
				simulate(hs.scenario, plan, simRace, 0),
				simulate(hs.scenario, plan, simRace, headroomLag),
				simulate(hs.scenario, plan, simClairvoyant, 0),
			}
			for _, r := range results {
				if r.Unadmitted != 0 || len(r.Waits) != len(plan.Jobs) {
					t.Fatalf("%s seed %d: %d of %d Jobs admitted", hs.name, seed, len(r.Waits), len(plan.Jobs))
				}
			}
			r0, r1, c := waitStats(results[0].Waits), waitStats(results[1].Waits), waitStats(results[2].Waits)
			race0, race1, clair = append(race0, r0), append(race1, r1), append(clair, c)
			if r1.Mean > 0 {
				meanRatios = append(meanRatios, c.Mean/r1.Mean)
			}
			if r1.P90 > 0 {
				p90Ratios = append(p90Ratios, c.P90/r1.P90)
			}
			held += results[1].HeldTwice
			jobs += len(plan.Jobs)
		}
		if len(meanRatios) < headroomSeeds/2 {
			t.Fatalf("%s: only %d of %d seeds had a race wait to compare with", hs.name, len(meanRatios), headroomSeeds)
		}
		pair := func(ws []WaitStats) string {
			var m, p []float64
			for _, w := range ws {
				m, p = append(m, w.Mean), append(p, w.P90)
			}
			return meanInterval(m).String() + " / " + meanInterval(p).String()
		}
		fmt.Fprintf(&b, "| %s | %.2f | %s | %s | %s | %s | %s | %d of %d |\n", hs.name, meanInterval(offered).Estimate,
			pair(race0), pair(race1), pair(clair), meanInterval(meanRatios), meanInterval(p90Ratios), held, jobs)
	}
	t.Log("\n" + b.String())
	out := os.Getenv("DISPATCH_HEADROOM_OUT")
	if out == "" {
		return
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	doc := fmt.Sprintf("# MultiKueue dispatch: the headroom over AllAtOnce\n\n"+
		"Command: `make dispatch-headroom` (`test/dispatcheval/headroom.go`; seeds 1–%d of each scenario's plans, drawn as `make eval-dispatch` draws them). "+
		"Idealized workers: one ClusterQueue of CPU quota each under BestEffortFIFO, no scheduler cycle, no API or MultiKueue latency. "+
		"*race* is AllAtOnce (and Incremental while it nominates every worker, as it does with up to three): a copy on every worker, the first admission wins, "+
		"the other copies removed after the lag (a copy admitted meanwhile holds its worker's quota until then). "+
		"*clairvoyant* sends each Job to the one worker where it would be admitted first, knowing every service time and every future background arrival: "+
		"no dispatcher that nominates one worker per Job from forecasts can choose better one Job at a time. "+
		"Intervals: Student-t 95%% over the seeds (the ratio: per-seed ratios on the same plan).\n\n%s", headroomSeeds, b.String())
	if err := os.WriteFile(filepath.Join(out, "headroom.md"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
}
