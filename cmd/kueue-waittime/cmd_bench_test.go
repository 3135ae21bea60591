package main

import (
	"io"
	"strings"
	"testing"
)

// BenchmarkPredict is one predict run in-process, flags to JSON.
func BenchmarkPredict(b *testing.B) {
	args := []string{"predict", "--quota", "cpu=2,memory=1Gi", "--demand", "cpu=500m,memory=64Mi", "--utilization", "0.64", "--mean-service", "20s", "-o", "json"}
	for b.Loop() {
		if code := execute(args, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}

// BenchmarkPlanCohort is one plan run on the cohort example: reading and
// decoding the files, Kueue's cache and snapshot, and the model of four
// ClusterQueues.
func BenchmarkPlanCohort(b *testing.B) {
	args := append(setupArgs("cohort"), "-o", "json")
	for b.Loop() {
		if code := execute(args, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}
