package scenario

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// Scenario is one evaluation experiment, read from a YAML file (see
// test/eval/). Every level runs on a fresh ClusterQueue.
type Scenario struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Quota is the nominal quota of the single flavor "default", e.g.
	// {cpu: "2", memory: "1Gi"}.
	Quota map[string]string `json:"quota"`
	// Demand is each workload's request (one pod).
	Demand map[string]string `json:"demand"`
	// DRA, when set, makes every workload (the unfeasible ones too) also
	// claim devices through Kubernetes Dynamic Resource Allocation, which
	// Kueue's DRA integration counts against the quota.
	DRA *DRASpec `json:"dra,omitempty"`
	// UnfeasibleFraction of the workloads request UnfeasibleDemand instead,
	// which exceeds the quota (paper §5, partition non-vacuity).
	UnfeasibleFraction float64           `json:"unfeasibleFraction,omitempty"`
	UnfeasibleDemand   map[string]string `json:"unfeasibleDemand,omitempty"`
	// QueueingStrategy is BestEffortFIFO (default) or StrictFIFO.
	QueueingStrategy string `json:"queueingStrategy,omitempty"`
	// Levels are the target utilizations ρ; λ = ρ·k_eff/E[S].
	Levels       []float64 `json:"levels"`
	JobsPerLevel int       `json:"jobsPerLevel"`
	// MeanService is E[S] as a Go duration ("2s": the paper's 20 s scaled
	// down tenfold).
	MeanService Duration     `json:"meanService"`
	Service     ServiceSpec  `json:"service"`
	Arrivals    ArrivalsSpec `json:"arrivals"`
	Seed        uint64       `json:"seed"`
}

// DRASpec requests devices through Dynamic Resource Allocation, as the
// paper's Table 4 requests its GPUs: the harness creates the DeviceClass,
// a ResourceClaimTemplate in each level's namespace asking for Count
// devices of that class, and gives every workload's pod template a claim
// from it (as Kueue's job integrations copy a Job's pod template). Kueue's
// Configuration maps the DeviceClass to the logical resource Resource
// (resources.deviceClassMappings), so a workload holds Count of Resource
// in the quota, which names Resource. No DRA driver allocates devices: the
// harness runs no pods, and the quota is what admission is about.
type DRASpec struct {
	// DeviceClass is the DeviceClass the claims request, e.g.
	// gpu.example.com.
	DeviceClass string `json:"deviceClass"`
	// Resource is the logical resource Kueue counts the devices as, e.g.
	// example.com/gpu; the quota must give it.
	Resource string `json:"resource"`
	// Count is how many devices each workload's pod claims (≥ 1).
	Count int64 `json:"count"`
}

// ServiceSpec is the service-time law.
type ServiceSpec struct {
	// Distribution: exponential (default), erlang, lognormal, deterministic.
	Distribution string `json:"distribution,omitempty"`
	// Shape is the Erlang stage count k (C_S² = 1/k).
	Shape int `json:"shape,omitempty"`
	// CV is the lognormal coefficient of variation.
	CV float64 `json:"cv,omitempty"`
	// TruncateAt cuts service times at this multiple of the mean (0: none).
	TruncateAt float64 `json:"truncateAt,omitempty"`
}

// ArrivalsSpec is the arrival process.
type ArrivalsSpec struct {
	// Process: poisson (default), periodic, bursty (batches of BurstSize
	// simultaneous arrivals, batches Poisson).
	Process   string `json:"process,omitempty"`
	BurstSize int    `json:"burstSize,omitempty"`
}

// Duration is a time.Duration written as a Go duration string.
type Duration struct{ time.Duration }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := yamlUnquote(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: %w", s, err)
	}
	d.Duration = v
	return nil
}

func (d Duration) MarshalJSON() ([]byte, error) { return []byte(`"` + d.String() + `"`), nil }

func yamlUnquote(b []byte, s *string) error { return yaml.Unmarshal(b, s) }

