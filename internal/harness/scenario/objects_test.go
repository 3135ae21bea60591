package scenario

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
)

var testReplica = Replica{Prefix: "r1", Namespace: "ns"}

func TestObjectsClusterQueues(t *testing.T) {
	s := validSpec()
	s.ClusterQueues[1].QueueingStrategy = "StrictFIFO"
	want := []*kueue.ClusterQueue{
		utiltestingapi.MakeClusterQueue("r1-team-a").
			Cohort("r1-research").
			QueueingStrategy(kueue.BestEffortFIFO).
			Preemption(kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority}).
			ResourceGroup(
				*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, "2", "4").Resource("example.com/gpu", "2").Resource(corev1.ResourceMemory, "4Gi").Obj(),
				*utiltestingapi.MakeFlavorQuotas("spot").Resource(corev1.ResourceCPU, "1").Resource("example.com/gpu", "0").Resource(corev1.ResourceMemory, "2Gi").Obj(),
			).Obj(),
		utiltestingapi.MakeClusterQueue("r1-team-b").
			Cohort("r1-research").
			QueueingStrategy(kueue.StrictFIFO).
			Preemption(kueue.ClusterQueuePreemption{ReclaimWithinCohort: kueue.PreemptionPolicyAny}).
			ResourceGroup(*utiltestingapi.MakeFlavorQuotas("default").Resource(corev1.ResourceCPU, "2", "", "1").Resource(corev1.ResourceMemory, "4Gi").Obj()).
			Obj(),
	}
	got := s.BuildClusterQueues(testReplica)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ClusterQueues (-want +got):\n%s", diff)
	}
	// The ClusterQueues own their preemption.
	got[0].Spec.Preemption.WithinClusterQueue = kueue.PreemptionPolicyNever
	if s.ClusterQueues[0].Preemption.WithinClusterQueue != kueue.PreemptionPolicyLowerPriority {
		t.Error("a ClusterQueue shares the spec's preemption")
	}
}

func TestObjectsQueuesFlavorsPriorities(t *testing.T) {
	s := validSpec()
	if diff := cmp.Diff([]*kueue.LocalQueue{
		utiltestingapi.MakeLocalQueue("team-a", "ns").ClusterQueue("r1-team-a").Obj(),
		utiltestingapi.MakeLocalQueue("team-b", "ns").ClusterQueue("r1-team-b").Obj(),
	}, s.BuildLocalQueues(testReplica)); diff != "" {
		t.Errorf("LocalQueues (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]*kueue.ResourceFlavor{
		utiltestingapi.MakeResourceFlavor("default").Obj(),
		utiltestingapi.MakeResourceFlavor("spot").Obj(),
	}, s.BuildResourceFlavors()); diff != "" {
		t.Errorf("ResourceFlavors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]*kueue.WorkloadPriorityClass{
		utiltestingapi.MakeWorkloadPriorityClass("r1-high").PriorityValue(1000).Obj(),
		utiltestingapi.MakeWorkloadPriorityClass("r1-low").PriorityValue(100).Obj(),
	}, s.BuildPriorityClasses(testReplica)); diff != "" {
		t.Errorf("WorkloadPriorityClasses (-want +got):\n%s", diff)
	}
	if got := (&Spec{}).BuildPriorityClasses(testReplica); got != nil {
		t.Errorf("WorkloadPriorityClasses without priorities: %v", got)
	}
}

