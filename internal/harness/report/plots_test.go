package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestWritePlotsDrawsEveryPlot(t *testing.T) {
	r := syntheticReport(t)
	dir := t.TempDir()
	if err := r.WritePlots(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"synthetic-levels.png", "synthetic-forecast.png", "synthetic-reliability.png"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) || len(data) < 2000 {
			t.Errorf("%s is not a drawn PNG (%d bytes)", name, len(data))
		}
	}
}
