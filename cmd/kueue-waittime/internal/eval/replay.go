package eval

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/calibration"
)

// The calibration replay answers "would another calibrator have covered
// better?" from the outcomes of a run already made: each ClusterQueue's
// P50 and P90 calibrators are replayed on its scored workloads in the
// order the run saw them, a prediction at each first estimate (the raw
// quantiles the roll gave then) and an outcome at each admission, and the
// coverage of what each variant would have published is set beside the
// run's own.

// calibrationVariant is one way of calibrating a ClusterQueue's P50 and
// P90.
type calibrationVariant struct {
	name string
	// step is adaptive conformal inference's γ.
	step float64
	// early counts each miss when the wait passes the published quantile
	// (calibration.Quantile.MissedEarly) instead of at the admission.
	early bool
}

// replayVariants are the variants WriteCalibrationReplay compares; the
// first is the estimator's rule.
var replayVariants = []calibrationVariant{
	{name: "at admission, γ 0.01", step: 0.01},
	{name: "at admission, γ 0.05", step: 0.05},
	{name: "misses early, γ 0.01", step: 0.01, early: true},
	{name: "misses early, γ 0.05", step: 0.05, early: true},
}

// WriteCalibrationReplay replays the calibration variants on the
// per-workload CSVs of dir (written with the replay columns) and writes, per
// scenario, level and ClusterQueue with at least minTargetScored scored
// workloads, the P50 and P90 coverage of the run and of each variant, and
// how many of these slices each meets the targets in.
func WriteCalibrationReplay(w io.Writer, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*"+csvSuffix))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("%s holds no *%s: run eval with --out %s first", dir, csvSuffix, dir)
	}
	slices.Sort(files)
	fmt.Fprintln(w, "### Calibration replayed")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Written by `kueue-waittime eval --replay-calibration %s`. Each ClusterQueue's own P50 and P90 calibrators replayed on its scored workloads per replica, in the run's order; \"run\" is what the run published (its calibrators also fall back to the pooled ones before a ClusterQueue has 20 scores, and use per-priority ones: the replay does neither). An early miss is counted the moment the wait passes the published quantile.\n", dir)
	fmt.Fprintln(w)
	header := "| scenario | level | ClusterQueue | scored | P50 run |"
	rule := "|---|---|---|---|---|"
	for _, v := range replayVariants {
		header += " P50 " + v.name + " |"
		rule += "---|"
	}
	header += " P90 run |"
	rule += "---|"
	for _, v := range replayVariants {
		header += " P90 " + v.name + " |"
		rule += "---|"
	}
	fmt.Fprintln(w, header)
	fmt.Fprintln(w, rule)
	met50 := make([]int, len(replayVariants)+1)
	met90 := make([]int, len(replayVariants)+1)
	slicesSeen := 0
	for _, file := range files {
		samples, err := readScoredCSV(file)
		if err != nil {
			return err
		}
		name := strings.TrimSuffix(filepath.Base(file), csvSuffix)
		rows, err := replayScenario(samples)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		for _, r := range rows {
			slicesSeen++
			line := fmt.Sprintf("| %s | %.2f | %s | %d |", name, r.level, r.queue, r.scored)
			for i, c := range r.p50 {
				line += fmt.Sprintf(" %.3f |", c)
				if c >= p50CoverageLow && c <= p50CoverageHigh {
					met50[i]++
				}
			}
			for i, c := range r.p90 {
				line += fmt.Sprintf(" %.3f |", c)
				if c >= p90CoverageLow && c <= p90CoverageHigh {
					met90[i]++
				}
			}
			fmt.Fprintln(w, line)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Of %d slices, the P50 within 0.45–0.55: run %d", slicesSeen, met50[0])
	for i, v := range replayVariants {
		fmt.Fprintf(w, ", %s %d", v.name, met50[i+1])
	}
	fmt.Fprintf(w, "; the P90 within 0.85–0.95: run %d", met90[0])
	for i, v := range replayVariants {
		fmt.Fprintf(w, ", %s %d", v.name, met90[i+1])
	}
	fmt.Fprintln(w, ".")
	return nil
}

// replayRow is the coverage of one slice: the run's first, then each
// variant's.
type replayRow struct {
	level    float64
	queue    string
	scored   int
	p50, p90 []float64
}

// replayScenario replays every variant on one scenario's samples, by
// level and ClusterQueue (the replicas of a level pooled), for slices of
// at least minTargetScored scored workloads with a forecast.
func replayScenario(samples []ScoredSample) ([]replayRow, error) {
	type sliceKey struct {
		level float64
		queue string
	}
	type groupKey struct {
		slice   sliceKey
		seed    int
		replica int
	}
	groups := map[groupKey][]ScoredSample{}
	for _, s := range samples {
		if !s.Score.Forecast.OK {
			continue
		}
		if !s.Replayable || !s.Score.RawP50.OK || !s.Score.RawP90.OK || !(s.Score.CalibrationScale > 0) {
			return nil, errors.New("a scored workload without the replay columns (a CSV written before them): run the scenario again")
		}
		k := groupKey{slice: sliceKey{s.Level, s.Queue}, seed: s.Seed, replica: s.Batch / batchesPerReplica}
		groups[k] = append(groups[k], s)
	}
	type tally struct{ n, hit50, hit90 []int }
	tallies := map[sliceKey]*tally{}
	for k, g := range groups {
		t := tallies[k.slice]
		if t == nil {
			t = &tally{n: make([]int, 1), hit50: make([]int, len(replayVariants)+1), hit90: make([]int, len(replayVariants)+1)}
			tallies[k.slice] = t
		}
		t.n[0] += len(g)
		for _, s := range g {
			if s.Score.P50.OK && s.Score.Actual <= s.Score.P50.Wait {
				t.hit50[0]++
			}
			if s.Score.P90.OK && s.Score.Actual <= s.Score.P90.Wait {
				t.hit90[0]++
			}
		}
		for i, v := range replayVariants {
			h50, h90 := replayCalibration(g, v)
			t.hit50[i+1] += h50
			t.hit90[i+1] += h90
		}
	}
	var rows []replayRow
	for _, k := range slices.SortedFunc(maps.Keys(tallies), func(a, b sliceKey) int {
		return cmp.Or(cmp.Compare(a.level, b.level), cmp.Compare(a.queue, b.queue))
	}) {
		t := tallies[k]
		if t.n[0] < minTargetScored {
			continue
		}
		r := replayRow{level: k.level, queue: k.queue, scored: t.n[0]}
		for i := range t.hit50 {
			r.p50 = append(r.p50, float64(t.hit50[i])/float64(t.n[0]))
			r.p90 = append(r.p90, float64(t.hit90[i])/float64(t.n[0]))
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// replayEvent is one moment of the replay: a prediction (the sample's
// first estimate), an admission, or the moment a wait passes a published
// quantile.
type replayEvent struct {
	at     time.Time
	kind   int
	sample int
}

// Kinds of replayEvent, in the order of equal times: what is known at an
// instant is known to a prediction made at it.
const (
	replayAdmission = iota
	replayPast50
	replayPast90
	replayPrediction
)

type replayEvents []replayEvent

func (h replayEvents) Len() int { return len(h) }
func (h replayEvents) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].kind < h[j].kind
}
func (h replayEvents) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *replayEvents) Push(x any)   { *h = append(*h, x.(replayEvent)) }
func (h *replayEvents) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// replayCalibration replays variant v's P50 and P90 calibrators on the
// samples of one ClusterQueue of one replica and returns how many of them
// the quantiles it would have published covered.
func replayCalibration(samples []ScoredSample, v calibrationVariant) (hit50, hit90 int) {
	cal50, _ := calibration.New(0.5, calibration.Options{Step: v.step})
	cal90, _ := calibration.New(0.9, calibration.Options{Step: v.step})
	type state struct {
		pub50, pub90       float64
		missed50, missed90 bool
	}
	states := make([]state, len(samples))
	events := make(replayEvents, 0, 4*len(samples))
	for i, s := range samples {
		events = append(events, replayEvent{at: s.Score.EstimatedAt, kind: replayPrediction, sample: i})
	}
	heap.Init(&events)
	for events.Len() > 0 {
		ev := heap.Pop(&events).(replayEvent)
		s := &samples[ev.sample].Score
		st := &states[ev.sample]
		raw50, raw90, actual, eps := s.RawP50.Wait.Seconds(), s.RawP90.Wait.Seconds(), s.Actual.Seconds(), s.CalibrationScale
		switch ev.kind {
		case replayPrediction:
			q50, _ := cal50.Adjustment()
			q90, _ := cal90.Adjustment()
			st.pub50 = calibration.Adjust(raw50, q50, eps)
			st.pub90 = max(calibration.Adjust(raw90, q90, eps), st.pub50)
			if actual <= st.pub50 {
				hit50++
			}
			if actual <= st.pub90 {
				hit90++
			}
			heap.Push(&events, replayEvent{at: s.EstimatedAt.Add(s.Actual), kind: replayAdmission, sample: ev.sample})
			if v.early {
				if actual > st.pub50 {
					heap.Push(&events, replayEvent{at: s.EstimatedAt.Add(seconds(st.pub50)), kind: replayPast50, sample: ev.sample})
				}
				if actual > st.pub90 {
					heap.Push(&events, replayEvent{at: s.EstimatedAt.Add(seconds(st.pub90)), kind: replayPast90, sample: ev.sample})
				}
			}
		case replayPast50:
			st.missed50 = cal50.MissedEarly()
		case replayPast90:
			st.missed90 = cal90.MissedEarly()
		case replayAdmission:
			if st.missed50 {
				cal50.ObserveScore(ev.at, raw50, actual, eps)
			} else {
				cal50.Observe(ev.at, raw50, st.pub50, actual, eps)
			}
			if st.missed90 {
				cal90.ObserveScore(ev.at, raw90, actual, eps)
			} else {
				cal90.Observe(ev.at, raw90, st.pub90, actual, eps)
			}
		}
	}
	return hit50, hit90
}

// seconds is a duration of s seconds, capped so that a huge quantile
// cannot overflow.
func seconds(s float64) time.Duration {
	return time.Duration(min(s, math.MaxInt64/2/float64(time.Second)) * float64(time.Second))
}
