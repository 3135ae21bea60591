package scenario

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// validSpec is a valid two-queue cohort with two flavors, priorities, an
// unfeasible fraction and DRA; tests change one thing in it.
func validSpec() *Spec {
	return &Spec{
		Name:            "test",
		Flavors:         []string{"default", "spot"},
		PriorityClasses: map[string]int32{"low": 100, "high": 1000},
		ClusterQueues: []QueueSpec{
			{
				Name:             "team-a",
				Cohort:           "research",
				QueueingStrategy: "BestEffortFIFO",
				Preemption:       &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority},
				Quota: map[string]map[string]QuotaSpec{
					"default": {"cpu": {Nominal: "2", BorrowingLimit: "4"}, "memory": {Nominal: "4Gi"}, "example.com/gpu": {Nominal: "2"}},
					"spot":    {"cpu": {Nominal: "1"}, "memory": {Nominal: "2Gi"}, "example.com/gpu": {Nominal: "0"}},
				},
				Utilization: new(0.8),
				Arrivals:    ArrivalsSpec{Process: "poisson"},
				Classes: []ClassSpec{
					{
						Name: "small", Share: 0.7, Demand: map[string]string{"cpu": "500m", "memory": "256Mi"}, Priority: "low",
						MeanService: Duration{2 * time.Second}, Service: ServiceSpec{Distribution: "exponential"},
					},
					{
						Name: "large", Share: 0.3, Demand: map[string]string{"cpu": "1500m", "memory": "1Gi"}, Priority: "high",
						MeanService: Duration{4 * time.Second}, Service: ServiceSpec{Distribution: "erlang", Shape: 2},
						UnfeasibleFraction: 0.05, UnfeasibleDemand: map[string]string{"cpu": "20"},
						DRA: &DRASpec{DeviceClass: "gpu.example.com", Resource: "example.com/gpu", Count: 1},
					},
				},
			},
			{
				Name:        "team-b",
				Cohort:      "research",
				Preemption:  &kueue.ClusterQueuePreemption{ReclaimWithinCohort: kueue.PreemptionPolicyAny},
				Quota:       map[string]map[string]QuotaSpec{"default": {"cpu": {Nominal: "2", LendingLimit: "1"}, "memory": {Nominal: "4Gi"}}},
				ArrivalRate: "0.5/s",
				Classes: []ClassSpec{
					{Name: "batch", Share: 1, Demand: map[string]string{"cpu": "1", "memory": "1Gi"}, MeanService: Duration{time.Second}},
				},
			},
		},
		Levels:    []float64{0.6, 0.8},
		Workloads: 100,
		Seed:      1,
	}
}

