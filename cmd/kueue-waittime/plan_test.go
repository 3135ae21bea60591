package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var update = flag.Bool("update", false, "rewrite the golden files of the plan tests")

// setups are the example clusters under testdata: the paper's three
// experiments and a cohort beyond them.
var setups = []string{"table2-eval", "table3-vector", "table4-gpu", "cohort"}

func setupArgs(dir string) []string {
	return []string{"plan", "-f", filepath.Join("testdata", dir, "cluster.yaml"), "-f", filepath.Join("testdata", dir, "classes.yaml")}
}

// TestPlanGolden compares the table and JSON output on every setup with
// testdata/golden/<setup>.{txt,json}; run with -update to rewrite them.
// JSON numbers are compared to a relative 1e-9, so that floating-point
// differences between platforms do not fail the test.
func TestPlanGolden(t *testing.T) {
	for _, dir := range setups {
		for _, format := range []string{"table", "json"} {
			t.Run(dir+"/"+format, func(t *testing.T) {
				r := runCommand(t, nil, append(setupArgs(dir), "-o", format)...)
				checkOK(t, r)
				golden := filepath.Join("testdata", "golden", dir+".txt")
				if format == "json" {
					golden = filepath.Join("testdata", "golden", dir+".json")
				}
				if *update {
					if err := os.WriteFile(golden, []byte(r.stdout), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test -update to create it)", err)
				}
				if format == "table" {
					if diff := cmp.Diff(string(want), r.stdout); diff != "" {
						t.Errorf("table output differs from %s (-want +got):\n%s", golden, diff)
					}
					return
				}
				var got, exp any
				if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(want, &exp); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(exp, got, cmpopts.EquateApprox(1e-9, 0)); diff != "" {
					t.Errorf("JSON output differs from %s (-want +got):\n%s", golden, diff)
				}
			})
		}
	}
}

// planReport decodes the JSON plan into the fields the tests check.
type planReport struct {
	CapacityBasis string      `json:"capacityBasis"`
	ClusterQueues []planQueue `json:"clusterQueues"`
	Notes         []string    `json:"notes"`
}

type planQueue struct {
	Name               string         `json:"name"`
	Active             bool           `json:"active"`
	InactiveReason     string         `json:"inactiveReason"`
	Capacity           []planCapacity `json:"capacity"`
	KEff               *int           `json:"kEff"`
	KEffPotential      *int           `json:"kEffPotential"`
	BottleneckFlavor   string         `json:"bottleneckFlavor"`
	BottleneckResource string         `json:"bottleneckResource"`
	ArrivalRate        *float64       `json:"arrivalRate"`
	Utilization        *float64       `json:"utilization"`
	Stable             *bool          `json:"stable"`
	ProbabilityOfWait  *float64       `json:"probabilityOfWait"`
	MeanWait           *float64       `json:"meanWaitSeconds"`
	WhittMeanWait      *float64       `json:"whittMeanWaitSeconds"`
	P90Wait            *float64       `json:"p90WaitSeconds"`
	Classes            []planClass    `json:"classes"`
	Priorities         []planPriority `json:"priorities"`
	Notes              []string       `json:"notes"`
}

type planCapacity struct {
	Flavor, Resource, Nominal, Borrowable, Potential string
}

type planClass struct {
	Name               string   `json:"name"`
	Admissibility      string   `json:"admissibility"`
	Reason             string   `json:"reason"`
	KEff               *int     `json:"kEff"`
	BottleneckResource string   `json:"bottleneckResource"`
	Utilization        *float64 `json:"utilization"`
	MeanWait           *float64 `json:"meanWaitSeconds"`
	WhittMeanWait      *float64 `json:"whittMeanWaitSeconds"`
}

type planPriority struct {
	Priority    int32    `json:"priority"`
	Classes     []string `json:"classes"`
	Utilization *float64 `json:"utilization"`
	MeanService *float64 `json:"meanServiceSeconds"`
	ServiceSCV  *float64 `json:"serviceSCV"`
	MeanWait    *float64 `json:"meanWaitSeconds"`
	P90Wait     *float64 `json:"p90WaitSeconds"`
}

func runPlanJSON(t *testing.T, stdin string, args ...string) planReport {
	t.Helper()
	r := runCommand(t, strings.NewReader(stdin), append(args, "-o", "json")...)
	checkOK(t, r)
	var rep planReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("decoding the plan: %v\n%s", err, r.stdout)
	}
	return rep
}

