package eval

import (
	"io"
	"strings"
	"testing"
)

// eval --requeuing-batch-period: a period that is not positive, or one
// given with --cluster (whose manager requeues with Kueue's own period), is
// refused before anything starts, with an error that names the flag.
func TestRequeuingBatchPeriodFlagRefusesWhatCannotRun(t *testing.T) {
	scenario := "../../../../test/eval/mt-mixed.yaml"
	cases := map[string]struct {
		args []string
		want string
	}{
		"zero": {
			args: []string{"-f", scenario, "--requeuing-batch-period", "0s"},
			want: "--requeuing-batch-period: must be > 0",
		},
		"negative": {
			args: []string{"-f", scenario, "--requeuing-batch-period", "-1ms"},
			want: "--requeuing-batch-period: must be > 0",
		},
		"with --cluster": {
			args: []string{"-f", scenario, "--cluster", "--requeuing-batch-period", "1ms"},
			want: "--requeuing-batch-period",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cmd := NewCommand()
			cmd.SetArgs(tc.args)
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			err := cmd.Execute()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// eval --seed: every scenario takes the given base seed, and its replicas
// then draw other arrivals than with the file's seed.
func TestSeedFlagReplacesEachScenariosSeed(t *testing.T) {
	files := []string{"../../../../test/eval/partition.yaml", "../../../../test/eval/mt-priority.yaml"}
	own, err := loadSpecs(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(20261128)
	reseeded, err := loadSpecs(files, &seed)
	if err != nil {
		t.Fatal(err)
	}
	for i := range files {
		if reseeded[i].Seed != seed || own[i].Seed == seed {
			t.Errorf("%s: seed %d with --seed, %d without; want %d and the file's", files[i], reseeded[i].Seed, own[i].Seed, seed)
		}
		a, err := own[i].Plan(own[i].Levels[0], 0)
		if err != nil {
			t.Fatal(err)
		}
		b, err := reseeded[i].Plan(reseeded[i].Levels[0], 0)
		if err != nil {
			t.Fatal(err)
		}
		if a.Arrivals[1].Offset == b.Arrivals[1].Offset {
			t.Errorf("%s: the second arrival is at %v s with either seed", files[i], a.Arrivals[1].Offset)
		}
	}
	cmd := NewCommand()
	cmd.SetArgs([]string{"--summarize", t.TempDir(), "--seed", "3"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "seed") {
		t.Errorf("--seed with --summarize: err %v, want one naming --seed", err)
	}
}
