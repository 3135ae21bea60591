package engine

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/queueing"
)

// APriori is the a-priori queueing model of one ClusterQueue (paper
// §3.3–3.5) with the statistics it was computed from.
type APriori struct {
	// EffectiveServers is k_eff by vector packing of the nominal quota over
	// the demand mix of the known workloads (Eq. 3, or Eq. 4 for several
	// demand shapes): the model's server count. Zero when no workload is
	// known or the nominal quota cannot hold one.
	EffectiveServers int
	// EffectiveServersWithBorrowing is k_eff⁺, the same count with the
	// expected borrowable capacity added (§3.5): the paper's optimistic
	// bound, reported beside the nominal model, never instead of it; valid
	// when HasBorrowing (it differs from EffectiveServers).
	EffectiveServersWithBorrowing int
	HasBorrowing                  bool
	BottleneckFlavor              string
	BottleneckResource            string
	// HasArrivalsAndService is set once arrivals and service times have
	// been measured: ArrivalRate to ServiceSCV are meaningful only then.
	HasArrivalsAndService bool
	// ArrivalRate is λ (new workloads per second), PreemptionRate μ_p
	// (preempted workloads re-entering per second).
	ArrivalRate    float64
	ArrivalSCV     float64
	PreemptionRate float64
	MeanService    time.Duration
	ServiceSCV     float64
	// HasRates is set when the nominal model was evaluated: arrivals and
	// service times measured, 1 ≤ EffectiveServers and the quota bounded.
	// Utilization to WhittMeanWait and Priorities are meaningful only then.
	HasRates bool
	// Utilization is ρ_eff = (λ + μ_p)·E[S]/k_eff over the nominal
	// EffectiveServers; it may exceed 1.
	Utilization float64
	// Stable is ρ_eff < 1; when false no mean wait exists.
	Stable bool
	// ProbabilityOfWait is the Erlang-C probability (valid when Stable).
	ProbabilityOfWait float64
	// MeanWait is the paper's Approximation 1, WhittMeanWait the GI/G/k
	// estimate with the measured c_a² (valid when Stable).
	MeanWait      time.Duration
	WhittMeanWait time.Duration
	// WithBorrowing is the same model over EffectiveServersWithBorrowing:
	// the paper's optimistic bound k_eff⁺, valid when HasRatesWithBorrowing
	// (HasBorrowing, arrivals and service times measured, 1 ≤ k_eff⁺). It
	// is given also when the nominal quota holds no workload (k_eff = 0,
	// HasRates false) and borrowing does.
	WithBorrowing         LoadModel
	HasRatesWithBorrowing bool
	// Priorities break the a-priori model down by workload priority, from
	// the highest down, once arrivals of two or more priorities have been
	// measured (with HasRates): the paper's priority rule, each class
	// waiting behind the load of its own and every higher priority.
	Priorities []PriorityModel
}

// LoadModel is the a-priori M/G/k model of a ClusterQueue over one
// server count k.
type LoadModel struct {
	// Utilization is ρ = (λ + μ_p)·E[S]/k; it may exceed 1.
	Utilization float64
	// Stable is ρ < 1; ProbabilityOfWait (Erlang-C), MeanWait (the paper's
	// Approximation 1) and WhittMeanWait (GI/G/k) are valid only then.
	Stable            bool
	ProbabilityOfWait float64
	MeanWait          time.Duration
	WhittMeanWait     time.Duration
}

// PriorityModel is the a-priori model of one priority class of a
// ClusterQueue. Service times are not measured per priority: every class
// is given the ClusterQueue's E[S] and C_S².
type PriorityModel struct {
	Priority int32
	// ArrivalRate is λ_p, the measured arrivals of this priority per
	// second (preempted workloads re-entering are not split by priority
	// and not in it).
	ArrivalRate float64
	// Utilization is ρ_p = Σ_{p' ≥ p} λ_{p'}·E[S]/k_eff: the load of this
	// class and every class that passes it. It may exceed 1.
	Utilization float64
	// Stable is ρ_p < 1; MeanWait, the paper's Approximation 1 at ρ_p, is
	// valid only then.
	Stable   bool
	MeanWait time.Duration
}

