package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kueue-waittime/kueue-waittime/pkg/queueing"
)

// Format is an output format selected with -o.
type Format string

// The output formats.
const (
	FormatTable Format = "table"
	FormatJSON  Format = "json"
)

// AddOutputFlag registers `-o, --output table|json` on cmd, storing the raw
// value in dst; ParseFormat validates it.
func AddOutputFlag(cmd *cobra.Command, dst *string) {
	cmd.Flags().StringVarP(dst, "output", "o", string(FormatTable), "output `FORMAT`: table (aligned, for people) or json (one object, camelCase keys, null for figures that do not exist)")
}

// ParseFormat validates the value of the -o flag.
func ParseFormat(raw string) (Format, error) {
	switch f := Format(strings.TrimSpace(raw)); f {
	case FormatTable, FormatJSON:
		return f, nil
	}
	return "", FlagError("output", "must be table or json, got %q", raw)
}

// WriteJSON writes v as indented JSON followed by a newline, leaving <, >
// and & unescaped (reasons contain ">").
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// NewTable returns a tabwriter for aligned columns separated by tabs; the
// caller must Flush it.
func NewTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// Waits are the a-priori wait figures of one queue (or priority level), in
// seconds. A nil field is a figure that does not exist: the queue is
// unstable, or the model was not evaluated.
type Waits struct {
	// ProbabilityOfWait is the Erlang-C probability C(k, ρ) = P(W > 0).
	ProbabilityOfWait *float64 `json:"probabilityOfWait"`
	// MeanWaitSeconds is the paper's Approximation 1,
	// C(k, ρ)·E[S]/(k(1−ρ))·(C_S²+1)/2.
	MeanWaitSeconds *float64 `json:"meanWaitSeconds"`
	// WhittMeanWaitSeconds is the Allen–Cunneen/Whitt GI/G/k mean,
	// ((c_a²+C_S²)/2)·C(k, ρ)·E[S]/(k(1−ρ)).
	WhittMeanWaitSeconds *float64 `json:"whittMeanWaitSeconds"`
	// P90WaitSeconds is the 90th percentile of the Approximation 1 law
	// P(W > t) = C·exp(−t/θ), θ = mean/C.
	P90WaitSeconds *float64 `json:"p90WaitSeconds"`
}

// NewWaits returns the figures of the two wait laws. Unstable laws give
// nil fields.
func NewWaits(approximation1, whitt queueing.WaitDistribution) Waits {
	var w Waits
	if approximation1.Stable {
		w.ProbabilityOfWait = Float(approximation1.WaitProbability)
		w.MeanWaitSeconds = Float(approximation1.MeanWait)
		if p90, err := approximation1.Quantile(0.9); err == nil {
			w.P90WaitSeconds = Float(p90)
		}
	}
	if whitt.Stable {
		w.WhittMeanWaitSeconds = Float(whitt.MeanWait)
	}
	return w
}

// Float returns a pointer to v, or nil when v is NaN or infinite (JSON has
// no such numbers).
func Float(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Number renders v for a table: up to four decimals with trailing zeros
// removed, or three significant digits for small non-zero values.
func Number(v float64) string {
	s := strconv.FormatFloat(v, 'f', 4, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if (s == "0" || s == "-0") && v != 0 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return s
}

// NumberOrDash renders a nullable number, "-" for nil.
func NumberOrDash(v *float64) string {
	if v == nil {
		return "-"
	}
	return Number(*v)
}

// Seconds renders a duration given in seconds for a table: "0s", "850ms",
// "4.73s", and for a minute or more also the rounded Go duration, as in
// "88.9s (1m29s)".
func Seconds(v float64) string {
	switch {
	case v == 0:
		return "0s"
	case v < 0.001:
		return "<1ms"
	case v < 1:
		return strconv.FormatFloat(v*1000, 'f', 0, 64) + "ms"
	case v < 60:
		return strconv.FormatFloat(v, 'f', 2, 64) + "s"
	case v < 1e9:
		d := time.Duration(v * float64(time.Second)).Round(time.Second)
		return fmt.Sprintf("%.1fs (%s)", v, d)
	}
	return strconv.FormatFloat(v, 'g', 4, 64) + "s"
}

// SecondsOrDash renders a nullable duration in seconds, "-" for nil.
func SecondsOrDash(v *float64) string {
	if v == nil {
		return "-"
	}
	return Seconds(*v)
}
