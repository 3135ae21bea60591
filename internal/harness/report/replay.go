package report

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
	"sigs.k8s.io/kueue/pkg/scheduler/waittime/engine"
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
	{name: "γ 0.01", step: 0.01},
	{name: "γ 0.02", step: 0.02},
	{name: "γ 0.05", step: 0.05},
	{name: "γ 0.1", step: 0.1},
	{name: "γ 0.2", step: 0.2},
	{name: "γ 0.01, early", step: 0.01, early: true},
	{name: "γ 0.05, early", step: 0.05, early: true},
	{name: "γ 0.1, early", step: 0.1, early: true},
}

// WriteCalibrationReplay replays the calibration variants on the
// per-workload CSVs of dir (written with the replay columns) and writes,
// for the run and each variant, how many slices (scenario, level and
// ClusterQueue with at least minTargetScored scored workloads) meet the
// coverage targets, the slices' mean distance to the nominal coverage and
// the coverage pooled over every scored workload; then each slice's P50
// and P90 coverage.
func WriteCalibrationReplay(w io.Writer, dir string) error {
	files, err := scoredCSVs(dir)
	if err != nil {
		return err
	}
	type named struct {
		scenario string
		row      replayRow
	}
	var all []named
	for _, file := range files {
		samples, err := readScoredCSV(file)
		if err != nil {
			return err
		}
		rows, err := replayScenario(samples)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		for _, r := range rows {
			all = append(all, named{strings.TrimSuffix(filepath.Base(file), csvSuffix), r})
		}
	}
	columns := []string{"run"}
	for _, v := range replayVariants {
		columns = append(columns, v.name)
	}
	fmt.Fprintln(w, "### Calibration replayed")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Written by `kueue-waittime eval --replay-calibration %s`. The estimator's calibrators (a pooled pair, a pair per ClusterQueue, one per priority of it; see replayCalibration) replayed on each scenario's scored workloads in the run's order, a prediction at each first estimate from the roll's raw quantiles and an outcome at each admission; \"run\" is what the run published. \"γ 0.01\" is the estimator's rule when these CSVs were written: where it differs from \"run\", the replay is off (the CSV keeps milliseconds; the run's calibrators count priorities by value, the replay by class). \"early\" counts each miss the moment the wait passes the quantile each calibrator would have published (the estimator could count it at its next refresh at the earliest) instead of at the admission. The calibration changes nothing the scheduler does, so each variant is what the estimator would have published on the same run.\n", dir)
	fmt.Fprintln(w)
	n := len(columns)
	met50, met90 := make([]int, n), make([]int, n)
	dev50, dev90 := make([]float64, n), make([]float64, n)
	// ratio50 and ratio90 sum each slice's pinball loss over γ 0.01's.
	ratio50, ratio90 := make([]float64, n), make([]float64, n)
	hit50, hit90 := make([]int, n), make([]int, n)
	scored, slicesJudged := 0, 0
	for _, x := range all {
		scored += x.row.scored
		for i := range n {
			hit50[i] += x.row.hit50[i]
			hit90[i] += x.row.hit90[i]
		}
		if x.row.scored < minTargetScored {
			continue
		}
		slicesJudged++
		for i := range n {
			c50, c90 := x.row.coverage(i)
			if c50 >= p50CoverageLow && c50 <= p50CoverageHigh {
				met50[i]++
			}
			if c90 >= p90CoverageLow && c90 <= p90CoverageHigh {
				met90[i]++
			}
			dev50[i] += math.Abs(c50 - 0.5)
			dev90[i] += math.Abs(c90 - 0.9)
			ratio50[i] += x.row.loss50[i] / x.row.loss50[1]
			ratio90[i] += x.row.loss90[i] / x.row.loss90[1]
		}
	}
	fmt.Fprintf(w, "Over %d slices with at least %d scored workloads (%d scored in all):\n\n", slicesJudged, minTargetScored, scored)
	fmt.Fprintln(w, "| calibration | P50 within 0.45–0.55 | P90 within 0.85–0.95 | mean \\|P50 coverage − 0.5\\| | mean \\|P90 coverage − 0.9\\| | P50 coverage, all | P90 coverage, all | P50 pinball ÷ γ 0.01's | P90 pinball ÷ γ 0.01's |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	judged := float64(max(slicesJudged, 1))
	for i, c := range columns {
		fmt.Fprintf(w, "| %s | %d | %d | %.4f | %.4f | %.3f | %.3f | %.3f | %.3f |\n", c, met50[i], met90[i],
			dev50[i]/judged, dev90[i]/judged, float64(hit50[i])/float64(max(scored, 1)), float64(hit90[i])/float64(max(scored, 1)),
			ratio50[i]/judged, ratio90[i]/judged)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The pinball loss (p·(y − q) for a wait y at or past the quantile q, (1 − p)·(q − y) below it) rewards a quantile both calibrated and sharp: a P90 that covers by being long scores worse. Its columns average each slice's loss over the loss of γ 0.01 on the same workloads.")
	for q, label := range []string{"P50", "P90"} {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "%s coverage per slice:\n\n", label)
		fmt.Fprintf(w, "| scenario | level | ClusterQueue | scored | %s |\n", strings.Join(columns, " | "))
		fmt.Fprintf(w, "|---|---|---|---|%s\n", strings.Repeat("---|", n))
		for _, x := range all {
			if x.row.scored < minTargetScored {
				continue
			}
			fmt.Fprintf(w, "| %s | %.2f | %s | %d |", x.scenario, x.row.level, x.row.queue, x.row.scored)
			for i := range n {
				c50, c90 := x.row.coverage(i)
				fmt.Fprintf(w, " %.3f |", []float64{c50, c90}[q])
			}
			fmt.Fprintln(w)
		}
	}
	return nil
}