func queueNamed(t *testing.T, rep planReport, name string) planQueue {
	t.Helper()
	for _, q := range rep.ClusterQueues {
		if q.Name == name {
			return q
		}
	}
	t.Fatalf("no ClusterQueue %s in the plan", name)
	return planQueue{}
}

func classNamed(t *testing.T, q planQueue, name string) planClass {
	t.Helper()
	for _, c := range q.Classes {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no class %s in ClusterQueue %s", name, q.Name)
	return planClass{}
}

func checkFloat(t *testing.T, what string, got *float64, want float64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s = null, want %v", what, want)
	} else if !approxEqual(*got, want) {
		t.Errorf("%s = %v, want %v", what, *got, want)
	}
}

func checkInt(t *testing.T, what string, got *int, want int) {
	t.Helper()
	if got == nil {
		t.Errorf("%s = null, want %d", what, want)
	} else if *got != want {
		t.Errorf("%s = %d, want %d", what, *got, want)
	}
}

// TestPlanPaperSetups checks the paper's three experiments against
// hand-computed figures.
func TestPlanPaperSetups(t *testing.T) {
	t.Run("table 2: cpu-bound queue with an unfeasible class", func(t *testing.T) {
		q := queueNamed(t, runPlanJSON(t, "", setupArgs("table2-eval")...), "cq-eval")
		checkInt(t, "kEff", q.KEff, 4)
		if q.BottleneckFlavor != "default-flavor" || q.BottleneckResource != "cpu" {
			t.Errorf("bottleneck = %s/%s, want default-flavor/cpu", q.BottleneckFlavor, q.BottleneckResource)
		}
		// Only the Quotable class loads the queue: ρ = 0.128·20/4.
		checkFloat(t, "arrivalRate", q.ArrivalRate, 0.128)
		checkFloat(t, "utilization", q.Utilization, 0.64)
		checkFloat(t, "probabilityOfWait", q.ProbabilityOfWait, erlangC(4, 0.64))
		checkFloat(t, "meanWait", q.MeanWait, mmkMean(4, 0.64, 20))
		checkFloat(t, "p90", q.P90Wait, p90(erlangC(4, 0.64), mmkMean(4, 0.64, 20)))
		big := classNamed(t, q, "job-20cpu")
		if big.Admissibility != "Unfeasible" || big.Reason != "flavor default-flavor: cpu 20 > potential 2 (nominal 2, borrowable 0)" {
			t.Errorf("job-20cpu = %s %q", big.Admissibility, big.Reason)
		}
		if big.MeanWait != nil || big.Utilization != nil {
			t.Errorf("job-20cpu has figures: wait %v, utilization %v", big.MeanWait, big.Utilization)
		}
		small := classNamed(t, q, "job-500m")
		checkInt(t, "job-500m kEff", small.KEff, 4)
		checkFloat(t, "job-500m meanWait", small.MeanWait, mmkMean(4, 0.64, 20))
	})
	t.Run("table 3: memory is the bottleneck", func(t *testing.T) {
		q := queueNamed(t, runPlanJSON(t, "", setupArgs("table3-vector")...), "cq-2d")
		checkInt(t, "kEff", q.KEff, 4)
		if q.BottleneckResource != "memory" {
			t.Errorf("bottleneck = %s, want memory", q.BottleneckResource)
		}
		checkFloat(t, "utilization", q.Utilization, 0.5)
		checkFloat(t, "meanWait", q.MeanWait, 40.0/23)
	})
	t.Run("table 4: the GPU is the bottleneck", func(t *testing.T) {
		q := queueNamed(t, runPlanJSON(t, "", setupArgs("table4-gpu")...), "cq-gpu")
		checkInt(t, "kEff", q.KEff, 4)
		if q.BottleneckResource != "example.com/gpu" {
			t.Errorf("bottleneck = %s, want example.com/gpu", q.BottleneckResource)
		}
		checkFloat(t, "utilization", q.Utilization, 0.7)
		checkFloat(t, "meanWait", q.MeanWait, mmkMean(4, 0.7, 20))
	})
}

