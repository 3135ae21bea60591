package report

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"sigs.k8s.io/kueue/pkg/scheduler/waittime/estimator"
)

// phaseSamples are n scored workloads of one replica's ClusterQueue, one
// first estimate a second, given in reverse order of those estimates; each
// waits 10 s, and the i-th (in estimate order) has raw quantiles of 10 s
// (covering) when rawCovers(i) and 5 s otherwise, published ones of 10 s
// when publishedCovers(i) and 5 s otherwise.
func phaseSamples(level float64, seed int, queue string, n int, rawCovers, publishedCovers func(int) bool) []ScoredSample {
	pred := func(covers bool) estimator.Prediction {
		if covers {
			return estimator.Prediction{Wait: 10 * time.Second, OK: true}
		}
		return estimator.Prediction{Wait: 5 * time.Second, OK: true}
	}
	out := make([]ScoredSample, 0, n)
	for i := n - 1; i >= 0; i-- {
		out = append(out, ScoredSample{Level: level, Seed: seed, Queue: queue, Replayable: true, Score: estimator.Score{
			EstimatedAt: reportT0.Add(time.Duration(i) * time.Second), Actual: 10 * time.Second,
			P50: pred(publishedCovers(i)), P90: pred(publishedCovers(i)), RawP50: pred(rawCovers(i)), RawP90: pred(rawCovers(i)),
		}})
	}
	return out
}

func TestCoverageOverTheRunCountsEachPartOfEveryReplicasClusterQueue(t *testing.T) {
	never := func(int) bool { return false }
	always := func(int) bool { return true }
	cases := map[string]struct {
		samples []ScoredSample
		want    phaseCoverage
	}{
		"one ClusterQueue whose raw quantiles cover from its second half, the published ones in its first": {
			samples: phaseSamples(1, 0, "a", 20, func(i int) bool { return i >= 10 }, func(i int) bool { return i < 10 }),
			want: phaseCoverage{
				scored: [runPhases]int{4, 4, 4, 4, 4},
				raw50:  [runPhases]int{0, 0, 2, 4, 4}, published50: [runPhases]int{4, 4, 2, 0, 0},
				raw90: [runPhases]int{0, 0, 2, 4, 4}, published90: [runPhases]int{4, 4, 2, 0, 0},
			},
		},
		"the same ClusterQueue in two seeds is split per seed": {
			samples: slices.Concat(phaseSamples(1, 0, "a", 10, never, always), phaseSamples(1, 1, "a", 10, always, never)),
			want: phaseCoverage{
				scored: [runPhases]int{4, 4, 4, 4, 4},
				raw50:  [runPhases]int{2, 2, 2, 2, 2}, published50: [runPhases]int{2, 2, 2, 2, 2},
				raw90: [runPhases]int{2, 2, 2, 2, 2}, published90: [runPhases]int{2, 2, 2, 2, 2},
			},
		},
		"parts that do not divide evenly differ by at most one": {
			samples: phaseSamples(1, 0, "a", 12, always, never),
			want: phaseCoverage{
				scored: [runPhases]int{3, 2, 3, 2, 2},
				raw50:  [runPhases]int{3, 2, 3, 2, 2}, raw90: [runPhases]int{3, 2, 3, 2, 2},
			},
		},
		"a ClusterQueue with fewer than the minimum is left out": {
			samples: slices.Concat(phaseSamples(1, 0, "a", 10, always, always), phaseSamples(1, 0, "b", minPhaseGroup-1, always, always)),
			want: phaseCoverage{
				scored: [runPhases]int{2, 2, 2, 2, 2},
				raw50:  [runPhases]int{2, 2, 2, 2, 2}, published50: [runPhases]int{2, 2, 2, 2, 2},
				raw90: [runPhases]int{2, 2, 2, 2, 2}, published90: [runPhases]int{2, 2, 2, 2, 2},
			},
		},
		"workloads read without the raw quantiles are left out": {
			samples: func() []ScoredSample {
				ss := phaseSamples(1, 0, "a", 10, always, always)
				for i := range ss {
					ss[i].Replayable = false
				}
				return ss
			}(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := coverageOverTheRun(tc.samples)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(phaseCoverage{})); diff != "" {
				t.Errorf("coverage (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriteCoverageOverTheRunWritesEveryScenarioWithScoresAndAllOfThem(t *testing.T) {
	covers := func(i int) bool { return i%2 == 0 }
	var b strings.Builder
	writeCoverageOverTheRun(&b, []scenarioPhases{
		{name: "z", coverage: coverageOverTheRun(phaseSamples(1, 0, "a", 10, covers, func(int) bool { return true }))},
		{name: "empty"},
		{name: "a", coverage: coverageOverTheRun(phaseSamples(1, 0, "a", 10, func(int) bool { return false }, covers))},
	})
	out := b.String()
	expectLines(t, "coverage over the run", out,
		"### Coverage over each run",
		"| scenario | scored | P50, part 1 | P50, part 2 | P50, part 3 | P50, part 4 | P50, part 5 | P90, part 1 |",
		"| a | 10 | 0.00 → 0.50 | 0.00 → 0.50 | 0.00 → 0.50 | 0.00 → 0.50 | 0.00 → 0.50 | 0.00 → 0.50 |",
		"| z | 10 | 0.50 → 1.00 | 0.50 → 1.00 |",
		"| **all** | 20 | 0.25 → 0.75 |")
	if strings.Contains(out, "| empty |") {
		t.Errorf("a scenario without scores has a row:\n%s", out)
	}
	if strings.Index(out, "| a |") > strings.Index(out, "| z |") {
		t.Errorf("scenarios out of order:\n%s", out)
	}
	b.Reset()
	writeCoverageOverTheRun(&b, []scenarioPhases{{name: "empty"}})
	if b.Len() != 0 {
		t.Errorf("wrote a section without scores:\n%s", b.String())
	}
}