// replayRow is one slice (a level and ClusterQueue of a scenario, its
// replicas pooled): how many were scored and how many the P50 and P90
// covered, the run's first, then each variant's.
type replayRow struct {
	level        float64
	queue        string
	scored       int
	hit50, hit90 []int
	// loss50 and loss90 are the summed pinball losses of the P50 and
	// P90 (seconds).
	loss50, loss90 []float64
}

// coverage is the P50 and P90 coverage of column i (0: the run).
func (r replayRow) coverage(i int) (p50, p90 float64) {
	return float64(r.hit50[i]) / float64(r.scored), float64(r.hit90[i]) / float64(r.scored)
}

// replayScenario replays every variant on one scenario's samples and
// tallies them by level and ClusterQueue (the replicas of a level
// pooled), counting the scored workloads with a forecast.
func replayScenario(samples []ScoredSample) ([]replayRow, error) {
	var scored []ScoredSample
	for _, s := range samples {
		if !s.Score.Forecast.OK {
			continue
		}
		if !s.Replayable || !s.Score.RawP50.OK || !s.Score.RawP90.OK || !(s.Score.CalibrationScale > 0) {
			return nil, errors.New("a scored workload without the replay columns (a CSV written before them): run the scenario again")
		}
		scored = append(scored, s)
	}
	type sliceKey struct {
		level float64
		queue string
	}
	rows := map[sliceKey]*replayRow{}
	n := len(replayVariants) + 1
	published := make([][2][]float64, n)
	published[0][0], published[0][1] = make([]float64, len(scored)), make([]float64, len(scored))
	for j, s := range scored {
		published[0][0][j], published[0][1][j] = s.Score.P50.Wait.Seconds(), s.Score.P90.Wait.Seconds()
	}
	for i, v := range replayVariants {
		published[i+1][0], published[i+1][1] = replayCalibration(scored, v)
	}
	for j, s := range scored {
		k := sliceKey{s.Level, s.Queue}
		r := rows[k]
		if r == nil {
			r = &replayRow{level: k.level, queue: k.queue, hit50: make([]int, n), hit90: make([]int, n), loss50: make([]float64, n), loss90: make([]float64, n)}
			rows[k] = r
		}
		r.scored++
		actual := s.Score.Actual.Seconds()
		for i := range n {
			p50, p90 := published[i][0][j], published[i][1][j]
			if actual <= p50 {
				r.hit50[i]++
			}
			if actual <= p90 {
				r.hit90[i]++
			}
			r.loss50[i] += pinball(0.5, p50, actual)
			r.loss90[i] += pinball(0.9, p90, actual)
		}
	}
	var out []replayRow
	for _, k := range slices.SortedFunc(maps.Keys(rows), func(a, b sliceKey) int {
		return cmp.Or(cmp.Compare(a.level, b.level), cmp.Compare(a.queue, b.queue))
	}) {
		out = append(out, *rows[k])
	}
	return out, nil
}

// calibratorPair is the P50 and P90 calibrators of one ClusterQueue, one
// priority of it, or the pool.
type calibratorPair struct{ p50, p90 *calibration.Quantile }

func newCalibratorPair(step float64) calibratorPair {
	// Valid constants: New cannot fail with them.
	p50, _ := calibration.New(0.5, calibration.Options{Step: step})
	p90, _ := calibration.New(0.9, calibration.Options{Step: step})
	return calibratorPair{p50, p90}
}

// adjustment is the pair's adjustments, 0 for one without enough
// scores, and whether both have enough to act.
func (c calibratorPair) adjustment() (q50, q90 float64, applied bool) {
	q50, ok50 := c.p50.Adjustment()
	q90, ok90 := c.p90.Adjustment()
	return q50, q90, ok50 && ok90
}

// replayFeed is one calibrator's view of one prediction: the quantile it
// would have published, and whether its miss was counted early.
type replayFeed struct {
	cal      *calibration.Quantile
	raw, pub float64
	missed   bool
}

// replayEvent is one moment of the replay: a prediction (the sample's
// first estimate), an admission, or the moment a wait passes the quantile
// one calibrator would have published (feed).
type replayEvent struct {
	at     time.Time
	kind   int
	sample int
	feed   int
}