// TestPlanCohort checks borrowing and lending limits as Kueue's snapshot
// applies them, the class mix, priority levels and Whitt's estimate.
func TestPlanCohort(t *testing.T) {
	rep := runPlanJSON(t, "", setupArgs("cohort")...)
	if rep.CapacityBasis != "nominal" {
		t.Errorf("capacityBasis = %q", rep.CapacityBasis)
	}

	// The cohort can lend 8 (team-a) + 2 (team-b's lendingLimit) + 0 cpu.
	// team-a holds 8 and may borrow 4, but only 2 exist beyond its own.
	a := queueNamed(t, rep, "team-a")
	if diff := cmp.Diff([]planCapacity{
		{"on-demand", "cpu", "8", "2", "10"},
		{"on-demand", "memory", "32Gi", "8Gi", "40Gi"},
		{"a100", "example.com/gpu", "2", "0", "2"},
		{"t4", "example.com/gpu", "4", "0", "4"},
	}, a.Capacity); diff != "" {
		t.Errorf("team-a capacity (-want +got):\n%s", diff)
	}
	// Mix of the Quotable classes (6, 36, 1 per hour): mean cpu
	// (6·4 + 36·1 + 1·4.5)/43 = 1.5, so k_eff = ⌊8/1.5⌋ = 5 and, with the
	// 10 cpu it could borrow up to, ⌊10/1.5⌋ = 6.
	checkInt(t, "team-a kEff", a.KEff, 5)
	checkInt(t, "team-a kEffPotential", a.KEffPotential, 6)
	if a.BottleneckResource != "cpu" {
		t.Errorf("team-a bottleneck = %s", a.BottleneckResource)
	}
	huge := classNamed(t, a, "huge")
	if want := "flavor on-demand: cpu 12 > potential 10 (nominal 8, borrowable 2)"; huge.Reason != want {
		t.Errorf("huge reason = %q, want %q", huge.Reason, want)
	}
	checkInt(t, "train kEff", classNamed(t, a, "train").KEff, 2)

	// Priority 100 (train, mpi): ρ = (6/3600·600 + 1/3600·1800)/5 = 0.3;
	// mixture E[S] = 5400/7, E[S²] = (6·600²·3.25 + 1800²·2)/7.
	if len(a.Priorities) != 2 {
		t.Fatalf("team-a has %d priority levels, want 2", len(a.Priorities))
	}
	hi, lo := a.Priorities[0], a.Priorities[1]
	if hi.Priority != 100 || lo.Priority != 0 || !cmp.Equal(hi.Classes, []string{"train", "mpi"}) || !cmp.Equal(lo.Classes, []string{"notebook"}) {
		t.Errorf("levels = %d %v, %d %v", hi.Priority, hi.Classes, lo.Priority, lo.Classes)
	}
	meanHi := 5400.0 / 7
	scvHi := (6*600*600*3.25+1800*1800*2)/7/(meanHi*meanHi) - 1
	checkFloat(t, "priority 100 utilization", hi.Utilization, 0.3)
	checkFloat(t, "priority 100 E[S]", hi.MeanService, meanHi)
	checkFloat(t, "priority 100 C_S²", hi.ServiceSCV, scvHi)
	checkFloat(t, "priority 100 wait", hi.MeanWait, mmkMean(5, 0.3, meanHi)*(scvHi+1)/2)
	checkFloat(t, "priority 100 p90", hi.P90Wait, 0) // C(5, 0.3) < 0.1
	// Priority 0 adds the notebooks: ρ = 4.5/5 = 0.9, E[S] = 16200/43.
	meanLo := 16200.0 / 43
	scvLo := (6*600*600*3.25+36*300*300*1.25+1800*1800*2)/43/(meanLo*meanLo) - 1
	checkFloat(t, "priority 0 utilization", lo.Utilization, 0.9)
	checkFloat(t, "priority 0 wait", lo.MeanWait, mmkMean(5, 0.9, meanLo)*(scvLo+1)/2)
	checkFloat(t, "queue utilization", a.Utilization, 0.9)
	checkFloat(t, "queue wait", a.MeanWait, mmkMean(5, 0.9, meanLo)*(scvLo+1)/2)
	checkFloat(t, "notebook wait", classNamed(t, a, "notebook").MeanWait, mmkMean(5, 0.9, meanLo)*(scvLo+1)/2)
	checkFloat(t, "train wait", classNamed(t, a, "train").MeanWait, mmkMean(5, 0.3, meanHi)*(scvHi+1)/2)

	// team-b lends at most 2 cpu, keeps 6, and can borrow the cohort's 10.
	b := queueNamed(t, rep, "team-b")
	if b.Capacity[0].Potential != "16" || b.Capacity[1].Potential != "64Gi" {
		t.Errorf("team-b potential = %s, %s; want 16, 64Gi", b.Capacity[0].Potential, b.Capacity[1].Potential)
	}
	// Two 1-cpu pods per job: k_eff = 8/2 = 4, ρ = 0.01·120/4 = 0.3. Bursty
	// arrivals (c_a² = 4) raise Whitt's mean to (4+1)/2 of M/M/k's.
	checkInt(t, "team-b kEff", b.KEff, 4)
	checkFloat(t, "team-b wait", b.MeanWait, mmkMean(4, 0.3, 120))
	checkFloat(t, "team-b Whitt", b.WhittMeanWait, 2.5*mmkMean(4, 0.3, 120))
	if len(b.Notes) != 1 || !strings.HasPrefix(b.Notes[0], "StrictFIFO") {
		t.Errorf("team-b notes = %q, want the StrictFIFO caveat", b.Notes)
	}

	// scavenger has no nominal quota: no server in the paper's model.
	s := queueNamed(t, rep, "scavenger")
	checkInt(t, "scavenger kEff", s.KEff, 0)
	checkInt(t, "scavenger kEffPotential", s.KEffPotential, 10)
	if s.Utilization != nil || s.MeanWait != nil || s.Stable != nil {
		t.Errorf("scavenger has figures: %v %v %v", s.Utilization, s.MeanWait, s.Stable)
	}

	spot := queueNamed(t, rep, "spot-only")
	if spot.Active || !strings.Contains(spot.InactiveReason, "references missing ResourceFlavor(s): spot") {
		t.Errorf("spot-only active = %v, reason %q", spot.Active, spot.InactiveReason)
	}
	if c := classNamed(t, spot, "spot-batch"); c.Admissibility != "Unfeasible" || !strings.Contains(c.Reason, "is inactive") {
		t.Errorf("spot-batch = %s %q", c.Admissibility, c.Reason)
	}
}

