package main

import (
	"strings"
	"testing"
)

func TestPredictJSON(t *testing.T) {
	// Paper Table 2: k_eff = ⌊2/0.5⌋ = 4 by cpu (memory: 1Gi/64Mi = 16).
	c2 := erlangC(4, 0.64)
	w2 := mmkMean(4, 0.64, 20)
	// Paper Table 3 at ρ = 0.5: k_eff = min(⌊4/0.5⌋, ⌊2048/512⌋) = 4 by
	// memory; C(4, 0.5) = 4/23 and E[W] = C·20/(4·0.5) = 40/23.
	c3, w3 := 4.0/23, 40.0/23
	cases := map[string]struct {
		args []string
		want map[string]any
	}{
		"paper table 2": {
			args: []string{"--quota", "cpu=2,memory=1Gi", "--demand", "cpu=500m,memory=64Mi", "--utilization", "0.64", "--mean-service", "20s"},
			want: map[string]any{
				"admissibility": "Quotable", "kEff": 4.0, "bottleneck": "cpu", "utilization": 0.64, "stable": true,
				"arrivalRate": 0.128, "probabilityOfWait": c2, "meanWaitSeconds": w2, "whittMeanWaitSeconds": w2,
				"p90WaitSeconds": p90(c2, w2),
			},
		},
		"paper table 3": {
			args: []string{"--quota", "cpu=4,memory=2Gi", "--demand", "cpu=500m,memory=512Mi", "--utilization", "0.5", "--mean-service", "20s"},
			want: map[string]any{
				"admissibility": "Quotable", "kEff": 4.0, "bottleneck": "memory", "utilization": 0.5, "stable": true,
				"arrivalRate": 0.1, "probabilityOfWait": c3, "meanWaitSeconds": w3, "whittMeanWaitSeconds": w3,
				"p90WaitSeconds": p90(c3, w3),
			},
		},
		"paper table 4 gpu bottleneck": {
			args: []string{"--quota", "example.com/gpu=4,cpu=8,memory=8Gi", "--demand", "example.com/gpu=1,cpu=500m,memory=256Mi", "--arrival-rate", "0.14", "--mean-service", "20s"},
			want: map[string]any{
				"kEff": 4.0, "bottleneck": "example.com/gpu", "utilization": 0.7,
				"meanWaitSeconds": mmkMean(4, 0.7, 20),
			},
		},
		"unfeasible": {
			args: []string{"--quota", "cpu=2", "--demand", "cpu=20", "--arrival-rate", "0.01", "--mean-service", "20s"},
			want: map[string]any{
				"admissibility": "Unfeasible", "reason": "flavor default: cpu 20 > potential 2 (nominal 2, borrowable 0)",
				"kEff": 0.0, "bottleneck": "cpu", "arrivalRate": nil, "utilization": nil, "stable": nil,
				"probabilityOfWait": nil, "meanWaitSeconds": nil, "whittMeanWaitSeconds": nil, "p90WaitSeconds": nil,
			},
		},
		"unfeasible with a target utilization is still an answer": {
			args: []string{"--quota", "cpu=2", "--borrowable", "cpu=4", "--demand", "cpu=20", "--utilization", "0.5", "--mean-service", "20s"},
			want: map[string]any{
				"admissibility": "Unfeasible", "reason": "flavor default: cpu 20 > potential 6 (nominal 2, borrowable 4)",
				"meanWaitSeconds": nil,
			},
		},
		"uncovered resource is unfeasible": {
			args: []string{"--quota", "cpu=2", "--demand", "cpu=1,example.com/gpu=1", "--arrival-rate", "0.01", "--mean-service", "20s"},
			want: map[string]any{
				"admissibility": "Unfeasible", "reason": "resource example.com/gpu is not covered by any resource group of ClusterQueue",
				"kEff": 0.0, "bottleneck": "example.com/gpu", "meanWaitSeconds": nil,
			},
		},
		"quotable only by borrowing: no nominal figures, those with borrowing": {
			// k_eff⁺ = ⌊10/4⌋ = 2, ρ⁺ = 0.5·1/2 = 0.25.
			args: []string{"--quota", "cpu=2", "--borrowable", "cpu=8", "--demand", "cpu=4", "--arrival-rate", "0.5", "--mean-service", "1s"},
			want: map[string]any{
				"admissibility": "Quotable", "kEff": 0.0, "kEffWithBorrowing": 2.0, "bottleneck": "cpu", "arrivalRate": 0.5, "utilization": nil,
				"stable": nil, "meanWaitSeconds": nil,
			},
		},
		"quotable only by borrowing with a target utilization: over k_eff with borrowing": {
			// The case: quota 2 + borrowable 20, demand 20: k_eff 0,
			// k_eff⁺ 1, λ = 0.5·1/20.
			args: []string{"--quota", "cpu=2", "--borrowable", "cpu=20", "--demand", "cpu=20", "--utilization", "0.5", "--mean-service", "20s"},
			want: map[string]any{
				"admissibility": "Quotable", "kEff": 0.0, "kEffWithBorrowing": 1.0, "arrivalRate": 0.025, "utilization": nil,
			},
		},
		"borrowing: the nominal figures stay over k_eff": {
			// The case: quota 20 + borrowable 20, demand 20: k_eff 1,
			// k_eff⁺ 2; ρ = 0.025·20/1 = 0.5 nominal.
			args: []string{"--quota", "cpu=20", "--borrowable", "cpu=20", "--demand", "cpu=20", "--arrival-rate", "0.025", "--mean-service", "20s"},
			want: map[string]any{
				"kEff": 1.0, "kEffWithBorrowing": 2.0, "utilization": 0.5, "meanWaitSeconds": mmkMean(1, 0.5, 20),
			},
		},
		"unstable": {
			args: []string{"--servers", "4", "--arrival-rate", "1", "--mean-service", "20s"},
			want: map[string]any{
				"admissibility": "Quotable", "kEff": 4.0, "utilization": 5.0, "stable": false,
				"probabilityOfWait": nil, "meanWaitSeconds": nil, "whittMeanWaitSeconds": nil, "p90WaitSeconds": nil,
			},
		},
		"exactly at rho 1 is unstable": {
			args: []string{"--servers", "4", "--utilization", "1", "--mean-service", "20s"},
			want: map[string]any{"utilization": 1.0, "stable": false, "meanWaitSeconds": nil},
		},
		"variability: approximation 1 halves, whitt doubles": {
			// ρ = 0.1·20/4 = 0.5. Approximation 1: (0+1)/2·40/23; Whitt: (4+0)/2·40/23.
			args: []string{"--servers", "4", "--arrival-rate", "0.1", "--mean-service", "20s", "--service-cv", "0", "--arrival-cv", "2"},
			want: map[string]any{
				"utilization": 0.5, "probabilityOfWait": c3, "meanWaitSeconds": w3 / 2, "whittMeanWaitSeconds": 2 * w3,
				"p90WaitSeconds": p90(c3, w3/2),
			},
		},
		"preemptions add load": {
			args: []string{"--servers", "4", "--arrival-rate", "0.05", "--preemption-rate", "0.05", "--mean-service", "20s"},
			want: map[string]any{"arrivalRate": 0.05, "utilization": 0.5, "meanWaitSeconds": w3},
		},
		"target utilization includes preemptions": {
			args: []string{"--servers", "4", "--utilization", "0.5", "--preemption-rate", "0.025", "--mean-service", "20s"},
			want: map[string]any{"arrivalRate": 0.075, "utilization": 0.5, "meanWaitSeconds": w3},
		},
		"idle queue never waits": {
			args: []string{"--servers", "3", "--utilization", "0", "--mean-service", "1m"},
			want: map[string]any{
				"utilization": 0.0, "stable": true, "probabilityOfWait": 0.0, "meanWaitSeconds": 0.0, "p90WaitSeconds": 0.0,
			},
		},
		"pods quota counts one pod": {
			args: []string{"--quota", "cpu=10,pods=3", "--demand", "cpu=1", "--utilization", "0.5", "--mean-service", "10s"},
			want: map[string]any{"kEff": 3.0, "bottleneck": "pods"},
		},
		"quantities round like kueue": {
			// 1500m of memory rounds up to 2 bytes: ⌊7/2⌋ = 3.
			args: []string{"--quota", "memory=7", "--demand", "memory=1500m", "--arrival-rate", "0", "--mean-service", "1s"},
			want: map[string]any{"kEff": 3.0, "bottleneck": "memory"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := runCommand(t, nil, append(append([]string{"predict"}, tc.args...), "-o", "json")...)
			checkOK(t, r)
			checkFields(t, decodeJSON(t, r.stdout), tc.want)
		})
	}
}