// A queue under admission fair sharing gets its admissionScope, and one
// LocalQueue per LocalQueue its classes name, which their workloads are
// submitted through.
func TestObjectsAdmissionFairSharingLocalQueues(t *testing.T) {
	s := validSpec()
	s.AdmissionFairSharing = &configapi.AdmissionFairSharing{UsageSamplingInterval: metav1.Duration{Duration: time.Second}}
	a := &s.ClusterQueues[0]
	a.AdmissionFairSharing = true
	a.Classes[0].LocalQueue, a.Classes[1].LocalQueue = "heavy", "light"
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := s.BuildClusterQueues(testReplica)[0].Spec.AdmissionScope; got == nil || got.AdmissionMode != kueue.UsageBasedAdmissionFairSharing {
		t.Errorf("admissionScope of r1-team-a = %v, want admissionMode %s", got, kueue.UsageBasedAdmissionFairSharing)
	}
	if got := s.BuildClusterQueues(testReplica)[1].Spec.AdmissionScope; got != nil {
		t.Errorf("admissionScope of r1-team-b = %v, want none", got)
	}
	if diff := cmp.Diff([]*kueue.LocalQueue{
		utiltestingapi.MakeLocalQueue("heavy", "ns").ClusterQueue("r1-team-a").Obj(),
		utiltestingapi.MakeLocalQueue("light", "ns").ClusterQueue("r1-team-a").Obj(),
		utiltestingapi.MakeLocalQueue("team-b", "ns").ClusterQueue("r1-team-b").Obj(),
	}, s.BuildLocalQueues(testReplica)); diff != "" {
		t.Errorf("LocalQueues (-want +got):\n%s", diff)
	}
	plan, err := s.Plan(s.Levels[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, arr := range plan.Arrivals {
		wl := s.BuildWorkload(testReplica, arr)
		seen[arr.Queue+"/"+arr.Class] = string(wl.Spec.QueueName)
	}
	want := map[string]string{"team-a/small": "heavy", "team-a/large": "light", "team-b/batch": "team-b"}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("LocalQueue of each queue's class (-want +got):\n%s", diff)
	}
}

func TestObjectsDRA(t *testing.T) {
	s := validSpec()
	s.ClusterQueues[0].Classes[0].DRA = &DRASpec{DeviceClass: "gpu.example.com", Resource: "example.com/gpu", Count: 2}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, dc := range s.BuildDeviceClasses() {
		names = append(names, dc.Name)
	}
	if diff := cmp.Diff([]string{"gpu.example.com"}, names); diff != "" {
		t.Errorf("DeviceClasses (-want +got):\n%s", diff)
	}
	want := []*resourcev1.ResourceClaimTemplate{
		claimTemplate("ns", &DRASpec{DeviceClass: "gpu.example.com", Count: 1}),
		claimTemplate("ns", &DRASpec{DeviceClass: "gpu.example.com", Count: 2}),
	}
	want[0].Name, want[1].Name = "devices-gpu.example.com-1", "devices-gpu.example.com-2"
	if diff := cmp.Diff(want, s.BuildClaimTemplates("ns")); diff != "" {
		t.Errorf("ClaimTemplates (-want +got):\n%s", diff)
	}
	if got := (&Spec{}).BuildClaimTemplates("ns"); got != nil {
		t.Errorf("ClaimTemplates without dra: %v", got)
	}
}

func TestObjectsWorkload(t *testing.T) {
	gpu := &DRASpec{DeviceClass: "gpu.example.com", Resource: "example.com/gpu", Count: 1}
	withClaim := func(wl *kueue.Workload) *kueue.Workload {
		ps := &wl.Spec.PodSets[0].Template.Spec
		ps.ResourceClaims = []corev1.PodResourceClaim{{Name: "devices", ResourceClaimTemplateName: new("devices-gpu.example.com-1")}}
		ps.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "devices"}}
		return wl
	}
	cases := map[string]struct {
		arrival Arrival
		want    *kueue.Workload
	}{
		"plain": {
			arrival: Arrival{Name: "w0001", Queue: "team-b", Class: "batch", Demand: map[string]string{"cpu": "1", "memory": "1Gi"}},
			want:    utiltestingapi.MakeWorkload("w0001", "ns").Queue("team-b").Request(corev1.ResourceCPU, "1").Request(corev1.ResourceMemory, "1Gi").Obj(),
		},
		"priority and dra": {
			arrival: Arrival{Name: "w0002", Queue: "team-a", Class: "large", PriorityClass: "high", Priority: 1000, Demand: map[string]string{"cpu": "1500m", "memory": "1Gi"}, DRA: gpu},
			want: withClaim(utiltestingapi.MakeWorkload("w0002", "ns").Queue("team-a").
				Request(corev1.ResourceCPU, "1500m").Request(corev1.ResourceMemory, "1Gi").
				Label(constants.WorkloadPriorityClassLabel, "r1-high").WorkloadPriorityClassRef("r1-high").Priority(1000).Obj()),
		},
		"unfeasible": {
			arrival: Arrival{Name: "w0003", Queue: "team-a", Class: "large", PriorityClass: "high", Priority: 1000, Demand: map[string]string{"cpu": "20"}, Unfeasible: true, DRA: gpu},
			want: withClaim(utiltestingapi.MakeWorkload("w0003", "ns").Queue("team-a").Request(corev1.ResourceCPU, "20").
				Label(constants.WorkloadPriorityClassLabel, "r1-high").WorkloadPriorityClassRef("r1-high").Priority(1000).Obj()),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, validSpec().BuildWorkload(testReplica, tc.arrival)); diff != "" {
				t.Errorf("Workload (-want +got):\n%s", diff)
			}
		})
	}
}