// Kinds of replayEvent, in the order of equal times: what is known at an
// instant is known to a prediction made at it.
const (
	replayAdmission = iota
	replayPast
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

// replayCalibration replays variant v on the scored workloads of one
// scenario (one manager), as the estimator calibrates: a pooled pair of
// calibrators fed by every ClusterQueue, a pair per ClusterQueue (of each
// replica) and one per priority of it. A ClusterQueue publishes with its
// own pair once both have enough scores, else with the pool's once these
// have, else raw; a priority's pair, once both have enough, replaces that
// for its workloads; and each pair is fed what it would have published
// (see the estimator's currentCalibration and observeCalibration). It
// returns, per sample, the P50 and the P90 it would have published
// (seconds).
func replayCalibration(samples []ScoredSample, v calibrationVariant) (pub50, pub90 []float64) {
	type queueKey struct {
		level         float64
		seed, replica int
		queue         string
	}
	type priorityKey struct {
		queue    queueKey
		priority string
	}
	pooled := newCalibratorPair(v.step)
	queues := map[queueKey]calibratorPair{}
	priorities := map[priorityKey]calibratorPair{}
	feeds := make([][6]replayFeed, len(samples))
	pub50, pub90 = make([]float64, len(samples)), make([]float64, len(samples))
	events := make(replayEvents, 0, 4*len(samples))
	for i, s := range samples {
		events = append(events, replayEvent{at: s.Score.EstimatedAt, kind: replayPrediction, sample: i})
	}
	heap.Init(&events)
	for events.Len() > 0 {
		ev := heap.Pop(&events).(replayEvent)
		s := &samples[ev.sample]
		sc := &s.Score
		raw50, raw90, actual, eps := sc.RawP50.Wait.Seconds(), sc.RawP90.Wait.Seconds(), sc.Actual.Seconds(), sc.CalibrationScale
		switch ev.kind {
		case replayPrediction:
			qk := queueKey{s.Level, s.Seed, s.Batch / batchesPerReplica, s.Queue}
			own, ok := queues[qk]
			if !ok {
				own = newCalibratorPair(v.step)
				queues[qk] = own
			}
			pk := priorityKey{qk, s.PriorityClass}
			prio, ok := priorities[pk]
			if !ok {
				prio = newCalibratorPair(v.step)
				priorities[pk] = prio
			}
			pool50, pool90, poolApplied := pooled.adjustment()
			own50, own90, ownApplied := own.adjustment()
			var cq50, cq90 float64
			switch {
			case ownApplied:
				cq50, cq90 = own50, own90
			case poolApplied:
				cq50, cq90 = pool50, pool90
			}
			pr50, pr90, prApplied := prio.adjustment()
			// As the estimator publishes: each adjusted, P90 never below P50.
			publish := func(q50, q90 float64) (float64, float64) {
				return engine.Calibration{Eps: eps}.PublishWith(engine.Adjustment{Q50: q50, Q90: q90}, raw50, raw90)
			}
			poolPub50, poolPub90 := publish(pool50, pool90)
			cqPub50, cqPub90 := publish(cq50, cq90)
			prPub50, prPub90 := publish(pr50, pr90)
			pub50[ev.sample], pub90[ev.sample] = cqPub50, cqPub90
			if prApplied {
				pub50[ev.sample], pub90[ev.sample] = prPub50, prPub90
			}
			feeds[ev.sample] = [6]replayFeed{
				{cal: pooled.p50, raw: raw50, pub: poolPub50}, {cal: pooled.p90, raw: raw90, pub: poolPub90},
				{cal: own.p50, raw: raw50, pub: cqPub50}, {cal: own.p90, raw: raw90, pub: cqPub90},
				{cal: prio.p50, raw: raw50, pub: prPub50}, {cal: prio.p90, raw: raw90, pub: prPub90},
			}
			heap.Push(&events, replayEvent{at: sc.EstimatedAt.Add(sc.Actual), kind: replayAdmission, sample: ev.sample})
			if v.early {
				for f, feed := range feeds[ev.sample] {
					if actual > feed.pub {
						heap.Push(&events, replayEvent{at: sc.EstimatedAt.Add(seconds(feed.pub)), kind: replayPast, sample: ev.sample, feed: f})
					}
				}
			}
		case replayPast:
			feed := &feeds[ev.sample][ev.feed]
			feed.missed = feed.cal.MissedEarly()
		case replayAdmission:
			for _, feed := range feeds[ev.sample] {
				if feed.missed {
					feed.cal.ObserveScore(ev.at, feed.raw, actual, eps)
				} else {
					feed.cal.Observe(ev.at, feed.raw, feed.pub, actual, eps)
				}
			}
		}
	}
	return pub50, pub90
}

// pinball is the pinball loss of a level-p quantile q for the outcome y:
// p·(y − q) when y ≥ q, (1 − p)·(q − y) otherwise. Its mean is least for
// the true quantile, so it rewards a quantile both calibrated and sharp.
func pinball(p, q, y float64) float64 {
	if y >= q {
		return p * (y - q)
	}
	return (1 - p) * (q - y)
}

// seconds is a duration of s seconds, capped so that a huge quantile
// cannot overflow.
func seconds(s float64) time.Duration {
	return time.Duration(min(s, math.MaxInt64/2/float64(time.Second)) * float64(time.Second))
}
