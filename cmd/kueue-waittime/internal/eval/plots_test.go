package eval

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWritePlots(t *testing.T) {
	r := &Report{
		Scenario: &Scenario{Name: "synthetic", MeanService: Duration{2 * time.Second}},
		KEff:     4,
		Levels: []LevelResult{
			{TargetUtilization: 0.5, ObservedUtilization: 0.48, ObservedMeanWait: 0.2, PaperMeanWait: ptr(0.17), WhittMeanWait: ptr(0.17), ForecastMeanWait: ptr(0.5), ForecastedMeanWait: ptr(0.6)},
			{TargetUtilization: 0.9, ObservedUtilization: 0.93, ObservedMeanWait: 2.1, PaperMeanWait: ptr(4.1), WhittMeanWait: ptr(4.1), ForecastMeanWait: ptr(2.5), ForecastedMeanWait: ptr(2.4)},
		},
		Workloads: []WorkloadResult{
			{Name: "a", Wait: 1, Forecast: ptr(1.2), EMA: 0.4},
			{Name: "b", Wait: 3, Forecast: ptr(2.5), EMA: 1.8},
			{Name: "c", Unfeasible: true},
		},
	}
	dir := t.TempDir()
	if err := r.WritePlots(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"synthetic-levels.png", "synthetic-forecast.png"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) || len(data) < 2000 {
			t.Errorf("%s is not a drawn PNG (%d bytes)", name, len(data))
		}
	}
}
