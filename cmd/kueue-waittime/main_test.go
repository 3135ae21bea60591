package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strings"
	"testing"
)

// result is one in-process run of the command.
type result struct {
	code           int
	stdout, stderr string
}

func runCommand(t *testing.T, stdin io.Reader, args ...string) result {
	t.Helper()
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	var stdout, stderr bytes.Buffer
	code := execute(args, stdin, &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// checkUsageError asserts the invalid-input contract: exit 2, nothing on
// stdout, exactly one line on stderr, equal to want.
func checkUsageError(t *testing.T, r result, want string) {
	t.Helper()
	if r.code != 2 {
		t.Errorf("exit code = %d, want 2 (stderr %q)", r.code, r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("stdout = %q, want nothing", r.stdout)
	}
	if strings.Count(r.stderr, "\n") != 1 || !strings.HasSuffix(r.stderr, "\n") {
		t.Errorf("stderr = %q, want exactly one line", r.stderr)
	}
	if got := strings.TrimSuffix(r.stderr, "\n"); got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
}

// checkOK asserts a successful run: exit 0 and nothing on stderr.
func checkOK(t *testing.T, r result) {
	t.Helper()
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit code = %d, stderr = %q; want 0 and nothing", r.code, r.stderr)
	}
}

// erlangC is the textbook Erlang-C formula, summed directly (fine for the
// small k of these tests), independent of pkg/queueing's recursion:
// C = (a^k/k!)/(1−ρ) / (Σ_{n<k} a^n/n! + (a^k/k!)/(1−ρ)), a = kρ.
func erlangC(k int, rho float64) float64 {
	a := float64(k) * rho
	term, sum := 1.0, 0.0
	for n := 0; n < k; n++ {
		sum += term
		term *= a / float64(n+1)
	}
	top := term / (1 - rho)
	return top / (sum + top)
}

// mmkMean is the M/M/k mean wait C·E[S]/(k(1−ρ)).
func mmkMean(k int, rho, meanService float64) float64 {
	return erlangC(k, rho) * meanService / (float64(k) * (1 - rho))
}

// p90 is the 90th percentile of P(W > t) = C·exp(−t·C/mean).
func p90(c, mean float64) float64 {
	if c <= 0.1 {
		return 0
	}
	return mean / c * math.Log(c/0.1)
}

func approxEqual(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// decodeJSON decodes a JSON object, keeping numbers as float64 and nulls
// as nil.
func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%s", err, s)
	}
	return m
}

// checkFields compares the listed keys of a decoded JSON object: float64
// approximately, nil as JSON null, other values exactly.
func checkFields(t *testing.T, got map[string]any, want map[string]any) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("key %q missing", k)
			continue
		}
		switch wv := w.(type) {
		case float64:
			gv, ok := g.(float64)
			if !ok || !approxEqual(gv, wv) {
				t.Errorf("%s = %v, want %v", k, g, wv)
			}
		case nil:
			if g != nil {
				t.Errorf("%s = %v, want null", k, g)
			}
		default:
			if g != w {
				t.Errorf("%s = %#v, want %#v", k, g, w)
			}
		}
	}
}
