package scenario

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	utiltestingapi "sigs.k8s.io/kueue/pkg/util/testing/v1beta2"
)

// draScenario is a valid scenario requesting one GPU through DRA.
func draScenario() *Scenario {
	return &Scenario{
		Name:         "dra",
		Quota:        map[string]string{"cpu": "8", "memory": "8Gi", "example.com/gpu": "4"},
		Demand:       map[string]string{"cpu": "500m", "memory": "256Mi"},
		DRA:          &DRASpec{DeviceClass: "gpu.example.com", Resource: "example.com/gpu", Count: 1},
		Levels:       []float64{0.5},
		JobsPerLevel: 2,
		MeanService:  Duration{time.Second},
	}
}

func TestValidateDRA(t *testing.T) {
	cases := map[string]struct {
		change  func(*Scenario)
		wantErr string
	}{
		"valid":  {change: func(*Scenario) {}},
		"no dra": {change: func(s *Scenario) { s.DRA = nil }},
		"bare resource name": {change: func(s *Scenario) {
			s.DRA.Resource = "gpu"
			s.Quota["gpu"] = "4"
		}},
		"no device class":  {change: func(s *Scenario) { s.DRA.DeviceClass = "" }, wantErr: "dra.deviceClass is required"},
		"no resource":      {change: func(s *Scenario) { s.DRA.Resource = "" }, wantErr: "dra.resource is required"},
		"zero count":       {change: func(s *Scenario) { s.DRA.Count = 0 }, wantErr: "dra.count must be at least 1, got 0"},
		"negative count":   {change: func(s *Scenario) { s.DRA.Count = -2 }, wantErr: "dra.count must be at least 1, got -2"},
		"bad device class": {change: func(s *Scenario) { s.DRA.DeviceClass = "GPU_Class" }, wantErr: `dra.deviceClass "GPU_Class" is not a valid DeviceClass name`},
		"bad resource": {
			change:  func(s *Scenario) { s.DRA.Resource = "example.com/gpu/a100" },
			wantErr: `dra.resource "example.com/gpu/a100" is not a valid resource name`,
		},
		"resource without quota": {
			change:  func(s *Scenario) { delete(s.Quota, "example.com/gpu") },
			wantErr: "dra.resource example.com/gpu has no quota",
		},
		"resource also in demand": {
			change:  func(s *Scenario) { s.Demand["example.com/gpu"] = "1" },
			wantErr: "demand must not request example.com/gpu",
		},
		"resource also in unfeasible demand": {
			change: func(s *Scenario) {
				s.UnfeasibleFraction = 0.1
				s.UnfeasibleDemand = map[string]string{"cpu": "20", "example.com/gpu": "1"}
			},
			wantErr: "unfeasibleDemand must not request example.com/gpu",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := draScenario()
			tc.change(s)
			err := s.Validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Validate = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestDeviceClassMappingsOfAConvertedScenario(t *testing.T) {
	if got := SpecFromScenario(&Scenario{Name: "x", Demand: map[string]string{"cpu": "1"}}).DeviceClassMappings(); got != nil {
		t.Errorf("without dra: %v, want none", got)
	}
	got := SpecFromScenario(draScenario()).DeviceClassMappings()
	if len(got) != 1 || got[0].Name != "example.com/gpu" || len(got[0].DeviceClassNames) != 1 || got[0].DeviceClassNames[0] != "gpu.example.com" {
		t.Errorf("mappings = %+v, want example.com/gpu ← gpu.example.com", got)
	}
}

func TestCheckDRAUsage(t *testing.T) {
	d := &DRASpec{DeviceClass: "gpu.example.com", Resource: "example.com/gpu", Count: 1}
	admitted := func(gpus string) *kueue.Workload {
		psa := utiltestingapi.MakePodSetAssignment(kueue.DefaultPodSetName).Assignment(corev1.ResourceCPU, "default", "500m")
		if gpus != "" {
			psa = psa.Assignment("example.com/gpu", "default", gpus)
		}
		return utiltestingapi.MakeWorkload("w", "ns").Admission(utiltestingapi.MakeAdmission("cq").PodSets(psa.Obj()).Obj()).Obj()
	}
	cases := map[string]struct {
		wl      *kueue.Workload
		d       *DRASpec
		wantErr string
	}{
		"holds the device":   {wl: admitted("1"), d: d},
		"no dra":             {wl: admitted(""), d: nil},
		"not admitted":       {wl: utiltestingapi.MakeWorkload("w", "ns").Obj(), d: d},
		"device not counted": {wl: admitted(""), d: d, wantErr: "workload w was admitted holding 0 example.com/gpu, not the 1 devices it claims through DRA"},
		"two devices held":   {wl: admitted("2"), d: d, wantErr: "workload w was admitted holding 2 example.com/gpu, not the 1 devices it claims through DRA"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := errString(CheckDRAUsage(tc.wl, tc.d)); got != tc.wantErr {
				t.Errorf("CheckDRAUsage = %q, want %q", got, tc.wantErr)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