// LoadScenario reads and validates a scenario file.
func LoadScenario(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Scenario
	if err := yaml.UnmarshalStrict(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &s, nil
}

// Validate reports the first problem of a scenario.
func (s *Scenario) Validate() error {
	switch {
	case s.Name == "":
		return errors.New("name is required")
	case len(s.Quota) == 0 || len(s.Demand) == 0:
		return errors.New("quota and demand are required")
	case len(s.Levels) == 0:
		return errors.New("at least one level is required")
	case s.JobsPerLevel < 2:
		return errors.New("jobsPerLevel must be at least 2")
	case s.MeanService.Duration <= 0:
		return errors.New("meanService must be > 0")
	case s.UnfeasibleFraction < 0 || s.UnfeasibleFraction >= 1:
		return errors.New("unfeasibleFraction must be in [0, 1)")
	case s.UnfeasibleFraction > 0 && len(s.UnfeasibleDemand) == 0:
		return errors.New("unfeasibleDemand is required with unfeasibleFraction")
	}
	for _, l := range s.Levels {
		if !(l > 0) || math.IsInf(l, 0) {
			return fmt.Errorf("level %v must be > 0", l)
		}
	}
	for _, m := range []map[string]string{s.Quota, s.Demand, s.UnfeasibleDemand} {
		for r, q := range m {
			if _, err := resource.ParseQuantity(q); err != nil {
				return fmt.Errorf("%s: %q: %w", r, q, err)
			}
		}
	}
	if err := s.validateDRA(); err != nil {
		return err
	}
	switch s.Service.Distribution {
	case "", "exponential", "deterministic":
	case "erlang":
		if s.Service.Shape < 1 {
			return errors.New("erlang service needs shape ≥ 1")
		}
	case "lognormal":
		if !(s.Service.CV > 0) {
			return errors.New("lognormal service needs cv > 0")
		}
	default:
		return fmt.Errorf("unknown service distribution %q", s.Service.Distribution)
	}
	switch s.Arrivals.Process {
	case "", "poisson", "periodic":
	case "bursty":
		if s.Arrivals.BurstSize < 2 {
			return errors.New("bursty arrivals need burstSize ≥ 2")
		}
	default:
		return fmt.Errorf("unknown arrival process %q", s.Arrivals.Process)
	}
	switch s.QueueingStrategy {
	case "", "BestEffortFIFO", "StrictFIFO":
	default:
		return fmt.Errorf("unknown queueing strategy %q", s.QueueingStrategy)
	}
	return nil
}

// validateDRA checks the dra section against what Kueue accepts: a
// DeviceClass name (a DNS subdomain), a logical resource name as Kueue's
// Configuration validation requires it (a qualified name), and a quota on
// it; and that no container request names the resource as well, since Kueue
// would add the two.
func (s *Scenario) validateDRA() error {
	d := s.DRA
	if d == nil {
		return nil
	}
	switch {
	case d.DeviceClass == "":
		return errors.New("dra.deviceClass is required")
	case d.Resource == "":
		return errors.New("dra.resource is required: the logical resource Kueue counts the devices as, e.g. example.com/gpu")
	case d.Count < 1:
		return fmt.Errorf("dra.count must be at least 1, got %d", d.Count)
	}
	if errs := validation.IsDNS1123Subdomain(d.DeviceClass); len(errs) > 0 {
		return fmt.Errorf("dra.deviceClass %q is not a valid DeviceClass name: %s", d.DeviceClass, strings.Join(errs, "; "))
	}
	if errs := validation.IsQualifiedName(d.Resource); len(errs) > 0 {
		return fmt.Errorf("dra.resource %q is not a valid resource name: %s", d.Resource, strings.Join(errs, "; "))
	}
	if _, ok := s.Quota[d.Resource]; !ok {
		return fmt.Errorf("dra.resource %s has no quota: give it in quota, which is where Kueue counts the devices", d.Resource)
	}
	for _, f := range []struct {
		name   string
		demand map[string]string
	}{{"demand", s.Demand}, {"unfeasibleDemand", s.UnfeasibleDemand}} {
		if _, ok := f.demand[d.Resource]; ok {
			return fmt.Errorf("%s must not request %s: the dra section requests it through a ResourceClaimTemplate, and Kueue would count both", f.name, d.Resource)
		}
	}
	return nil
}

// serviceSCV is C_S² of the configured law (before truncation).
func (s *Scenario) serviceSCV() float64 {
	switch s.Service.Distribution {
	case "deterministic":
		return 0
	case "erlang":
		return 1 / float64(s.Service.Shape)
	case "lognormal":
		return s.Service.CV * s.Service.CV
	}
	return 1
}

// arrivalSCV is c_a² of the configured process.
func (s *Scenario) arrivalSCV() float64 {
	switch s.Arrivals.Process {
	case "periodic":
		return 0
	case "bursty":
		// Batches of b at Poisson epochs: the interarrival is 0 with
		// probability (b−1)/b and exponential otherwise, c² = 2b − 1.
		return 2*float64(s.Arrivals.BurstSize) - 1
	}
	return 1
}

// sampleService draws one service time in seconds.
func (s *Scenario) sampleService(r *rand.Rand) float64 {
	mean := s.MeanService.Seconds()
	var v float64
	switch s.Service.Distribution {
	case "deterministic":
		v = mean
	case "erlang":
		for range s.Service.Shape {
			v += r.ExpFloat64()
		}
		v *= mean / float64(s.Service.Shape)
	case "lognormal":
		sigma2 := math.Log1p(s.Service.CV * s.Service.CV)
		mu := math.Log(mean) - sigma2/2
		v = math.Exp(mu + math.Sqrt(sigma2)*r.NormFloat64())
	default:
		v = r.ExpFloat64() * mean
	}
	if s.Service.TruncateAt > 0 {
		v = min(v, s.Service.TruncateAt*mean)
	}
	return v
}

// arrivalOffsets draws n arrival times (seconds from the level's start) at
// rate lambda.
func (s *Scenario) arrivalOffsets(r *rand.Rand, n int, lambda float64) []float64 {
	out := make([]float64, 0, n)
	t := 0.0
	switch s.Arrivals.Process {
	case "periodic":
		for i := range n {
			out = append(out, float64(i)/lambda)
		}
	case "bursty":
		b := s.Arrivals.BurstSize
		for len(out) < n {
			t += r.ExpFloat64() * float64(b) / lambda
			for range b {
				if len(out) < n {
					out = append(out, t)
				}
			}
		}
	default:
		for range n {
			out = append(out, t)
			t += r.ExpFloat64() / lambda
		}
	}
	return out
}