func TestObjectsWorkloadDeclaresMaxExecutionTimeWithoutPrior(t *testing.T) {
	arrival := Arrival{Name: "w0001", Queue: "team-b", Class: "batch", Demand: map[string]string{"cpu": "1", "memory": "1Gi"}}
	base := func() *utiltestingapi.WorkloadWrapper {
		return utiltestingapi.MakeWorkload("w0001", "ns").Queue("team-b").Request(corev1.ResourceCPU, "1").Request(corev1.ResourceMemory, "1Gi")
	}
	cases := map[string]struct {
		prior   string
		service ServiceSpec
		want    *kueue.Workload
	}{
		"prior mean, truncated: none declared": {
			prior: PriorMean, service: ServiceSpec{Distribution: "exponential", TruncateAt: 3},
			want: base().Obj(),
		},
		"default prior, deterministic: none declared": {
			service: ServiceSpec{Distribution: "deterministic"},
			want:    base().Obj(),
		},
		"no prior, truncated: 3 × 1 s + margin": {
			prior: PriorNone, service: ServiceSpec{Distribution: "exponential", TruncateAt: 3},
			want: base().MaximumExecutionTimeSeconds(3 + maxExecMarginSeconds).Obj(),
		},
		"no prior, truncated at 2.5: rounded up": {
			prior: PriorNone, service: ServiceSpec{Distribution: "erlang", Shape: 2, TruncateAt: 2.5},
			want: base().MaximumExecutionTimeSeconds(3 + maxExecMarginSeconds).Obj(),
		},
		"no prior, deterministic: the mean + margin": {
			prior: PriorNone, service: ServiceSpec{Distribution: "deterministic"},
			want: base().MaximumExecutionTimeSeconds(1 + maxExecMarginSeconds).Obj(),
		},
		"no prior, unbounded: none declared": {
			prior: PriorNone, service: ServiceSpec{Distribution: "exponential"},
			want: base().Obj(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := validSpec()
			s.Prior = tc.prior
			s.ClusterQueues[1].Classes[0].Service = tc.service
			if diff := cmp.Diff(tc.want, s.BuildWorkload(testReplica, arrival)); diff != "" {
				t.Errorf("Workload (-want +got):\n%s", diff)
			}
		})
	}
}

// TestObjectsFromPlan builds every object of a replica of the DRA cohort
// scenario: each Workload goes to an existing LocalQueue and claims from an
// existing ResourceClaimTemplate.
func TestObjectsFromPlan(t *testing.T) {
	s, err := LoadSpec(filepath.Join("..", "..", "..", "test", "eval", "mt-dra-cohort.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r := Replica{Prefix: "mt-dra-cohort-1-0", Namespace: "eval-mt-dra-cohort-1-0"}
	if err := r.Validate(s); err != nil {
		t.Fatal(err)
	}
	queues, templates := map[string]bool{}, map[string]bool{}
	for _, lq := range s.BuildLocalQueues(r) {
		queues[lq.Name] = true
	}
	for _, ct := range s.BuildClaimTemplates(r.Namespace) {
		templates[ct.Name] = true
	}
	for _, cq := range s.BuildClusterQueues(r) {
		if cq.Spec.CohortName != "mt-dra-cohort-1-0-gpus" {
			t.Errorf("ClusterQueue %s: cohort %q", cq.Name, cq.Spec.CohortName)
		}
	}
	p := mustPlan(t, s, 1.0, 2)
	for _, a := range p.Arrivals {
		wl := s.BuildWorkload(r, a)
		if !queues[string(wl.Spec.QueueName)] {
			t.Errorf("%s: queue %s has no LocalQueue", wl.Name, wl.Spec.QueueName)
		}
		claims := wl.Spec.PodSets[0].Template.Spec.ResourceClaims
		if len(claims) != 1 || !templates[*claims[0].ResourceClaimTemplateName] {
			t.Errorf("%s: claims %v, templates %v", wl.Name, claims, templates)
		}
		requests := wl.Spec.PodSets[0].Template.Spec.Containers[0].Resources.Requests
		if len(requests) != len(a.Demand) {
			t.Errorf("%s: requests %v, demand %v", wl.Name, requests, a.Demand)
		}
		for res, v := range a.Demand {
			if q := requests[corev1.ResourceName(res)]; q.String() != v {
				t.Errorf("%s: requests %s %s, want %s", wl.Name, res, q.String(), v)
			}
		}
	}
}

func TestObjectsReplicaValidate(t *testing.T) {
	s := validSpec()
	cases := map[string]struct {
		r       Replica
		wantErr string
	}{
		"valid":        {r: testReplica},
		"no namespace": {r: Replica{Prefix: "r1"}, wantErr: "replica namespace: is required"},
		"bad prefix":   {r: Replica{Prefix: "R1", Namespace: "ns"}, wantErr: `replica prefix: "R1" is not a DNS-1123 label (lower-case alphanumerics and '-', at most 63 characters)`},
		"long prefix": {
			r:       Replica{Prefix: strings.Repeat("p", 57), Namespace: "ns"},
			wantErr: `replica prefix "` + strings.Repeat("p", 57) + `": the ClusterQueue name "` + strings.Repeat("p", 57) + `-team-a" for team-a is not a DNS-1123 label (at most 63 characters): use a shorter prefix`,
		},
		"long for the cohort": {
			r:       Replica{Prefix: strings.Repeat("p", 55), Namespace: "ns"},
			wantErr: `replica prefix "` + strings.Repeat("p", 55) + `": the cohort name "` + strings.Repeat("p", 55) + `-research" for research is not a DNS-1123 label (at most 63 characters): use a shorter prefix`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wantErr, errString(tc.r.Validate(s))); diff != "" {
				t.Errorf("Validate error (-want +got):\n%s", diff)
			}
		})
	}
}