func TestPredictJSONOmitsBottleneckWithServers(t *testing.T) {
	r := runCommand(t, nil, "predict", "--servers", "4", "--arrival-rate", "0.1", "--mean-service", "20s", "-o", "json")
	checkOK(t, r)
	got := decodeJSON(t, r.stdout)
	for _, k := range []string{"bottleneck", "reason", "note"} {
		if _, ok := got[k]; ok {
			t.Errorf("key %q present, want it omitted", k)
		}
	}
	for _, k := range []string{"admissibility", "kEff", "utilization", "stable", "probabilityOfWait", "meanWaitSeconds", "whittMeanWaitSeconds", "p90WaitSeconds"} {
		if _, ok := got[k]; !ok {
			t.Errorf("key %q missing", k)
		}
	}
}

func TestPredictTable(t *testing.T) {
	cases := map[string]struct {
		args  []string
		lines []string
		not   []string
	}{
		"paper table 2": {
			args: []string{"--quota", "cpu=2,memory=1Gi", "--demand", "cpu=500m,memory=64Mi", "--utilization", "0.64", "--mean-service", "20s"},
			lines: []string{
				"admissibility      Quotable",
				"k_eff              4 (bottleneck: cpu)",
				"arrival rate λ     0.128/s",
				"utilization ρ_eff  0.64",
				"stability          stable (ρ < 1)",
				"P(wait > 0)        0.3404 (Erlang-C)",
				"mean wait          4.73s (paper Approximation 1)",
				"mean wait, Whitt   4.73s (GI/G/k, Allen–Cunneen)",
				"P90 wait           17.01s (Approximation 1 law)",
			},
		},
		"unstable": {
			args:  []string{"--servers", "4", "--arrival-rate", "1", "--mean-service", "20s"},
			lines: []string{"k_eff              4 (--servers)", "utilization ρ_eff  5", "stability          unstable (ρ ≥ 1): no finite mean wait"},
			not:   []string{"P(wait > 0)", "P90"},
		},
		"unfeasible": {
			args: []string{"--quota", "cpu=2", "--demand", "cpu=20", "--arrival-rate", "0.01", "--mean-service", "20s"},
			lines: []string{
				"admissibility  Unfeasible",
				"reason         flavor default: cpu 20 > potential 2 (nominal 2, borrowable 0)",
				"wait           none: the workload can never be admitted without changing the quota or the workload",
			},
			not: []string{"utilization"},
		},
		"no nominal server": {
			args: []string{"--quota", "cpu=2", "--borrowable", "cpu=8", "--demand", "cpu=4", "--arrival-rate", "0.5", "--mean-service", "1s"},
			lines: []string{
				"k_eff                             0 (bottleneck: cpu)",
				"k_eff⁺                            2 (nominal + --borrowable: the optimistic bound)",
				"model                             k_eff = 0: the nominal quota cannot hold one such workload",
				"utilization ρ_eff with borrowing  0.25",
			},
			not: []string{"utilization ρ_eff  "},
		},
		"borrowing beside the nominal figures": {
			args: []string{"--quota", "cpu=20", "--borrowable", "cpu=20", "--demand", "cpu=20", "--arrival-rate", "0.025", "--mean-service", "20s"},
			lines: []string{
				"k_eff                             1 (bottleneck: cpu)",
				"k_eff⁺                            2 (nominal + --borrowable: the optimistic bound)",
				"utilization ρ_eff                 0.5",
				"mean wait                         20.00s (paper Approximation 1)",
				"utilization ρ_eff with borrowing  0.25",
				"mean wait with borrowing          1.33s (paper Approximation 1)",
			},
		},
		"preemption shown": {
			args:  []string{"--servers", "2", "--arrival-rate", "0.01", "--preemption-rate", "0.002", "--mean-service", "2m"},
			lines: []string{"preemption rate μ_p  0.002/s", "mean service E[S]    120.0s (2m0s)"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := runCommand(t, nil, append([]string{"predict"}, tc.args...)...)
			checkOK(t, r)
			got := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
			for _, want := range tc.lines {
				found := false
				for _, line := range got {
					if strings.HasPrefix(line, want) {
						found = true
					}
				}
				if !found {
					t.Errorf("no line starting %q in\n%s", want, r.stdout)
				}
			}
			for _, bad := range tc.not {
				if strings.Contains(r.stdout, bad) {
					t.Errorf("output contains %q:\n%s", bad, r.stdout)
				}
			}
		})
	}
}