func TestPlanPotentialBasis(t *testing.T) {
	rep := runPlanJSON(t, "", append(setupArgs("cohort"), "--capacity-basis", "potential")...)
	if rep.CapacityBasis != "potential" {
		t.Errorf("capacityBasis = %q", rep.CapacityBasis)
	}
	s := queueNamed(t, rep, "scavenger")
	checkInt(t, "scavenger kEff", s.KEff, 10)
	checkFloat(t, "scavenger utilization", s.Utilization, 0.06)
	checkFloat(t, "scavenger wait", s.MeanWait, mmkMean(10, 0.06, 60))
	checkInt(t, "team-a kEff", queueNamed(t, rep, "team-a").KEff, 6)
}

// eval is a one-queue cluster with which the input tests combine
// documents given on stdin.
const evalCluster = "testdata/table2-eval/cluster.yaml"
const evalClasses = "testdata/table2-eval/classes.yaml"

func TestPlanInputs(t *testing.T) {
	t.Run("stdin", func(t *testing.T) {
		classes, err := os.ReadFile(evalClasses)
		if err != nil {
			t.Fatal(err)
		}
		q := queueNamed(t, runPlanJSON(t, string(classes), "plan", "-f", evalCluster, "-f", "-"), "cq-eval")
		checkInt(t, "kEff", q.KEff, 4)
	})
	t.Run("directory", func(t *testing.T) {
		q := queueNamed(t, runPlanJSON(t, "", "plan", "-f", "testdata/table3-vector"), "cq-2d")
		checkInt(t, "kEff", q.KEff, 4)
	})
	t.Run("v1beta1 objects are converted", func(t *testing.T) {
		const v1beta1 = `
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq-eval}
spec:
  cohort: legacy
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 3}
      - {name: memory, nominalQuota: 1Gi}
`
		rep := runPlanJSON(t, v1beta1, "plan", "-f", "-", "-f", evalClasses)
		q := queueNamed(t, rep, "cq-eval")
		checkInt(t, "kEff", q.KEff, 6)
		var raw map[string]any
		r := runCommand(t, strings.NewReader(v1beta1), "plan", "-f", "-", "-f", evalClasses, "-o", "json")
		if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil {
			t.Fatal(err)
		}
		if got := raw["clusterQueues"].([]any)[0].(map[string]any)["cohort"]; got != "legacy" {
			t.Errorf("cohort = %v, want legacy (v1beta1 spec.cohort)", got)
		}
	})
	t.Run("other kueue kinds are skipped with a note", func(t *testing.T) {
		const extra = `
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq-eval}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
`
		rep := runPlanJSON(t, extra, "plan", "-f", evalCluster, "-f", evalClasses, "-f", "-")
		want := []string{
			"ignored 1 LocalQueue object(s): they do not change quotas",
			"ignored 1 WorkloadPriorityClass object(s): they do not change quotas",
		}
		if diff := cmp.Diff(want, rep.Notes); diff != "" {
			t.Errorf("notes (-want +got):\n%s", diff)
		}
	})
	t.Run("topology and admission checks are dropped with a note", func(t *testing.T) {
		const tas = `
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: tas-flavor}
spec:
  topologyName: default
  nodeLabels: {pool: tas}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq-eval}
spec:
  admissionChecksStrategy:
    admissionChecks:
    - name: prov
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: tas-flavor
      resources:
      - {name: cpu, nominalQuota: 2}
      - {name: memory, nominalQuota: 1Gi}
`
		rep := runPlanJSON(t, tas, "plan", "-f", "-", "-f", evalClasses)
		q := queueNamed(t, rep, "cq-eval")
		if !q.Active {
			t.Fatalf("cq-eval inactive: %s", q.InactiveReason)
		}
		checkInt(t, "kEff", q.KEff, 4)
		want := []string{
			"topology-aware scheduling is not modelled: the topology of ResourceFlavor(s) [tas-flavor] is ignored (quotas only)",
			"admission checks are not modelled: those of ClusterQueue(s) [cq-eval] are ignored (quotas only)",
		}
		if diff := cmp.Diff(want, rep.Notes); diff != "" {
			t.Errorf("notes (-want +got):\n%s", diff)
		}
	})
	t.Run("stopped queue is inactive", func(t *testing.T) {
		const stopped = `
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: f}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq-eval}
spec:
  stopPolicy: Hold
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: f
      resources:
      - {name: cpu, nominalQuota: 2}
      - {name: memory, nominalQuota: 1Gi}
`
		q := queueNamed(t, runPlanJSON(t, stopped, "plan", "-f", "-", "-f", evalClasses), "cq-eval")
		if q.Active || !strings.Contains(q.InactiveReason, "Stopped") {
			t.Errorf("active = %v, reason %q", q.Active, q.InactiveReason)
		}
	})
	t.Run("queue without classes and classes without arrivals", func(t *testing.T) {
		const idle = `
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: other}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 1}
---
apiVersion: kueue-waittime.x-k8s.io/v1alpha1
kind: WorkloadClasses
classes:
- name: a
  clusterQueue: cq-eval
  podSets: [{requests: {cpu: 1}}]
  arrivalRate: 0
  meanService: 10s
- name: b
  clusterQueue: cq-eval
  podSets: [{requests: {cpu: 250m}}]
  arrivalRate: 0
  meanService: 30s
`
		rep := runPlanJSON(t, idle, "plan", "-f", evalCluster, "-f", "-")
		other := queueNamed(t, rep, "other")
		if other.KEff != nil || len(other.Classes) != 0 || !cmp.Equal(other.Notes, []string{"no workload class targets this ClusterQueue"}) {
			t.Errorf("other: kEff %v, classes %v, notes %q", other.KEff, other.Classes, other.Notes)
		}
		// Equal weights without arrivals: mean cpu 625m, k = ⌊2000/625⌋ = 3.
		q := queueNamed(t, rep, "cq-eval")
		checkInt(t, "kEff", q.KEff, 3)
		checkFloat(t, "utilization", q.Utilization, 0)
		checkFloat(t, "meanWait", q.MeanWait, 0)
	})
	t.Run("unstable queue", func(t *testing.T) {
		const heavy = `
apiVersion: kueue-waittime.x-k8s.io/v1alpha1
kind: WorkloadClasses
classes:
- name: flood
  clusterQueue: cq-eval
  podSets: [{requests: {cpu: 500m}}]
  arrivalRate: 1
  meanService: 20s
`
		q := queueNamed(t, runPlanJSON(t, heavy, "plan", "-f", evalCluster, "-f", "-"), "cq-eval")
		checkFloat(t, "utilization", q.Utilization, 5)
		if q.Stable == nil || *q.Stable || q.MeanWait != nil || q.P90Wait != nil || q.ProbabilityOfWait != nil {
			t.Errorf("stable %v, figures %v %v %v", q.Stable, q.MeanWait, q.P90Wait, q.ProbabilityOfWait)
		}
		r := runCommand(t, strings.NewReader(heavy), "plan", "-f", evalCluster, "-f", "-")
		checkOK(t, r)
		if !strings.Contains(r.stdout, "stability          unstable (ρ ≥ 1): no finite mean wait") {
			t.Errorf("table lacks the unstable line:\n%s", r.stdout)
		}
	})
}

