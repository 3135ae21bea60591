package estimator

import (
	"errors"
	"maps"
	"slices"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/util/priority"

	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/queueing"
)

// fillQueueModel computes the a-priori model of paper §3.3–3.5: k_eff of
// the nominal quota over the demand mix (each distinct demand shape among
// the known workloads weighted by its count, Eq. 4; Eq. 3 for one shape;
// see demandClasses.mix) and k_eff⁺ with the expected borrowable capacity,
// and, once arrivals and service times are measured, ρ_eff with preemption
// feedback, Erlang-C, the paper's Approximation 1 and Whitt's GI/G/k mean
// wait.
//
// The rule (the same as predict's): the model's server count is the
// nominal k_eff; Utilization to WhittMeanWait and the priority breakdown
// are over it. k_eff⁺ is the paper's optimistic bound: the same figures
// over it go beside the nominal ones, in WithBorrowing, also when k_eff is
// 0 and only borrowing lets a workload run.
func (e *Estimator) fillQueueModel(m *QueueModel, cq *capacity.ClusterQueue, mix []capacity.Class, v statsView) {
	if len(mix) == 0 {
		return
	}
	k, err := capacity.KEffMix(cq, mix, capacity.BasisNominal)
	if err != nil && !errors.Is(err, capacity.ErrZeroDemand) {
		e.opts.log.V(4).Info("Cannot compute k_eff", "clusterQueue", m.ClusterQueue, "err", err)
		return
	}
	m.EffectiveServers = k.Servers
	m.BottleneckFlavor, m.BottleneckResource = k.Flavor, k.Resource
	kb, err := capacity.KEffMix(cq, mix, capacity.BasisExpectedBorrowing)
	if err == nil && kb.Servers != k.Servers {
		m.EffectiveServersWithBorrowing, m.HasBorrowing = kb.Servers, true
	}
	if !v.hasArrivals || !v.hasService {
		return
	}
	m.HasArrivalsAndService = true
	m.ArrivalRate, m.ArrivalSCV, m.PreemptionRate = v.arrivalRate, v.arrivalSCV, v.preemptionRate
	m.MeanService, m.ServiceSCV = seconds(v.serviceMean), v.serviceSCV
	if k.Servers >= 1 && !k.Unbounded {
		if l, ok := e.loadModel(m.ClusterQueue, k.Servers, v); ok {
			m.HasRates = true
			m.Utilization, m.Stable, m.ProbabilityOfWait = l.Utilization, l.Stable, l.ProbabilityOfWait
			m.MeanWait, m.WhittMeanWait = l.MeanWait, l.WhittMeanWait
			m.Priorities = priorityModels(k.Servers, v.priorityRates, v.serviceMean, v.serviceSCV)
		}
	}
	if m.HasBorrowing && kb.Servers >= 1 && !kb.Unbounded {
		m.WithBorrowing, m.HasRatesWithBorrowing = e.loadModel(m.ClusterQueue, kb.Servers, v)
	}
}

// loadModel evaluates the M/G/k model with the measured rates over servers
// (≥ 1; at most queueing.MaxServers are evaluated); false when the model
// rejects the figures.
func (e *Estimator) loadModel(cq kueue.ClusterQueueReference, servers int, v statsView) (LoadModel, bool) {
	r, err := queueing.Analyze(queueing.Model{
		Servers:        min(servers, queueing.MaxServers),
		ArrivalRate:    v.arrivalRate,
		PreemptionRate: v.preemptionRate,
		MeanService:    v.serviceMean,
		ServiceSCV:     v.serviceSCV,
		ArrivalSCV:     v.arrivalSCV,
	})
	if err != nil {
		e.opts.log.V(4).Info("Cannot analyze the queue model", "clusterQueue", cq, "servers", servers, "err", err)
		return LoadModel{}, false
	}
	l := LoadModel{Utilization: r.Utilization, Stable: r.Stable}
	if r.Stable {
		l.ProbabilityOfWait = r.WaitProbability
		l.MeanWait = seconds(r.Approximation1.MeanWait)
		l.WhittMeanWait = seconds(r.Whitt.MeanWait)
	}
	return l, true
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
			m.MeanWait = seconds(r.Wait.MeanWait)
		}
		out[len(results)-1-i] = m
	}
	return out
}

func priorityOf(wl *kueue.Workload) int32 {
	if wl == nil {
		return 0
	}
	return priority.Priority(wl)
}