// NewAPriori computes the a-priori model of paper §3.3–3.5 of a
// ClusterQueue cq: k_eff of the nominal quota over the demand mix (each
// distinct demand shape among the known workloads weighted by its count,
// Eq. 4; Eq. 3 for one shape) and k_eff⁺ with the expected borrowable
// capacity, and, once s has measured arrivals and service times, ρ_eff with
// preemption feedback, Erlang-C, the paper's Approximation 1 and Whitt's
// GI/G/k mean wait.
//
// The rule (the same as predict's): the model's server count is the
// nominal k_eff; Utilization to WhittMeanWait and the priority breakdown
// are over it. k_eff⁺ is the paper's optimistic bound: the same figures
// over it go beside the nominal ones, in WithBorrowing, also when k_eff is
// 0 and only borrowing lets a workload run.
//
// An empty mix gives the zero model. The error says what could not be
// computed (k_eff of a malformed quota or demand, a rejected load model);
// the model holds what could.
func NewAPriori(cq *capacity.ClusterQueue, mix []capacity.Class, s Stats) (APriori, error) {
	var m APriori
	if len(mix) == 0 {
		return m, nil
	}
	k, err := capacity.KEffMix(cq, mix, capacity.BasisNominal)
	if err != nil && !errors.Is(err, capacity.ErrZeroDemand) {
		return m, err
	}
	m.EffectiveServers = k.Servers
	m.BottleneckFlavor, m.BottleneckResource = k.Flavor, k.Resource
	kb, err := capacity.KEffMix(cq, mix, capacity.BasisExpectedBorrowing)
	if err == nil && kb.Servers != k.Servers {
		m.EffectiveServersWithBorrowing, m.HasBorrowing = kb.Servers, true
	}
	if !s.HasArrivals || !s.HasService {
		return m, nil
	}
	m.HasArrivalsAndService = true
	m.ArrivalRate, m.ArrivalSCV, m.PreemptionRate = s.ArrivalRate, s.ArrivalSCV, s.PreemptionRate
	m.MeanService, m.ServiceSCV = Seconds(s.ServiceMean), s.ServiceSCV
	var errs []error
	if k.Servers >= 1 && !k.Unbounded {
		l, err := loadModel(k.Servers, s)
		if err == nil {
			m.HasRates = true
			m.Utilization, m.Stable, m.ProbabilityOfWait = l.Utilization, l.Stable, l.ProbabilityOfWait
			m.MeanWait, m.WhittMeanWait = l.MeanWait, l.WhittMeanWait
			m.Priorities = priorityModels(k.Servers, s.PriorityRates, s.ServiceMean, s.ServiceSCV)
		}
		errs = append(errs, err)
	}
	if m.HasBorrowing && kb.Servers >= 1 && !kb.Unbounded {
		l, err := loadModel(kb.Servers, s)
		m.WithBorrowing, m.HasRatesWithBorrowing = l, err == nil
		errs = append(errs, err)
	}
	return m, errors.Join(errs...)
}

// loadModel evaluates the M/G/k model with the measured rates over servers
// (≥ 1; at most queueing.MaxServers are evaluated), or says why the model
// rejects the figures.
func loadModel(servers int, s Stats) (LoadModel, error) {
	r, err := queueing.Analyze(queueing.Model{
		Servers:        min(servers, queueing.MaxServers),
		ArrivalRate:    s.ArrivalRate,
		PreemptionRate: s.PreemptionRate,
		MeanService:    s.ServiceMean,
		ServiceSCV:     s.ServiceSCV,
		ArrivalSCV:     s.ArrivalSCV,
	})
	if err != nil {
		return LoadModel{}, fmt.Errorf("the load model over %d servers: %w", servers, err)
	}
	l := LoadModel{Utilization: r.Utilization, Stable: r.Stable}
	if r.Stable {
		l.ProbabilityOfWait = r.WaitProbability
		l.MeanWait = Seconds(r.Approximation1.MeanWait)
		l.WhittMeanWait = Seconds(r.Whitt.MeanWait)
	}
	return l, nil
}

// priorityModels applies the paper's priority rule to the measured
// arrivals by priority, with the ClusterQueue's E[S] (seconds) and C_S² for
// every class and servers = k_eff. It returns nil for fewer than two
// priorities or when the rule cannot be evaluated; classes come from the
// highest priority down.
func priorityModels(servers int, rates map[int32]float64, meanService, serviceSCV float64) []PriorityModel {
	if len(rates) < 2 || servers < 1 {
		return nil
	}
	classes := make([]queueing.PriorityClass, 0, len(rates))
	for _, p := range slices.Sorted(maps.Keys(rates)) {
		classes = append(classes, queueing.PriorityClass{Priority: p, ArrivalRate: rates[p], MeanService: meanService, ServiceSCV: serviceSCV})
	}
	results, err := queueing.AnalyzePriorityClasses(min(servers, queueing.MaxServers), classes)
	if err != nil {
		return nil
	}
	out := make([]PriorityModel, len(results))
	for i, r := range results {
		m := PriorityModel{Priority: r.Priority, ArrivalRate: classes[i].ArrivalRate, Utilization: r.Utilization, Stable: r.Stable}
		if r.Stable {
			m.MeanWait = Seconds(r.Wait.MeanWait)
		}
		out[len(results)-1-i] = m
	}
	return out
}