func TestPlanInvalidInput(t *testing.T) {
	const p = "kueue-waittime plan: "
	cq := func(spec string) string {
		return "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq-eval}\nspec:\n" + spec
	}
	classes := func(body string) string {
		return "apiVersion: kueue-waittime.x-k8s.io/v1alpha1\nkind: WorkloadClasses\nclasses:\n" + body
	}
	cases := map[string]struct {
		args  []string
		stdin string
		want  string
	}{
		"no file": {
			args: []string{},
			want: p + "-f is required: give the manifest and workload-class files",
		},
		"missing file": {
			args: []string{"-f", "testdata/nope.yaml"},
			want: p + "-f testdata/nope.yaml: no such file or directory",
		},
		"stdin twice": {
			args: []string{"-f", "-", "-f", "-"},
			want: p + "-f - (stdin) can be given only once",
		},
		"bad capacity basis": {
			args: []string{"-f", evalCluster, "--capacity-basis", "expected"},
			want: p + `--capacity-basis: must be nominal or potential, got "expected"`,
		},
		"bad output": {
			args: []string{"-f", evalCluster, "-o", "yaml"},
			want: p + `--output: must be table or json, got "yaml"`,
		},
		"positional argument": {
			args: []string{"cluster.yaml"},
			want: p + `unknown command "cluster.yaml" for "kueue-waittime plan"`,
		},
		"no workload classes": {
			args: []string{"-f", evalCluster},
			want: p + "no WorkloadClasses document in the input: give the workload classes with -f",
		},
		"no cluster queue": {
			args: []string{"-f", evalClasses},
			want: p + "no ClusterQueue in the input: give the cluster's manifests with -f",
		},
		"unknown kind": {
			args:  []string{"-f", evalCluster, "-f", evalClasses, "-f", "-"},
			stdin: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
			want:  p + "stdin: document 1: unsupported kind ConfigMap (apiVersion v1): plan reads ResourceFlavor, Cohort and ClusterQueue (kueue.x-k8s.io), WorkloadClasses (kueue-waittime.x-k8s.io/v1alpha1) and List",
		},
		"unknown kueue kind": {
			args:  []string{"-f", evalCluster, "-f", evalClasses, "-f", "-"},
			stdin: "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Frobnicator\nmetadata: {name: x}\n",
			want:  p + "stdin: document 1: unsupported kind Frobnicator (apiVersion kueue.x-k8s.io/v1beta2): plan reads ResourceFlavor, Cohort and ClusterQueue of kueue.x-k8s.io/v1beta2 or v1beta1",
		},
		"missing kind": {
			args:  []string{"-f", evalCluster, "-f", evalClasses, "-f", "-"},
			stdin: "---\n# a comment only\n---\napiVersion: v1\nmetadata: {name: x}\n",
			want:  p + "stdin: document 2: apiVersion and kind are required",
		},
		"not an object": {
			args:  []string{"-f", evalCluster, "-f", evalClasses, "-f", "-"},
			stdin: "- a\n- b\n",
			want:  p + "stdin: document 1: want an object with apiVersion and kind",
		},
		"bad item in a list": {
			args:  []string{"-f", evalCluster, "-f", evalClasses, "-f", "-"},
			stdin: "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n",
			want:  p + "stdin: document 1: items[0]: unsupported kind Pod (apiVersion v1): plan reads ResourceFlavor, Cohort and ClusterQueue (kueue.x-k8s.io), WorkloadClasses (kueue-waittime.x-k8s.io/v1alpha1) and List",
		},
		"unknown field in a cluster queue": {
			args:  []string{"-f", evalClasses, "-f", "-"},
			stdin: cq("  resourceGroupz: []\n"),
			want:  p + `stdin: document 1: ClusterQueue: strict decoding error: unknown field "spec.resourceGroupz"`,
		},
		"malformed quota": {
			args:  []string{"-f", evalClasses, "-f", "-"},
			stdin: cq("  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: f\n      resources:\n      - {name: cpu, nominalQuota: 2x}\n"),
			want:  p + "stdin: document 1: ClusterQueue: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
		},
		"negative quota fails kueue validation": {
			args:  []string{"-f", evalClasses, "-f", "-"},
			stdin: cq("  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: f\n      resources:\n      - {name: cpu, nominalQuota: -2}\n"),
			want:  p + `stdin: document 1: ClusterQueue cq-eval: spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Invalid value: "-2": must be greater than or equal to 0`,
		},
		"flavor missing a covered resource": {
			args:  []string{"-f", evalClasses, "-f", "-"},
			stdin: cq("  resourceGroups:\n  - coveredResources: [cpu, memory]\n    flavors:\n    - name: f\n      resources:\n      - {name: cpu, nominalQuota: 2}\n"),
			want:  p + "stdin: document 1: ClusterQueue cq-eval: spec.resourceGroups[0].flavors[0] (f): flavors must have the same number of resources as the coveredResources (2, got 1)",
		},
		"cluster queue twice": {
			args: []string{"-f", evalCluster, "-f", evalCluster, "-f", evalClasses},
			want: p + "ResourceFlavor default-flavor is defined twice",
		},
		"class twice": {
			args: []string{"-f", evalCluster, "-f", evalClasses, "-f", evalClasses},
			want: p + "workload class job-500m is defined twice",
		},
		"unknown cluster queue": {
			args:  []string{"-f", evalCluster, "-f", "-"},
			stdin: classes("- {name: x, clusterQueue: cq-nope, podSets: [{requests: {cpu: 1}}], arrivalRate: 1, meanService: 1s}\n"),
			want:  p + `workload class x: unknown ClusterQueue "cq-nope" (the input defines cq-eval)`,
		},
		"malformed request": {
			args:  []string{"-f", evalCluster, "-f", "-"},
			stdin: classes("- {name: x, clusterQueue: cq-eval, podSets: [{requests: {cpu: 5x00m}}], arrivalRate: 1, meanService: 1s}\n"),
			want:  p + `stdin: document 1: WorkloadClasses: classes[0] (x): podSets[0].requests.cpu: malformed quantity "5x00m" (want Kubernetes notation such as 500m, 2, 64Mi)`,
		},
		"negative request": {
			args:  []string{"-f", evalCluster, "-f", "-"},
			stdin: classes("- {name: x, clusterQueue: cq-eval, podSets: [{requests: {memory: -1Gi}}], arrivalRate: 1, meanService: 1s}\n"),
			want:  p + `stdin: document 1: WorkloadClasses: classes[0] (x): podSets[0].requests.memory: must be >= 0, got "-1Gi"`,
		},
		"unknown class field": {
			args:  []string{"-f", evalCluster, "-f", "-"},
			stdin: classes("- {name: x, clusterQueue: cq-eval, podSets: [{requests: {cpu: 1}}], arivalRate: 1, meanService: 1s}\n"),
			want:  p + `stdin: document 1: WorkloadClasses: json: unknown field "arivalRate"`,
		},
		"no classes": {
			args:  []string{"-f", evalCluster, "-f", "-"},
			stdin: "apiVersion: kueue-waittime.x-k8s.io/v1alpha1\nkind: WorkloadClasses\nclasses: []\n",
			want:  p + "stdin: document 1: WorkloadClasses: classes: at least one class is required",
		},
		"class without name": {
			args:  []string{"-f", evalCluster, "-f", "-"},
			stdin: classes("- {clusterQueue: cq-eval, podSets: [{requests: {cpu: 1}}], arrivalRate: 1, meanService: 1s}\n"),
			want:  p + "stdin: document 1: WorkloadClasses: classes[0]: name is required",
		},
		"both arrival forms": {
			args:  []string{"-f", evalCluster, "-f", "-"},
			stdin: classes("- {name: x, clusterQueue: cq-eval, podSets: [{requests: {cpu: 1}}], arrivalRate: 1, arrivalsPerHour: 1, meanService: 1s}\n"),
			want:  p + "stdin: document 1: WorkloadClasses: classes[0] (x): arrivalRate and arrivalsPerHour exclude each other",
		},
		"no arrivals": {
			args:  []string{"-f", evalCluster, "-f", "-"},
			stdin: classes("- {name: x, clusterQueue: cq-eval, podSets: [{requests: {cpu: 1}}], meanService: 1s}\n"),
			want:  p + "stdin: document 1: WorkloadClasses: classes[0] (x): one of arrivalRate (per second) or arrivalsPerHour is required",
		},
		"negative arrival rate": {
			args:  []string{"-f", evalCluster, "-f", "-"},
			stdin: classes("- {name: x, clusterQueue: cq-eval, podSets: [{requests: {cpu: 1}}], arrivalsPerHour: -3, meanService: 1s}\n"),
			want:  p + "stdin: document 1: WorkloadClasses: classes[0] (x): arrivalsPerHour must be a finite number >= 0, got -3",
		},
		"no mean service": {
			args:  []string{"-f", evalCluster, "-f", "-"},
			stdin: classes("- {name: x, clusterQueue: cq-eval, podSets: [{requests: {cpu: 1}}], arrivalRate: 1}\n"),
			want:  p + "stdin: document 1: WorkloadClasses: classes[0] (x): meanService is required (a Go duration such as 20s)",
		},
		"mean service in bare seconds": {
			args:  []string{"-f", evalCluster, "-f", "-"},
			stdin: classes("- {name: x, clusterQueue: cq-eval, podSets: [{requests: {cpu: 1}}], arrivalRate: 1, meanService: 20}\n"),
			want:  p + `stdin: document 1: WorkloadClasses: classes[0] (x): meanService: must be a Go duration such as 20s or 1m30s, got "20"`,
		},
		"negative service cv": {
			args:  []string{"-f", evalCluster, "-f", "-"},
			stdin: classes("- {name: x, clusterQueue: cq-eval, podSets: [{requests: {cpu: 1}}], arrivalRate: 1, meanService: 1s, serviceCV: -1}\n"),
			want:  p + "stdin: document 1: WorkloadClasses: classes[0] (x): serviceCV must be a finite number >= 0, got -1",
		},
		"zero count": {
			args:  []string{"-f", evalCluster, "-f", "-"},
			stdin: classes("- {name: x, clusterQueue: cq-eval, podSets: [{count: 0, requests: {cpu: 1}}], arrivalRate: 1, meanService: 1s}\n"),
			want:  p + "stdin: document 1: WorkloadClasses: classes[0] (x): podSets[0]: count must be >= 1, got 0",
		},
		"requests nothing": {
			args:  []string{"-f", evalCluster, "-f", "-"},
			stdin: classes("- {name: x, clusterQueue: cq-eval, podSets: [{requests: {cpu: 0}}], arrivalRate: 1, meanService: 1s}\n"),
			want:  p + "stdin: document 1: WorkloadClasses: classes[0] (x): podSets: the class requests no resource (every request is 0)",
		},
		"requests pods": {
			args:  []string{"-f", evalCluster, "-f", "-"},
			stdin: classes("- {name: x, clusterQueue: cq-eval, podSets: [{requests: {pods: 1}}], arrivalRate: 1, meanService: 1s}\n"),
			want:  p + "stdin: document 1: WorkloadClasses: classes[0] (x): podSets[0].requests: pods is not requested: each pod counts as one against a pods quota",
		},
		"duplicate pod set": {
			args:  []string{"-f", evalCluster, "-f", "-"},
			stdin: classes("- {name: x, clusterQueue: cq-eval, podSets: [{name: a, requests: {cpu: 1}}, {name: a, requests: {cpu: 1}}], arrivalRate: 1, meanService: 1s}\n"),
			want:  p + `stdin: document 1: WorkloadClasses: classes[0] (x): podSets[1]: pod set name "a" is used twice`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkUsageError(t, runCommand(t, strings.NewReader(tc.stdin), append([]string{"plan"}, tc.args...)...), tc.want)
		})
	}
}

