package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// checkContract asserts what every run must satisfy whatever the input:
// exit 0 with a JSON object on stdout and nothing on stderr, or exit 2 with
// nothing on stdout and one line on stderr. Negative figures fail too.
func checkContract(t *testing.T, r result) {
	t.Helper()
	switch r.code {
	case 0:
		if r.stderr != "" {
			t.Fatalf("exit 0 with stderr %q", r.stderr)
		}
		var v any
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
			t.Fatalf("exit 0 with invalid JSON: %v\n%s", err, r.stdout)
		}
		checkNonNegative(t, v)
	case 2:
		if r.stdout != "" || strings.Count(r.stderr, "\n") != 1 {
			t.Fatalf("exit 2 with stdout %q, stderr %q", r.stdout, r.stderr)
		}
	default:
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
}

func checkNonNegative(t *testing.T, v any) {
	t.Helper()
	switch x := v.(type) {
	case float64:
		if x < 0 {
			t.Fatalf("negative figure %v", x)
		}
	case []any:
		for _, e := range x {
			checkNonNegative(t, e)
		}
	case map[string]any:
		for k, e := range x {
			if k == "priority" { // priorities may be negative
				continue
			}
			checkNonNegative(t, e)
		}
	}
}

func FuzzPredict(f *testing.F) {
	f.Add("cpu=2,memory=1Gi", "cpu=500m,memory=64Mi", "", "0.64", "20s", "1", "1", "0")
	f.Add("cpu=2", "cpu=20", "", "0.5", "20s", "1", "1", "0")
	f.Add("cpu=2", "cpu=4", "cpu=8", "", "1s", "0", "2", "0.1")
	f.Add("", "", "", "1", "20s", "1e200", "1", "0")
	f.Add("memory=1Ei", "memory=1", "", "0.99", "1ns", "1", "1", "1e308")
	f.Add("pods=3,cpu=1", "cpu=0", "pods=1", "NaN", "-1s", "x", "-1", "Inf")
	f.Fuzz(func(t *testing.T, quota, demand, borrowable, rate, mean, serviceCV, arrivalCV, preemption string) {
		args := []string{"predict", "-o", "json", "--mean-service", mean, "--service-cv", serviceCV, "--arrival-cv", arrivalCV, "--preemption-rate", preemption}
		if quota == "" {
			args = append(args, "--servers", "4")
		} else {
			args = append(args, "--quota", quota, "--demand", demand)
			if borrowable != "" {
				args = append(args, "--borrowable", borrowable)
			}
		}
		if strings.HasPrefix(rate, "0.") {
			args = append(args, "--utilization", rate)
		} else {
			args = append(args, "--arrival-rate", rate)
		}
		checkContract(t, runCommand(t, nil, args...))
	})
}

func FuzzPlanClasses(f *testing.F) {
	f.Add("{name: a, clusterQueue: cq-eval, podSets: [{requests: {cpu: 500m, memory: 64Mi}}], arrivalRate: 0.128, meanService: 20s}")
	f.Add("{name: a, clusterQueue: cq-eval, priority: -5, podSets: [{count: 3, requests: {cpu: 1}}], arrivalsPerHour: 1e9, meanService: 1ns, serviceCV: 1e150}")
	f.Add("{name: a, clusterQueue: cq-eval, podSets: [{requests: {cpu: 20, example.com/gpu: 1}}], arrivalRate: 0, meanService: 1h}")
	f.Add("{name: a, clusterQueue: cq-eval, podSets: [{requests: {memory: 1Ei}}], arrivalRate: 1, meanService: 1s}")
	f.Add("[1, 2")
	f.Fuzz(func(t *testing.T, class string) {
		doc := "apiVersion: kueue-waittime.x-k8s.io/v1alpha1\nkind: WorkloadClasses\nclasses:\n- " + class + "\n"
		checkContract(t, runCommand(t, strings.NewReader(doc), "plan", "-f", evalCluster, "-f", "-", "-o", "json"))
	})
}
