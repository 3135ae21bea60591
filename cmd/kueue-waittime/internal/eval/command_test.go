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