// TestPlanTieNamesTheEstimatorsBottleneck checks that plan converts a
// ClusterQueue as the estimator does (convert.ClusterQueueCapacity): on a
// k_eff tie between memory and cpu, written memory first, both name cpu.
func TestPlanTieNamesTheEstimatorsBottleneck(t *testing.T) {
	const manifests = `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  resourceGroups:
  - coveredResources: [memory, cpu]
    flavors:
    - name: default
      resources:
      - {name: memory, nominalQuota: 2Gi}
      - {name: cpu, nominalQuota: "4"}
---
apiVersion: kueue-waittime.x-k8s.io/v1alpha1
kind: WorkloadClasses
classes:
- name: tie
  clusterQueue: cq
  podSets:
  - name: main
    requests: {cpu: "1", memory: 512Mi}
  arrivalRate: 0.1
  meanService: 20s
`
	r := runCommand(t, strings.NewReader(manifests), "plan", "-f", "-", "-o", "json")
	checkOK(t, r)
	var report struct {
		ClusterQueues []struct {
			KEff               int    `json:"kEff"`
			BottleneckResource string `json:"bottleneckResource"`
		} `json:"clusterQueues"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil {
		t.Fatalf("%v in\n%s", err, r.stdout)
	}
	if len(report.ClusterQueues) != 1 || report.ClusterQueues[0].KEff != 4 || report.ClusterQueues[0].BottleneckResource != "cpu" {
		t.Errorf("got %+v, want k_eff 4 by cpu\n%s", report.ClusterQueues, r.stdout)
	}
}
