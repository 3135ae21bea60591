package report

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kueue/pkg/scheduler/waittime/estimator"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/scenario"
)

// stepSamples are n scored workloads of one ClusterQueue, one first
// estimate a second, whose exponential waits have mean 20 s and then, from
// the n/2-th, 200 s; the roll's raw P50 and P90 stay those of the first
// load.
func stepSamples(n int) []ScoredSample {
	rng := rand.New(rand.NewPCG(3, 5))
	t0 := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	pred := func(s float64) estimator.Prediction {
		return estimator.Prediction{Wait: time.Duration(s * float64(time.Second)), OK: true}
	}
	out := make([]ScoredSample, n)
	for i := range out {
		mean := 20.0
		if i >= n/2 {
			mean = 200
		}
		raw50, raw90 := 20*math.Ln2, 20*math.Log(10)
		out[i] = ScoredSample{Level: 1, Queue: "cq", Batch: i * batchesPerReplica / n, Replayable: true, Score: estimator.Score{
			EstimatedAt: t0.Add(time.Duration(i) * time.Second), Actual: time.Duration(rng.ExpFloat64() * mean * float64(time.Second)),
			Forecast: pred(20), P50: pred(raw50), P90: pred(raw90), RawP50: pred(raw50), RawP90: pred(raw90), CalibrationScale: 2,
		}}
	}
	return out
}

// Replayed on a load step, every variant covers better than the raw
// quantiles, and counting misses early brings the P50 closer to 0.5 than
// counting them at admission.
func TestReplayCalibrationOnALoadStep(t *testing.T) {
	samples := stepSamples(4000)
	raw50, raw90 := 0, 0
	for _, s := range samples {
		if s.Score.Actual <= s.Score.RawP50.Wait {
			raw50++
		}
		if s.Score.Actual <= s.Score.RawP90.Wait {
			raw90++
		}
	}
	cover := map[string][2]float64{}
	for _, v := range replayVariants {
		p50, p90 := replayCalibration(samples, v)
		h50, h90 := 0, 0
		for j, s := range samples {
			if s.Score.Actual.Seconds() <= p50[j] {
				h50++
			}
			if s.Score.Actual.Seconds() <= p90[j] {
				h90++
			}
		}
		cover[v.name] = [2]float64{float64(h50) / 4000, float64(h90) / 4000}
	}
	t.Logf("raw %.3f / %.3f, replayed %v", float64(raw50)/4000, float64(raw90)/4000, cover)
	for name, c := range cover {
		if math.Abs(c[0]-0.5) >= math.Abs(float64(raw50)/4000-0.5) || math.Abs(c[1]-0.9) >= math.Abs(float64(raw90)/4000-0.9) {
			t.Errorf("%s: coverage %v no closer to nominal than the raw quantiles'", name, c)
		}
	}
	for _, step := range []string{"0.01", "0.05", "0.1"} {
		atAdmission, early := cover["γ "+step], cover["γ "+step+", early"]
		if math.Abs(early[0]-0.5) >= math.Abs(atAdmission[0]-0.5) {
			t.Errorf("γ %s: P50 coverage with early misses %.3f, at admission %.3f: want the early one closer to 0.5", step, early[0], atAdmission[0])
		}
	}
}

// Each slice's "run" column is what the CSV says was published, and the
// replay reads what WriteCSV wrote; a CSV without the replay columns is
// refused.
func TestWriteCalibrationReplayReadsBackTheCSV(t *testing.T) {
	samples := stepSamples(200)
	r := &Report{Spec: &scenario.Spec{Name: "step"}, Samples: samples}
	dir := t.TempDir()
	writeRun(t, dir, r)
	back, err := readScoredCSV(filepath.Join(dir, "step"+csvSuffix))
	if err != nil {
		t.Fatal(err)
	}
	// The CSV keeps milliseconds.
	if diff := cmp.Diff(samples, back, cmp.Comparer(func(a, b time.Duration) bool { return (a - b).Abs() <= time.Millisecond })); diff != "" {
		t.Errorf("read back (-written,+read):\n%s", diff)
	}
	var out bytes.Buffer
	if err := WriteCalibrationReplay(&out, dir); err != nil {
		t.Fatal(err)
	}
	hit50 := 0
	for _, s := range samples {
		if s.Score.Actual <= s.Score.P50.Wait {
			hit50++
		}
	}
	if want := fmt.Sprintf("| step | 1.00 | cq | 200 | %.3f |", float64(hit50)/200); strings.Count(out.String(), want) != 1 {
		t.Errorf("replay lacks %q:\n%s", want, out.String())
	}

	old := filepath.Join(t.TempDir(), "old"+csvSuffix)
	if err := os.WriteFile(old, []byte(strings.Join(csvHeaderWithoutReplay, ",")+"\n1.00,0,cq,c,,ns/w,0,Forecast,0,1,1,1,2,,,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteCalibrationReplay(&out, filepath.Dir(old)); err == nil || !strings.Contains(err.Error(), "replay columns") {
		t.Errorf("a CSV without the replay columns: err %v, want one naming them", err)
	}
}