func TestPredictInvalidInput(t *testing.T) {
	base := []string{"--servers", "4", "--arrival-rate", "0.1", "--mean-service", "20s"}
	quota := []string{"--quota", "cpu=2", "--demand", "cpu=500m", "--arrival-rate", "0.1", "--mean-service", "20s"}
	with := func(b []string, extra ...string) []string { return append(append([]string{}, b...), extra...) }
	const p = "kueue-waittime predict: "
	cases := map[string]struct {
		args []string
		want string
	}{
		"negative mean service": {
			args: []string{"--servers", "4", "--arrival-rate", "0.1", "--mean-service", "-1s"},
			want: p + `--mean-service: must be > 0, got "-1s"`,
		},
		"zero mean service": {
			args: []string{"--servers", "4", "--arrival-rate", "0.1", "--mean-service", "0s"},
			want: p + `--mean-service: must be > 0, got "0s"`,
		},
		"mean service without unit": {
			args: []string{"--servers", "4", "--arrival-rate", "0.1", "--mean-service", "20"},
			want: p + `--mean-service: must be a Go duration such as 20s or 1m30s, got "20"`,
		},
		"missing mean service": {
			args: []string{"--servers", "4", "--arrival-rate", "0.1"},
			want: p + "--mean-service is required",
		},
		"mean service without value": {
			args: []string{"--servers", "4", "--arrival-rate", "0.1", "--mean-service"},
			want: p + "flag needs an argument: --mean-service",
		},
		"negative arrival rate": {
			args: []string{"--servers", "4", "--arrival-rate", "-0.1", "--mean-service", "20s"},
			want: p + `--arrival-rate: must be >= 0, got "-0.1"`,
		},
		"NaN arrival rate": {
			args: []string{"--servers", "4", "--arrival-rate", "NaN", "--mean-service", "20s"},
			want: p + `--arrival-rate: must be a finite number, got "NaN"`,
		},
		"infinite utilization": {
			args: []string{"--servers", "4", "--utilization", "+Inf", "--mean-service", "20s"},
			want: p + `--utilization: must be a finite number, got "+Inf"`,
		},
		"negative utilization": {
			args: []string{"--servers", "4", "--utilization", "-0.5", "--mean-service", "20s"},
			want: p + `--utilization: must be >= 0, got "-0.5"`,
		},
		"both arrival rate and utilization": {
			args: with(base, "--utilization", "0.5"),
			want: p + "--arrival-rate and --utilization exclude each other: give one",
		},
		"neither arrival rate nor utilization": {
			args: []string{"--servers", "4", "--mean-service", "20s"},
			want: p + "one of --arrival-rate or --utilization is required",
		},
		"negative service cv": {
			args: with(base, "--service-cv", "-1"),
			want: p + `--service-cv: must be >= 0, got "-1"`,
		},
		"NaN arrival cv": {
			args: with(base, "--arrival-cv", "nan"),
			want: p + `--arrival-cv: must be a finite number, got "nan"`,
		},
		"service cv whose square overflows": {
			args: with(base, "--service-cv", "1e200"),
			want: p + "queueing: invalid input: service-time SCV is infinite",
		},
		"negative preemption rate": {
			args: with(base, "--preemption-rate", "-1"),
			want: p + `--preemption-rate: must be >= 0, got "-1"`,
		},
		"preemptions above the target load": {
			args: []string{"--servers", "4", "--utilization", "0.5", "--preemption-rate", "1", "--mean-service", "20s"},
			want: p + "--preemption-rate: 1/s alone exceeds the load of utilization 0.5 (0.1/s re-entries and arrivals together)",
		},
		"both servers and quota": {
			args: with(quota, "--servers", "4"),
			want: p + "--servers and --quota exclude each other: give the server count or the quota",
		},
		"neither servers nor quota": {
			args: []string{"--arrival-rate", "0.1", "--mean-service", "20s"},
			want: p + "one of --servers or --quota (with --demand) is required",
		},
		"demand without quota": {
			args: []string{"--demand", "cpu=1", "--arrival-rate", "0.1", "--mean-service", "20s"},
			want: p + "--demand needs --quota",
		},
		"demand with servers": {
			args: with(base, "--demand", "cpu=1"),
			want: p + "--demand needs --quota, not --servers",
		},
		"quota without demand": {
			args: []string{"--quota", "cpu=2", "--arrival-rate", "0.1", "--mean-service", "20s"},
			want: p + "--quota needs --demand",
		},
		"borrowable without quota": {
			args: []string{"--borrowable", "cpu=2", "--arrival-rate", "0.1", "--mean-service", "20s"},
			want: p + "--borrowable needs --quota",
		},
		"borrowable with servers": {
			args: with(base, "--borrowable", "cpu=2"),
			want: p + "--borrowable needs --quota, not --servers",
		},
		"borrowable resource not in quota": {
			args: with(quota, "--borrowable", "memory=1Gi"),
			want: p + "--borrowable: resource memory is not in --quota",
		},
		"malformed quota quantity": {
			args: []string{"--quota", "cpu=2x", "--demand", "cpu=1", "--arrival-rate", "0.1", "--mean-service", "20s"},
			want: p + `--quota: cpu: malformed quantity "2x" (want Kubernetes notation such as 500m, 2, 64Mi)`,
		},
		"negative quota": {
			args: []string{"--quota", "cpu=-2", "--demand", "cpu=1", "--arrival-rate", "0.1", "--mean-service", "20s"},
			want: p + `--quota: cpu: must be >= 0, got "-2"`,
		},
		"quota too large": {
			args: []string{"--quota", "cpu=1e30", "--demand", "cpu=1", "--arrival-rate", "0.1", "--mean-service", "20s"},
			want: p + `--quota: cpu: quantity "1e30" is too large`,
		},
		"demand without equals": {
			args: []string{"--quota", "cpu=2", "--demand", "cpu", "--arrival-rate", "0.1", "--mean-service", "20s"},
			want: p + `--demand: want name=quantity pairs such as cpu=500m,memory=64Mi, got "cpu"`,
		},
		"empty demand": {
			args: []string{"--quota", "cpu=2", "--demand", ",", "--arrival-rate", "0.1", "--mean-service", "20s"},
			want: p + `--demand: want name=quantity pairs such as cpu=500m,memory=64Mi, got ","`,
		},
		"resource twice": {
			args: []string{"--quota", "cpu=2,cpu=3", "--demand", "cpu=1", "--arrival-rate", "0.1", "--mean-service", "20s"},
			want: p + "--quota: resource cpu is listed twice",
		},
		"demand of nothing": {
			args: []string{"--quota", "cpu=2", "--demand", "cpu=0", "--arrival-rate", "0.1", "--mean-service", "20s"},
			want: p + "--demand: requests nothing (every quantity is 0)",
		},
		"demand of pods": {
			args: []string{"--quota", "pods=2", "--demand", "pods=1", "--arrival-rate", "0.1", "--mean-service", "20s"},
			want: p + "--demand: pods is not requested: the workload counts as one pod against a pods quota",
		},
		"zero servers": {
			args: []string{"--servers", "0", "--arrival-rate", "0.1", "--mean-service", "20s"},
			want: p + `--servers: must be an integer in [1, 1000000000], got "0"`,
		},
		"fractional servers": {
			args: []string{"--servers", "1.5", "--arrival-rate", "0.1", "--mean-service", "20s"},
			want: p + `--servers: must be an integer in [1, 1000000000], got "1.5"`,
		},
		"k_eff beyond the model": {
			args: []string{"--quota", "memory=1Ei", "--demand", "memory=1", "--arrival-rate", "0.1", "--mean-service", "20s"},
			want: p + "k_eff 1152921504606846976 exceeds the largest server count the model evaluates (1000000000)",
		},
		"unknown output": {
			args: with(base, "-o", "yaml"),
			want: p + `--output: must be table or json, got "yaml"`,
		},
		"unknown flag": {
			args: with(base, "--bogus"),
			want: p + "unknown flag: --bogus",
		},
		"positional argument": {
			args: with(base, "extra"),
			want: p + `unknown command "extra" for "kueue-waittime predict"`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkUsageError(t, runCommand(t, nil, append([]string{"predict"}, tc.args...)...), tc.want)
		})
	}
}

func TestRoot(t *testing.T) {
	t.Run("unknown subcommand", func(t *testing.T) {
		checkUsageError(t, runCommand(t, nil, "bogus"), `kueue-waittime: unknown command "bogus" for "kueue-waittime"`)
	})
	t.Run("no subcommand prints help", func(t *testing.T) {
		r := runCommand(t, nil)
		checkOK(t, r)
		for _, sub := range []string{"predict", "plan"} {
			if !strings.Contains(r.stdout, sub) {
				t.Errorf("help does not list %s:\n%s", sub, r.stdout)
			}
		}
	})
	t.Run("predict help documents every flag with an example", func(t *testing.T) {
		r := runCommand(t, nil, "predict", "--help")
		checkOK(t, r)
		for _, want := range []string{"--servers", "--quota", "--demand", "--borrowable", "--arrival-rate", "--utilization", "--mean-service", "--service-cv", "--arrival-cv", "--preemption-rate", "--output", "Examples:", "kueue-waittime predict --quota cpu=2,memory=1Gi"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("help lacks %q", want)
			}
		}
	})
}
