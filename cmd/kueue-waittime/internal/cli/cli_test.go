package cli

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/kueue-waittime/kueue-waittime/pkg/queueing"
)

func TestQuantity(t *testing.T) {
	cases := map[string]struct {
		resource, raw string
		want          int64
		err           string
	}{
		"millicpu":               {resource: "cpu", raw: "500m", want: 500},
		"whole cpu":              {resource: "cpu", raw: "2", want: 2000},
		"fractional cpu":         {resource: "cpu", raw: "0.25", want: 250},
		"memory binary":          {resource: "memory", raw: "64Mi", want: 64 << 20},
		"memory decimal":         {resource: "memory", raw: "1G", want: 1e9},
		"memory rounds up":       {resource: "memory", raw: "1500m", want: 2},
		"extended resource":      {resource: "example.com/gpu", raw: "4", want: 4},
		"spaces trimmed":         {resource: "cpu", raw: " 1 ", want: 1000},
		"zero":                   {resource: "cpu", raw: "0", want: 0},
		"malformed":              {resource: "cpu", raw: "2x", err: `cpu: malformed quantity "2x" (want Kubernetes notation such as 500m, 2, 64Mi)`},
		"empty":                  {resource: "cpu", raw: "", err: `cpu: malformed quantity "" (want Kubernetes notation such as 500m, 2, 64Mi)`},
		"negative":               {resource: "memory", raw: "-1Gi", err: `memory: must be >= 0, got "-1Gi"`},
		"saturates as unlimited": {resource: "cpu", raw: "1e16", err: `cpu: quantity "1e16" is too large`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Quantity(tc.resource, tc.raw)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("Quantity = %d, %v; want error %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Quantity = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func TestResourceList(t *testing.T) {
	cases := map[string]struct {
		raw  string
		want []ResourceAmount
		err  string
	}{
		"keeps order":        {raw: "memory=1Gi,cpu=2", want: []ResourceAmount{{"memory", 1 << 30}, {"cpu", 2000}}},
		"spaces and empties": {raw: " cpu = 500m ,, ", want: []ResourceAmount{{"cpu", 500}}},
		"missing equals":     {raw: "cpu", err: `want name=quantity pairs such as cpu=500m,memory=64Mi, got "cpu"`},
		"empty name":         {raw: "=1", err: `want name=quantity pairs such as cpu=500m,memory=64Mi, got "=1"`},
		"empty list":         {raw: "", err: `want name=quantity pairs such as cpu=500m,memory=64Mi, got ""`},
		"twice":              {raw: "cpu=1,cpu=2", err: "resource cpu is listed twice"},
		"space in name":      {raw: "my cpu=1", err: `resource name "my cpu" contains spaces`},
		"bad quantity":       {raw: "cpu=1,memory=lots", err: `memory: malformed quantity "lots" (want Kubernetes notation such as 500m, 2, 64Mi)`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ResourceList(tc.raw)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("ResourceList = %v, %v; want error %q", got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNumbersAndDurations(t *testing.T) {
	floats := map[string]struct {
		raw  string
		want float64
		err  string
	}{
		"zero":       {raw: "0", want: 0},
		"decimal":    {raw: "0.128", want: 0.128},
		"exponent":   {raw: "1e-3", want: 0.001},
		"negative":   {raw: "-1", err: `must be >= 0, got "-1"`},
		"NaN":        {raw: "NaN", err: `must be a finite number, got "NaN"`},
		"infinity":   {raw: "Inf", err: `must be a finite number, got "Inf"`},
		"not number": {raw: "fast", err: `must be a finite number, got "fast"`},
	}
	for name, tc := range floats {
		t.Run("float/"+name, func(t *testing.T) {
			got, err := NonNegativeFloat(tc.raw)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("NonNegativeFloat = %v, %v; want error %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("NonNegativeFloat = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	durations := map[string]struct {
		raw  string
		want float64
		err  string
	}{
		"seconds":  {raw: "20s", want: 20},
		"compound": {raw: "1m30s", want: 90},
		"millis":   {raw: "250ms", want: 0.25},
		"zero":     {raw: "0s", err: `must be > 0, got "0s"`},
		"negative": {raw: "-1s", err: `must be > 0, got "-1s"`},
		"bare":     {raw: "20", err: `must be a Go duration such as 20s or 1m30s, got "20"`},
	}
	for name, tc := range durations {
		t.Run("duration/"+name, func(t *testing.T) {
			got, err := PositiveDuration(tc.raw)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("PositiveDuration = %v, %v; want error %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("PositiveDuration = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestFormatting(t *testing.T) {
	numbers := map[string]struct {
		v    float64
		want string
	}{
		"integer":   {5, "5"},
		"rounded":   {0.34038735, "0.3404"},
		"trimmed":   {0.640000000001, "0.64"},
		"small":     {0.0000277, "2.77e-05"},
		"zero":      {0, "0"},
		"thousands": {1234.5, "1234.5"},
	}
	for name, tc := range numbers {
		t.Run("number/"+name, func(t *testing.T) {
			if got := Number(tc.v); got != tc.want {
				t.Errorf("Number(%v) = %q, want %q", tc.v, got, tc.want)
			}
		})
	}
	seconds := map[string]struct {
		v    float64
		want string
	}{
		"zero":    {0, "0s"},
		"tiny":    {6e-9, "<1ms"},
		"millis":  {0.85, "850ms"},
		"seconds": {4.7276, "4.73s"},
		"minutes": {88.9, "88.9s (1m29s)"},
		"hours":   {3600, "3600.0s (1h0m0s)"},
		"huge":    {2e12, "2e+12s"},
	}
	for name, tc := range seconds {
		t.Run("seconds/"+name, func(t *testing.T) {
			if got := Seconds(tc.v); got != tc.want {
				t.Errorf("Seconds(%v) = %q, want %q", tc.v, got, tc.want)
			}
		})
	}
	if got := SecondsOrDash(nil); got != "-" {
		t.Errorf("SecondsOrDash(nil) = %q", got)
	}
	if got := NumberOrDash(nil); got != "-" {
		t.Errorf("NumberOrDash(nil) = %q", got)
	}
	if Float(math.NaN()) != nil || Float(math.Inf(1)) != nil || *Float(2) != 2 {
		t.Error("Float does not drop NaN and Inf")
	}
}

func TestNewWaits(t *testing.T) {
	stable, err := queueing.PaperApproximation1(4, 0.5, 20, 1)
	if err != nil {
		t.Fatal(err)
	}
	whitt, err := queueing.WhittGIGkWait(4, 0.5, 20, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWaits(stable, whitt)
	// C(4, 0.5) = 4/23, E[W] = 40/23; Whitt (4+1)/2 of it; P90 = θ ln(10C), θ = 10.
	want := map[string]float64{
		"probabilityOfWait": 4.0 / 23,
		"mean":              40.0 / 23,
		"whitt":             2.5 * 40 / 23,
		"p90":               10 * math.Log(40.0/23),
	}
	for k, got := range map[string]*float64{"probabilityOfWait": w.ProbabilityOfWait, "mean": w.MeanWaitSeconds, "whitt": w.WhittMeanWaitSeconds, "p90": w.P90WaitSeconds} {
		if got == nil || math.Abs(*got-want[k]) > 1e-12 {
			t.Errorf("%s = %v, want %v", k, got, want[k])
		}
	}
	unstable, err := queueing.PaperApproximation1(4, 1.2, 20, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := NewWaits(unstable, unstable); got != (Waits{}) {
		t.Errorf("unstable waits = %+v, want all nil", got)
	}
}

func TestExecute(t *testing.T) {
	newRoot := func() *cobra.Command {
		root := NewRoot("tool", "short", "long")
		sub := &cobra.Command{Use: "sub", Args: cobra.NoArgs, RunE: func(cmd *cobra.Command, _ []string) error {
			mode, _ := cmd.Flags().GetString("mode")
			switch mode {
			case "usage":
				return Usagef("bad\ninput")
			case "fail":
				return errors.New("disk full")
			}
			cmd.Print("done\n")
			return nil
		}}
		sub.Flags().String("mode", "", "")
		sub.Flags().Int("n", 0, "")
		root.AddCommand(sub)
		return root
	}
	cases := map[string]struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		"success":         {args: []string{"sub"}, code: ExitOK, stdout: "done\n"},
		"usage error":     {args: []string{"sub", "--mode", "usage"}, code: ExitUsage, stderr: "tool sub: bad; input\n"},
		"failure":         {args: []string{"sub", "--mode", "fail"}, code: ExitFailure, stderr: "tool sub: disk full\n"},
		"bad flag value":  {args: []string{"sub", "--n", "x"}, code: ExitUsage, stderr: "tool sub: invalid argument \"x\" for \"--n\" flag: strconv.ParseInt: parsing \"x\": invalid syntax\n"},
		"unknown command": {args: []string{"nope"}, code: ExitUsage, stderr: "tool: unknown command \"nope\" for \"tool\"\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Execute(newRoot(), tc.args, strings.NewReader(""), &stdout, &stderr)
			if code != tc.code || stdout.String() != tc.stdout || stderr.String() != tc.stderr {
				t.Errorf("Execute = %d, stdout %q, stderr %q; want %d, %q, %q", code, stdout.String(), stderr.String(), tc.code, tc.stdout, tc.stderr)
			}
		})
	}
}