func TestSpecValidate(t *testing.T) {
	const quantityFormat = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
	a := func(s *Spec) *QueueSpec { return &s.ClusterQueues[0] }
	b := func(s *Spec) *QueueSpec { return &s.ClusterQueues[1] }
	cases := map[string]struct {
		change  func(*Spec)
		wantErr string
	}{
		"valid":             {change: func(*Spec) {}},
		"defaults applied":  {change: func(s *Spec) { s.SetDefaults() }},
		"default flavor":    {change: func(s *Spec) { s.Flavors = nil; delete(a(s).Quota, "spot") }},
		"warmup 0":          {change: func(s *Spec) { s.Warmup = new(0.0) }},
		"prior mean":        {change: func(s *Spec) { s.Prior = PriorMean }},
		"prior none":        {change: func(s *Spec) { s.Prior = PriorNone }},
		"prior unknown":     {change: func(s *Spec) { s.Prior = "0s" }, wantErr: `prior: must be mean (the classes' true mean service time, the default) or none (no prior: workloads of a bounded service declare their maximum execution time), got "0s"`},
		"strict fifo":       {change: func(s *Spec) { b(s).QueueingStrategy = "StrictFIFO" }},
		"no priority":       {change: func(s *Spec) { a(s).Classes[0].Priority = "" }},
		"rate per minute":   {change: func(s *Spec) { b(s).ArrivalRate = "30/m" }},
		"shares within eps": {change: func(s *Spec) { a(s).Classes[0].Share, a(s).Classes[1].Share = 0.1+0.2, 0.7 }},
		"borrow within cohort": {change: func(s *Spec) {
			b(s).Preemption.BorrowWithinCohort = &kueue.BorrowWithinCohort{Policy: kueue.BorrowWithinCohortPolicyLowerPriority, MaxPriorityThreshold: new(int32(100))}
		}},
		"no name": {change: func(s *Spec) { s.Name = "" }, wantErr: "name: is required"},
		"bad flavor name": {
			change:  func(s *Spec) { s.Flavors[1] = "Spot" },
			wantErr: `flavors[1]: "Spot" is not a DNS-1123 label (lower-case alphanumerics and '-', at most 63 characters)`,
		},
		"duplicate flavor": {change: func(s *Spec) { s.Flavors[1] = "default" }, wantErr: `flavors[1]: "default" is also flavors[0]`},
		"bad priority class name": {
			change:  func(s *Spec) { s.PriorityClasses["High_1"] = 5 },
			wantErr: `priorityClasses.High_1: "High_1" is not a DNS-1123 label (lower-case alphanumerics and '-', at most 63 characters)`,
		},
		"no levels":         {change: func(s *Spec) { s.Levels = nil }, wantErr: "levels: at least one level is required"},
		"negative level":    {change: func(s *Spec) { s.Levels[1] = -0.5 }, wantErr: "levels[1]: must be > 0 and finite, got -0.5"},
		"duplicate level":   {change: func(s *Spec) { s.Levels = []float64{0.6, 0.8, 0.6} }, wantErr: "levels[2]: 0.6 is also levels[0]"},
		"one workload":      {change: func(s *Spec) { s.Workloads = 1 }, wantErr: "workloads: must be at least 2, got 1"},
		"zero seeds":        {change: func(s *Spec) { s.Seeds = new(0) }, wantErr: "seeds: must be in 1..20, got 0"},
		"too many seeds":    {change: func(s *Spec) { s.Seeds = new(21) }, wantErr: "seeds: must be in 1..20, got 21"},
		"negative parallel": {change: func(s *Spec) { s.Parallel = -1 }, wantErr: "parallel: must be ≥ 0, got -1"},
		"warmup too large":  {change: func(s *Spec) { s.Warmup = new(0.95) }, wantErr: "warmup: must be in [0, 0.9], got 0.95"},
		"negative warmup":   {change: func(s *Spec) { s.Warmup = new(-0.1) }, wantErr: "warmup: must be in [0, 0.9], got -0.1"},
		"no cluster queues": {change: func(s *Spec) { s.ClusterQueues = nil }, wantErr: "clusterQueues: at least one ClusterQueue is required"},
		"no queue name":     {change: func(s *Spec) { b(s).Name = "" }, wantErr: "clusterQueues[1].name: is required"},
		"duplicate queue":   {change: func(s *Spec) { b(s).Name = "team-a" }, wantErr: `clusterQueues[1].name: "team-a" is also the name of clusterQueues[0]`},
		"bad cohort name":   {change: func(s *Spec) { b(s).Cohort = "re.search" }, wantErr: `clusterQueues[1].cohort: "re.search" is not a DNS-1123 label (lower-case alphanumerics and '-', at most 63 characters)`},
		"bad queueing":      {change: func(s *Spec) { a(s).QueueingStrategy = "FIFO" }, wantErr: `clusterQueues[0].queueingStrategy: must be BestEffortFIFO or StrictFIFO, got "FIFO"`},
		"bad within cq":     {change: func(s *Spec) { a(s).Preemption.WithinClusterQueue = "Always" }, wantErr: `clusterQueues[0].preemption.withinClusterQueue: must be Never, LowerPriority or LowerOrNewerEqualPriority, got "Always"`},
		"bad reclaim":       {change: func(s *Spec) { b(s).Preemption.ReclaimWithinCohort = "LowerOrNewerEqualPriority" }, wantErr: `clusterQueues[1].preemption.reclaimWithinCohort: must be Never, LowerPriority or Any, got "LowerOrNewerEqualPriority"`},
		"bad borrow policy": {change: func(s *Spec) { b(s).Preemption.BorrowWithinCohort = &kueue.BorrowWithinCohort{Policy: "Any"} }, wantErr: `clusterQueues[1].preemption.borrowWithinCohort.policy: must be Never or LowerPriority, got "Any"`},
		"threshold no policy": {change: func(s *Spec) {
			b(s).Preemption.BorrowWithinCohort = &kueue.BorrowWithinCohort{MaxPriorityThreshold: new(int32(1))}
		}, wantErr: "clusterQueues[1].preemption.borrowWithinCohort.maxPriorityThreshold: needs policy LowerPriority"},
		"borrow without reclaim": {
			change: func(s *Spec) {
				a(s).Preemption.BorrowWithinCohort = &kueue.BorrowWithinCohort{Policy: kueue.BorrowWithinCohortPolicyLowerPriority}
			},
			wantErr: "clusterQueues[0].preemption.borrowWithinCohort.policy: LowerPriority needs reclaimWithinCohort LowerPriority or Any (Kueue rejects it with Never)",
		},
		"reclaim without cohort": {
			change:  func(s *Spec) { b(s).Cohort = ""; b(s).Quota["default"]["cpu"] = QuotaSpec{Nominal: "2"} },
			wantErr: "clusterQueues[1].preemption: reclaimWithinCohort and borrowWithinCohort need a cohort",
		},
		"no quota":       {change: func(s *Spec) { b(s).Quota = nil }, wantErr: "clusterQueues[1].quota: is required"},
		"unknown flavor": {change: func(s *Spec) { a(s).Quota["gpu"] = a(s).Quota["spot"] }, wantErr: `clusterQueues[0].quota.gpu: flavor "gpu" is not in flavors (default, spot)`},
		"flavors differ": {
			change:  func(s *Spec) { delete(a(s).Quota["spot"], "example.com/gpu") },
			wantErr: "clusterQueues[0].quota.spot: gives cpu, memory but clusterQueues[0].quota.default gives cpu, example.com/gpu, memory: Kueue puts the resources of a ClusterQueue in one resource group, where every flavor gives the same resources",
		},
		"bad resource name": {
			change:  func(s *Spec) { b(s).Quota["default"]["a/b/c"] = QuotaSpec{Nominal: "1"} },
			wantErr: `clusterQueues[1].quota.default.a/b/c: "a/b/c" is not a valid resource name (a qualified name, e.g. cpu or example.com/gpu)`,
		},
		"no nominal":       {change: func(s *Spec) { b(s).Quota["default"]["memory"] = QuotaSpec{} }, wantErr: "clusterQueues[1].quota.default.memory.nominal: is required"},
		"bad nominal":      {change: func(s *Spec) { b(s).Quota["default"]["memory"] = QuotaSpec{Nominal: "two"} }, wantErr: `clusterQueues[1].quota.default.memory.nominal: "two" is not a quantity: ` + quantityFormat},
		"negative nominal": {change: func(s *Spec) { b(s).Quota["default"]["memory"] = QuotaSpec{Nominal: "-1Gi"} }, wantErr: "clusterQueues[1].quota.default.memory.nominal: must be ≥ 0, got -1Gi"},
		"lending over nominal": {
			change:  func(s *Spec) { b(s).Quota["default"]["cpu"] = QuotaSpec{Nominal: "2", LendingLimit: "3"} },
			wantErr: "clusterQueues[1].quota.default.cpu.lendingLimit: 3 exceeds the nominal quota 2",
		},
		"borrowing without cohort": {
			change:  func(s *Spec) { a(s).Cohort = "" },
			wantErr: "clusterQueues[0].quota.default.cpu.borrowingLimit: needs a cohort",
		},
		"bad borrowing limit": {
			change:  func(s *Spec) { a(s).Quota["default"]["cpu"] = QuotaSpec{Nominal: "2", BorrowingLimit: "lots"} },
			wantErr: `clusterQueues[0].quota.default.cpu.borrowingLimit: "lots" is not a quantity: ` + quantityFormat,
		},
		"utilization and rate": {change: func(s *Spec) { b(s).Utilization = new(0.5) }, wantErr: "clusterQueues[1]: utilization and arrivalRate are exclusive: give one"},
		"no load":              {change: func(s *Spec) { b(s).ArrivalRate = "" }, wantErr: "clusterQueues[1]: give utilization (the target ρ over the nominal k_eff) or arrivalRate"},
		"zero utilization":     {change: func(s *Spec) { a(s).Utilization = new(0.0) }, wantErr: "clusterQueues[0].utilization: must be > 0 and finite, got 0"},
		"rate without unit":    {change: func(s *Spec) { b(s).ArrivalRate = "2" }, wantErr: `clusterQueues[1].arrivalRate: "2": want arrivals per unit of time, e.g. "1.5/s" (units s, m, h)`},
		"zero rate":            {change: func(s *Spec) { b(s).ArrivalRate = "0/s" }, wantErr: `clusterQueues[1].arrivalRate: "0/s": the rate must be a number > 0`},
		"rate unit":            {change: func(s *Spec) { b(s).ArrivalRate = "2/d" }, wantErr: `clusterQueues[1].arrivalRate: "2/d": unknown unit "d" (want s, m or h)`},
		"bad process":          {change: func(s *Spec) { a(s).Arrivals.Process = "gamma" }, wantErr: `clusterQueues[0].arrivals.process: must be poisson, periodic or bursty, got "gamma"`},
		"bursty of one":        {change: func(s *Spec) { a(s).Arrivals = ArrivalsSpec{Process: "bursty", BurstSize: 1} }, wantErr: "clusterQueues[0].arrivals.burstSize: bursty arrivals need burstSize ≥ 2, got 1"},
		"no classes":           {change: func(s *Spec) { b(s).Classes = nil }, wantErr: "clusterQueues[1].classes: at least one class is required"},
		"bad class name":       {change: func(s *Spec) { a(s).Classes[1].Name = "Large" }, wantErr: `clusterQueues[0].classes[1].name: "Large" is not a DNS-1123 label (lower-case alphanumerics and '-', at most 63 characters)`},
		"duplicate class":      {change: func(s *Spec) { a(s).Classes[1].Name = "small" }, wantErr: `clusterQueues[0].classes[1].name: "small" is also the name of clusterQueues[0].classes[0]`},
		"share above 1":        {change: func(s *Spec) { b(s).Classes[0].Share = 1.5 }, wantErr: "clusterQueues[1].classes[0].share: must be in (0, 1], got 1.5"},
		"zero share":           {change: func(s *Spec) { a(s).Classes[0].Share = 0 }, wantErr: "clusterQueues[0].classes[0].share: must be in (0, 1], got 0"},
		"shares below 1":       {change: func(s *Spec) { a(s).Classes[0].Share = 0.5 }, wantErr: "clusterQueues[0].classes: shares sum to 0.8, want 1"},
		"unknown priority":     {change: func(s *Spec) { a(s).Classes[0].Priority = "medium" }, wantErr: `clusterQueues[0].classes[0].priority: "medium" is not in priorityClasses (high, low)`},
		"no mean service":      {change: func(s *Spec) { b(s).Classes[0].MeanService = Duration{} }, wantErr: "clusterQueues[1].classes[0].meanService: must be > 0, got 0s"},
		"erlang without shape": {change: func(s *Spec) { a(s).Classes[1].Service.Shape = 0 }, wantErr: "clusterQueues[0].classes[1].service.shape: erlang service needs shape ≥ 1, got 0"},
		"lognormal without cv": {change: func(s *Spec) { a(s).Classes[1].Service = ServiceSpec{Distribution: "lognormal"} }, wantErr: "clusterQueues[0].classes[1].service.cv: lognormal service needs cv > 0, got 0"},
		"unknown service":      {change: func(s *Spec) { a(s).Classes[1].Service = ServiceSpec{Distribution: "pareto"} }, wantErr: `clusterQueues[0].classes[1].service.distribution: must be exponential, erlang, lognormal or deterministic, got "pareto"`},
		"negative truncation":  {change: func(s *Spec) { b(s).Classes[0].Service.TruncateAt = -1 }, wantErr: "clusterQueues[1].classes[0].service.truncateAt: must be ≥ 0 (0: no truncation), got -1"},
		"no demand":            {change: func(s *Spec) { b(s).Classes[0].Demand = nil }, wantErr: "clusterQueues[1].classes[0].demand: is required"},
		"zero demand":          {change: func(s *Spec) { b(s).Classes[0].Demand = map[string]string{"cpu": "0"} }, wantErr: "clusterQueues[1].classes[0].demand: requests nothing"},
		"bad demand":           {change: func(s *Spec) { b(s).Classes[0].Demand["cpu"] = "1 core" }, wantErr: `clusterQueues[1].classes[0].demand.cpu: "1 core" is not a quantity: ` + quantityFormat},
		"demand not covered": {
			change:  func(s *Spec) { b(s).Classes[0].Demand["example.com/gpu"] = "1" },
			wantErr: "clusterQueues[1].classes[0].demand.example.com/gpu: team-b has no quota for example.com/gpu: give it in clusterQueues[1].quota",
		},
		"demand never fits": {
			// team-b keeps 1 CPU and can borrow team-a's 2 and its own 1 lent.
			change:  func(s *Spec) { b(s).Classes[0].Demand["cpu"] = "5" },
			wantErr: "clusterQueues[1].classes[0].demand: team-b can never hold it, even borrowing (default: cpu 5 > 4): give such workloads as unfeasibleDemand",
		},
		"demand fits nowhere": {
			change:  func(s *Spec) { a(s).Classes[1].Demand["cpu"] = "3500m" },
			wantErr: "clusterQueues[0].classes[1].demand: team-a can never hold it, even borrowing (default: cpu 3500m > 3; spot: cpu 3500m > 1): give such workloads as unfeasibleDemand",
		},
		"unfeasible fits": {
			change:  func(s *Spec) { a(s).Classes[1].UnfeasibleDemand = map[string]string{"cpu": "3"} },
			wantErr: "clusterQueues[0].classes[1].unfeasibleDemand: fits flavor default of team-a (nominal quota plus what it can borrow), so these workloads would not be Unfeasible",
		},
		"unfeasible fraction 1":     {change: func(s *Spec) { a(s).Classes[1].UnfeasibleFraction = 1 }, wantErr: "clusterQueues[0].classes[1].unfeasibleFraction: must be in [0, 1), got 1"},
		"unfeasible without demand": {change: func(s *Spec) { a(s).Classes[1].UnfeasibleDemand = nil }, wantErr: "clusterQueues[0].classes[1].unfeasibleDemand: is required with unfeasibleFraction"},
		"unused unfeasible demand":  {change: func(s *Spec) { a(s).Classes[1].UnfeasibleFraction = 0 }, wantErr: "clusterQueues[0].classes[1].unfeasibleDemand: is unused without unfeasibleFraction"},
		"dra without quota": {
			change: func(s *Spec) {
				b(s).Classes[0].DRA = &DRASpec{DeviceClass: "gpu.example.com", Resource: "example.com/gpu", Count: 1}
			},
			wantErr: "clusterQueues[1].classes[0].dra.resource example.com/gpu has no quota: give it in quota, which is where Kueue counts the devices",
		},
		"dra zero count":         {change: func(s *Spec) { a(s).Classes[1].DRA.Count = 0 }, wantErr: "clusterQueues[0].classes[1].dra.count must be at least 1, got 0"},
		"dra resource in demand": {change: func(s *Spec) { a(s).Classes[1].Demand["example.com/gpu"] = "1" }, wantErr: "clusterQueues[0].classes[1].demand must not request example.com/gpu: the dra section requests it through a ResourceClaimTemplate, and Kueue would count both"},
		"dra class mapped twice": {
			change: func(s *Spec) {
				for _, f := range []string{"default", "spot"} {
					a(s).Quota[f]["example.com/tpu"] = QuotaSpec{Nominal: "2"}
				}
				a(s).Classes[0].DRA = &DRASpec{DeviceClass: "gpu.example.com", Resource: "example.com/tpu", Count: 1}
			},
			wantErr: "clusterQueues[0].classes[1].dra.deviceClass: gpu.example.com is mapped to example.com/tpu by clusterQueues[0].classes[0].dra: Kueue maps a DeviceClass to one resource",
		},
		"admission fair sharing with two LocalQueues": {change: func(s *Spec) {
			s.AdmissionFairSharing = &configapi.AdmissionFairSharing{UsageHalfLifeTime: metav1.Duration{Duration: 20 * time.Second},
				UsageSamplingInterval: metav1.Duration{Duration: 5 * time.Second}, ResourceWeights: map[corev1.ResourceName]float64{"memory": 0}}
			a(s).AdmissionFairSharing = true
			a(s).Classes[0].LocalQueue, a(s).Classes[1].LocalQueue = "heavy", "light"
		}},
		"admission fair sharing on a queue only": {
			change:  func(s *Spec) { a(s).AdmissionFairSharing = true },
			wantErr: "clusterQueues[0].admissionFairSharing: needs the Spec's admissionFairSharing (the manager's Configuration)",
		},
		"admission fair sharing without a sampling interval": {
			change:  func(s *Spec) { s.AdmissionFairSharing = &configapi.AdmissionFairSharing{} },
			wantErr: "admissionFairSharing.usageSamplingInterval: must be > 0, got 0s",
		},
		"admission fair sharing with a negative half-life": {
			change: func(s *Spec) {
				s.AdmissionFairSharing = &configapi.AdmissionFairSharing{UsageHalfLifeTime: metav1.Duration{Duration: -time.Second},
					UsageSamplingInterval: metav1.Duration{Duration: time.Second}}
			},
			wantErr: "admissionFairSharing.usageHalfLifeTime: must be ≥ 0, got -1s",
		},
		"admission fair sharing with a negative resource weight": {
			change: func(s *Spec) {
				s.AdmissionFairSharing = &configapi.AdmissionFairSharing{UsageSamplingInterval: metav1.Duration{Duration: time.Second},
					ResourceWeights: map[corev1.ResourceName]float64{"cpu": -1}}
			},
			wantErr: "admissionFairSharing.resourceWeights.cpu: must be ≥ 0 and finite, got -1",
		},
		"a LocalQueue that is not a label": {
			change:  func(s *Spec) { a(s).Classes[0].LocalQueue = "Heavy" },
			wantErr: `clusterQueues[0].classes[0].localQueue: "Heavy" is not a DNS-1123 label (lower-case alphanumerics and '-', at most 63 characters)`,
		},
		"a LocalQueue serving two queues": {
			change:  func(s *Spec) { b(s).Classes[0].LocalQueue = "team-a" },
			wantErr: `clusterQueues[1].classes[0].localQueue: LocalQueue "team-a" also serves clusterQueues[0]`,
		},
		"utilization without servers": {
			change: func(s *Spec) {
				b(s).ArrivalRate, b(s).Utilization = "", new(0.5)
				b(s).Classes[0].Demand["cpu"] = "3"
			},
			wantErr: "clusterQueues[1].utilization: the nominal quota holds no workload of the class mix (k_eff 0, bottleneck cpu): give arrivalRate instead",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := validSpec()
			tc.change(s)
			if diff := cmp.Diff(tc.wantErr, errString(s.Validate())); diff != "" {
				t.Errorf("Validate error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSpecFromScenario(t *testing.T) {
	sc := draScenario()
	sc.Description = "d"
	sc.QueueingStrategy = "StrictFIFO"
	sc.UnfeasibleFraction = 0.1
	sc.UnfeasibleDemand = map[string]string{"cpu": "20"}
	sc.Service = ServiceSpec{Distribution: "erlang", Shape: 2}
	sc.Arrivals = ArrivalsSpec{Process: "bursty", BurstSize: 3}
	sc.Seed = 42
	got := SpecFromScenario(sc)
	want := &Spec{
		Name:        "dra",
		Description: "d",
		Flavors:     []string{"default"},
		ClusterQueues: []QueueSpec{{
			Name:             "eval",
			QueueingStrategy: "StrictFIFO",
			Quota: map[string]map[string]QuotaSpec{"default": {
				"cpu": {Nominal: "8"}, "memory": {Nominal: "8Gi"}, "example.com/gpu": {Nominal: "4"},
			}},
			Utilization: new(1.0),
			Arrivals:    ArrivalsSpec{Process: "bursty", BurstSize: 3},
			Classes: []ClassSpec{{
				Name:               "main",
				Share:              1,
				Demand:             map[string]string{"cpu": "500m", "memory": "256Mi"},
				MeanService:        Duration{time.Second},
				Service:            ServiceSpec{Distribution: "erlang", Shape: 2},
				UnfeasibleFraction: 0.1,
				UnfeasibleDemand:   map[string]string{"cpu": "20"},
				DRA:                &DRASpec{DeviceClass: "gpu.example.com", Resource: "example.com/gpu", Count: 1},
			}},
		}},
		Levels:    []float64{0.5},
		Workloads: 2,
		Seeds:     new(3),
		Seed:      42,
		Warmup:    new(0.2),
		Source:    sc,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SpecFromScenario (-want +got):\n%s", diff)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	// The spec owns its maps.
	got.ClusterQueues[0].Classes[0].Demand["cpu"] = "1"
	got.ClusterQueues[0].Classes[0].DRA.Count = 2
	if sc.Demand["cpu"] != "500m" || sc.DRA.Count != 1 {
		t.Errorf("SpecFromScenario shares the scenario's demand or DRA: %v, %+v", sc.Demand, sc.DRA)
	}
}

func TestSpecDeviceClassMappings(t *testing.T) {
	if got := (&Spec{}).DeviceClassMappings(); got != nil {
		t.Errorf("without dra: %v, want none", got)
	}
	s := validSpec()
	s.ClusterQueues[0].Classes[0].DRA = &DRASpec{DeviceClass: "big.gpu.example.com", Resource: "example.com/gpu", Count: 2}
	s.ClusterQueues[1].Classes[0].DRA = &DRASpec{DeviceClass: "gpu.example.com", Resource: "example.com/gpu", Count: 1}
	s.ClusterQueues[1].Quota["default"]["example.com/gpu"] = QuotaSpec{Nominal: "2"}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	want := []configapi.DeviceClassMapping{{
		Name:             "example.com/gpu",
		DeviceClassNames: []corev1.ResourceName{"big.gpu.example.com", "gpu.example.com"},
	}}
	if diff := cmp.Diff(want, s.DeviceClassMappings()); diff != "" {
		t.Errorf("DeviceClassMappings (-want +got):\n%s", diff)
	}
}

func TestSpecParseRate(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    float64
		wantErr string
	}{
		"per second": {in: "1.5/s", want: 1.5},
		"per minute": {in: "90/m", want: 1.5},
		"min":        {in: "90 / min", want: 1.5},
		"per hour":   {in: "5400/h", want: 1.5},
		"no unit":    {in: "1.5", wantErr: `"1.5": want arrivals per unit of time, e.g. "1.5/s" (units s, m, h)`},
		"negative":   {in: "-1/s", wantErr: `"-1/s": the rate must be a number > 0`},
		"not number": {in: "x/s", wantErr: `"x/s": the rate must be a number > 0`},
		"bad unit":   {in: "1/ms", wantErr: `"1/ms": unknown unit "ms" (want s, m or h)`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseRate(tc.in)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
				t.Errorf("rate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadSpecFormats(t *testing.T) {
	const multi = `
name: m
clusterQueues:
- name: q
  quota: {default: {cpu: {nominal: 2}, memory: {nominal: 1Gi}}}
  utilization: 0.5
  classes:
  - {name: c, share: 1, demand: {cpu: 500m}, meanService: 1s}
levels: [1]
workloads: 10
`
	const single = `
name: s
quota: {cpu: "2", memory: 1Gi}
demand: {cpu: 500m, memory: 64Mi}
levels: [0.5]
jobsPerLevel: 10
meanService: 2s
`
	// inQueue adds a line to the ClusterQueue of multi.
	inQueue := func(line string) string {
		return strings.Replace(multi, "  utilization: 0.5\n", "  utilization: 0.5\n  "+line+"\n", 1)
	}
	cases := map[string]struct {
		yaml    string
		want    func() *Spec
		wantErr string
	}{
		"multi-tenant": {
			yaml: multi,
			want: func() *Spec {
				return &Spec{
					Name:    "m",
					Flavors: []string{"default"},
					ClusterQueues: []QueueSpec{{
						Name:        "q",
						Quota:       map[string]map[string]QuotaSpec{"default": {"cpu": {Nominal: "2"}, "memory": {Nominal: "1Gi"}}},
						Utilization: new(0.5),
						Classes:     []ClassSpec{{Name: "c", Share: 1, Demand: map[string]string{"cpu": "500m"}, MeanService: Duration{time.Second}}},
					}},
					Levels: []float64{1}, Workloads: 10, Seeds: new(3), Warmup: new(0.2),
				}
			},
		},
		"single queue": {
			yaml: single,
			want: func() *Spec {
				return SpecFromScenario(&Scenario{
					Name: "s", Quota: map[string]string{"cpu": "2", "memory": "1Gi"}, Demand: map[string]string{"cpu": "500m", "memory": "64Mi"},
					Levels: []float64{0.5}, JobsPerLevel: 10, MeanService: Duration{2 * time.Second},
				})
			},
		},
		"multi-tenant, no prior": {
			yaml: multi + "prior: none\n",
			want: func() *Spec {
				return &Spec{
					Name:    "m",
					Flavors: []string{"default"},
					ClusterQueues: []QueueSpec{{
						Name:        "q",
						Quota:       map[string]map[string]QuotaSpec{"default": {"cpu": {Nominal: "2"}, "memory": {Nominal: "1Gi"}}},
						Utilization: new(0.5),
						Classes:     []ClassSpec{{Name: "c", Share: 1, Demand: map[string]string{"cpu": "500m"}, MeanService: Duration{time.Second}}},
					}},
					Levels: []float64{1}, Workloads: 10, Seeds: new(3), Warmup: new(0.2), Prior: PriorNone,
				}
			},
		},
		"bad prior":             {yaml: multi + "prior: None\n", wantErr: `prior: must be mean (the classes' true mean service time, the default) or none (no prior: workloads of a bounded service declare their maximum execution time), got "None"`},
		"mixed: prior":          {yaml: single + "prior: none\n", wantErr: "prior: needs the multi-tenant format (clusterQueues); the single-queue format has no such field"},
		"empty":                 {yaml: "", wantErr: "the scenario is empty"},
		"mixed: quota":          {yaml: multi + "quota: {cpu: \"2\"}\n", wantErr: "quota: belongs to the single-queue format, which cannot be mixed with clusterQueues: give it per ClusterQueue or class"},
		"mixed: jobsPerLevel":   {yaml: multi + "jobsPerLevel: 3\n", wantErr: "jobsPerLevel: belongs to the single-queue format, which cannot be mixed with clusterQueues: give it per ClusterQueue or class"},
		"mixed: workloads":      {yaml: single + "workloads: 3\n", wantErr: "workloads: needs the multi-tenant format (clusterQueues); the single-queue format has no such field"},
		"mixed: seeds":          {yaml: single + "seeds: 2\n", wantErr: "seeds: needs the multi-tenant format (clusterQueues); the single-queue format has no such field"},
		"unknown field":         {yaml: multi + "color: red\n", wantErr: `error unmarshaling JSON: while decoding JSON: json: unknown field "color"`},
		"unknown queue field":   {yaml: inQueue("weight: 2"), wantErr: `error unmarshaling JSON: while decoding JSON: json: unknown field "weight"`},
		"unknown single field":  {yaml: single + "color: red\n", wantErr: `error unmarshaling JSON: while decoding JSON: json: unknown field "color"`},
		"invalid single":        {yaml: single + "unfeasibleFraction: 2\n", wantErr: "unfeasibleFraction must be in [0, 1)"},
		"invalid multi":         {yaml: multi + "warmup: 1\n", wantErr: "warmup: must be in [0, 0.9], got 1"},
		"single, never fits":    {yaml: single + "unfeasibleFraction: 0.1\nunfeasibleDemand: {cpu: 1}\n", wantErr: "clusterQueues[0].classes[0].unfeasibleDemand: fits flavor default of eval (nominal quota plus what it can borrow), so these workloads would not be Unfeasible"},
		"bad preemption enum":   {yaml: inQueue("preemption: {withinClusterQueue: Sometimes}"), wantErr: `clusterQueues[0].preemption.withinClusterQueue: must be Never, LowerPriority or LowerOrNewerEqualPriority, got "Sometimes"`},
		"unknown preempt field": {yaml: inQueue("preemption: {within: Never}"), wantErr: `error unmarshaling JSON: while decoding JSON: json: unknown field "within"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseSpec([]byte(tc.yaml))
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if tc.want == nil {
				return
			}
			if diff := cmp.Diff(tc.want(), got); diff != "" {
				t.Errorf("ParseSpec (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSpecPriorMeanServiceIsZeroWithoutPrior(t *testing.T) {
	cases := map[string]struct {
		prior string
		want  time.Duration
	}{
		// team-a: 0.7·2 s + 0.3·4 s = 2.6 s; team-b: 1 s; averaged: 1.8 s
		// (to the millisecond: the mean is computed in float seconds).
		"default": {want: 1800 * time.Millisecond},
		"mean":    {prior: PriorMean, want: 1800 * time.Millisecond},
		"none":    {prior: PriorNone, want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := validSpec()
			s.Prior = tc.prior
			if diff := cmp.Diff(tc.want, s.PriorMeanService().Round(time.Millisecond)); diff != "" {
				t.Errorf("PriorMeanService (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLoadSpecFiles loads every scenario of test/eval, the single-queue
// ones through the shorthand, and checks the nominal k_eff of every queue.
func TestLoadSpecFiles(t *testing.T) {
	type queue struct {
		Name       string
		KEff       int
		Bottleneck string
	}
	cases := map[string]struct {
		shorthand bool
		queues    []queue
		dra       bool
		workloads int
		// quick: make eval-quick's scenario, one short level.
		quick bool
		// cluster: make eval-cluster's, one short level scored whole.
		cluster bool
		// coldStart: one short level scored whole, without a prior.
		coldStart bool
		// bursts: arrivals in bursts of 200, so more workloads (up to
		// 1,200) than the 150..400 of the other scenarios, for enough
		// bursts a replica.
		bursts bool
		// focused: one level and four seeds of up to 1,200 workloads, to
		// score many workloads of one kind in a run (mt-lenders' lenders)
		// rather than sweep the load.
		focused bool
	}{
		"quick.yaml":          {queues: []queue{{"busy", 4, "cpu"}, {"idle", 4, "cpu"}}, workloads: 200, quick: true},
		"smoke.yaml":          {shorthand: true, queues: []queue{{"eval", 4, "cpu"}}, workloads: 60},
		"cluster.yaml":        {queues: []queue{{"main", 4, "cpu"}}, workloads: 50, cluster: true},
		"cold-start.yaml":     {queues: []queue{{"main", 4, "cpu"}}, workloads: 40, coldStart: true},
		"partition.yaml":      {shorthand: true, queues: []queue{{"eval", 4, "cpu"}}, workloads: 150},
		"table2.yaml":         {shorthand: true, queues: []queue{{"eval", 4, "cpu"}}, workloads: 150},
		"mm4.yaml":            {shorthand: true, queues: []queue{{"eval", 4, "cpu"}}, workloads: 150},
		"table3.yaml":         {shorthand: true, queues: []queue{{"eval", 4, "memory"}}, workloads: 150},
		"table4.yaml":         {shorthand: true, queues: []queue{{"eval", 4, "example.com/gpu"}}, dra: true, workloads: 120},
		"mt-cohort.yaml":      {queues: []queue{{"team-a", 4, "cpu"}, {"team-b", 4, "cpu"}, {"team-c", 4, "cpu"}}, workloads: 300},
		"mt-cohort-busy.yaml": {queues: []queue{{"team-a", 4, "cpu"}, {"team-b", 4, "cpu"}, {"lender", 4, "cpu"}}, workloads: 300},
		"mt-priority.yaml":    {queues: []queue{{"shared", 4, "cpu"}}, workloads: 180},
		"mt-afs.yaml":         {queues: []queue{{"shared", 4, "cpu"}}, workloads: 180},
		"mt-mixed.yaml":       {queues: []queue{{"mixed", 5, "cpu"}}, workloads: 180},
		"mt-lenders.yaml": {queues: []queue{{"borrower", 4, "cpu"}, {"lender-1", 4, "cpu"}, {"lender-2", 4, "cpu"},
			{"lender-3", 4, "cpu"}, {"lender-4", 4, "cpu"}}, workloads: 1000, focused: true},
		"mt-dra-cohort.yaml": {
			queues: []queue{{"train", 2, "example.com/gpu"}, {"infer", 4, "example.com/gpu"}}, dra: true, workloads: 240,
		},
		"mt-throughput.yaml": {
			queues: func() []queue {
				var qs []queue
				for _, n := range []string{"t01", "t02", "t03", "t04", "t05", "t06", "t07", "t08", "t09", "t10", "t11", "t12"} {
					qs = append(qs, queue{n, 512, "memory"})
				}
				return qs
			}(),
			workloads: 1200,
			bursts:    true,
		},
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "test", "eval", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(cases) {
		t.Errorf("test/eval has %d scenarios, the test knows %d", len(files), len(cases))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			tc, ok := cases[filepath.Base(f)]
			if !ok {
				t.Fatal("a scenario this test does not know: add it")
			}
			s, err := LoadSpec(f)
			if err != nil {
				t.Fatal(err)
			}
			if (s.Source != nil) != tc.shorthand {
				t.Errorf("loaded through the shorthand: %t, want %t", s.Source != nil, tc.shorthand)
			}
			if got := s.DeviceClassMappings() != nil; got != tc.dra {
				t.Errorf("needs deviceClassMappings: %t, want %t", got, tc.dra)
			}
			if s.Workloads != tc.workloads {
				t.Errorf("workloads = %d, want %d", s.Workloads, tc.workloads)
			}
			p, err := s.Plan(s.Levels[0], 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []queue
			for _, q := range p.Queues {
				got = append(got, queue{q.Name, q.KEff.Servers, q.KEff.Resource})
			}
			if diff := cmp.Diff(tc.queues, got); diff != "" {
				t.Errorf("queues and nominal k_eff (-want +got):\n%s", diff)
			}
			if tc.shorthand {
				// The shorthand keeps the single-queue λ = ρ·k_eff/E[S].
				wantLambda := s.Levels[0] * float64(tc.queues[0].KEff) / s.Source.MeanService.Seconds()
				if diff := cmp.Diff(wantLambda, p.Queues[0].Lambda, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
					t.Errorf("λ of the shorthand (-want +got):\n%s", diff)
				}
				return
			}
			if tc.quick {
				for seed := range s.NumSeeds() {
					if p, err := s.Plan(s.Levels[0], seed); err != nil || len(s.Levels) != 1 || p.Span > 90 {
						t.Errorf("quick scenario: %d levels, seed %d spans %.0f s (err %v); want one level within 90 s", len(s.Levels), seed, p.Span, err)
					}
				}
				return
			}
			if tc.coldStart {
				for seed := range s.NumSeeds() {
					if p, err := s.Plan(s.Levels[0], seed); err != nil || len(s.Levels) != 1 || p.Span > 200 || p.Warmup != 0 || s.Prior != PriorNone {
						t.Errorf("cold-start scenario: %d levels, seed %d spans %.0f s with %d warm-up arrivals, prior %q (err %v); want one level within 200 s, none warm-up, prior none", len(s.Levels), seed, p.Span, p.Warmup, s.Prior, err)
					}
				}
				return
			}
			if tc.cluster {
				for seed := range s.NumSeeds() {
					if p, err := s.Plan(s.Levels[0], seed); err != nil || len(s.Levels) != 1 || p.Span > 200 || p.Warmup != 0 {
						t.Errorf("cluster scenario: %d levels, seed %d spans %.0f s with %d warm-up arrivals (err %v); want one level within 200 s, none warm-up", len(s.Levels), seed, p.Span, p.Warmup, err)
					}
				}
				return
			}
			switch {
			case tc.focused:
				if *s.Seeds != 4 || len(s.Levels) != 1 || s.Workloads < 150 || s.Workloads > 1200 {
					t.Errorf("focused scenario: %d seeds, %d levels, %d workloads; want 4 seeds of one level, 150..1200 workloads", *s.Seeds, len(s.Levels), s.Workloads)
				}
			default:
				if *s.Seeds != 3 {
					t.Errorf("seeds = %d, want 3", *s.Seeds)
				}
				if n := len(s.Levels); n < 2 || n > 3 {
					t.Errorf("%d levels, want 2 or 3", n)
				}
				if most := map[bool]int{false: 400, true: 1200}[tc.bursts]; s.Workloads < 150 || s.Workloads > most {
					t.Errorf("workloads = %d, want 150..%d", s.Workloads, most)
				}
			}
			// Each replica's arrivals span at most ~150 s.
			for _, l := range s.Levels {
				for seed := range s.NumSeeds() {
					p, err := s.Plan(l, seed)
					if err != nil {
						t.Fatal(err)
					}
					if p.Span > 160 {
						t.Errorf("level %v seed %d: arrivals span %.0f s, want ≤ ~150 s", l, seed, p.Span)
					}
				}
			}
		})
	}
}
