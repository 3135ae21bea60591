package predict

import (
	"errors"
	"fmt"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
	"github.com/kueue-waittime/kueue-waittime/pkg/queueing"
)

// flavorName is the single ResourceFlavor that holds every --quota
// resource.
const flavorName = "default"

// Input is a validated predict request. Exactly one of Servers > 0 and a
// non-empty Quota (with Demand) describes the capacity, and exactly one of
// ArrivalRate and Utilization is set.
type Input struct {
	// Servers is k when given directly (--servers); 0 otherwise.
	Servers int
	// Quota, Borrowable and Demand are the --quota, --borrowable and
	// --demand lists in canonical units. Borrowable names only Quota
	// resources.
	Quota, Borrowable, Demand []cli.ResourceAmount
	// ArrivalRate is λ per second (--arrival-rate).
	ArrivalRate *float64
	// Utilization is the target ρ_eff (--utilization).
	Utilization *float64
	// MeanService is E[S] in seconds, > 0.
	MeanService float64
	// ServiceCV and ArrivalCV are the coefficients of variation C_S and
	// c_a (the model takes their squares).
	ServiceCV, ArrivalCV float64
	// PreemptionRate is μ_p per second.
	PreemptionRate float64
}

// Result is the answer of predict, printed as JSON with these keys. Nil
// pointers are figures that do not exist (unstable or Unfeasible queues).
type Result struct {
	// Admissibility is "Quotable" or "Unfeasible" (paper Def. 3).
	Admissibility string `json:"admissibility"`
	// Reason says why the workload is Unfeasible.
	Reason string `json:"reason,omitempty"`
	// KEff is the effective server count k_eff (or --servers).
	KEff *int `json:"kEff"`
	// Bottleneck is the binding resource of k_eff (quota mode only).
	Bottleneck string `json:"bottleneck,omitempty"`
	// ArrivalRate is λ per second: the flag, or ρ_eff·k/E[S] − μ_p.
	ArrivalRate *float64 `json:"arrivalRate"`
	// Utilization is ρ_eff = (λ + μ_p)·E[S]/k.
	Utilization *float64 `json:"utilization"`
	// Stable is ρ_eff < 1; nil when the model was not evaluated.
	Stable *bool `json:"stable"`
	cli.Waits
	// Note explains why the model could not be evaluated, when it could not.
	Note string `json:"note,omitempty"`
}

// Predict evaluates the model. Errors are *cli.UsageError: input that
// passes flag parsing but leaves the model undefined (k_eff = 0 with a
// target utilization, a preemption rate above the target load, figures
// the model rejects).
func Predict(in Input) (Result, error) {
	var r Result
	servers := in.Servers
	if servers > 0 {
		r.Admissibility = capacity.Quotable.String()
	} else {
		cq, w := capacityModel(in)
		class := capacity.Classify(cq, w)
		if class.Admissibility == capacity.Invalid {
			return Result{}, cli.Usagef("%v", class.Err)
		}
		k, err := capacity.KEff(cq, w, capacity.BasisNominal)
		if errors.Is(err, capacity.ErrZeroDemand) {
			return Result{}, cli.FlagError("demand", "requests nothing (every quantity is 0)")
		} else if err != nil {
			return Result{}, cli.Usagef("%v", err)
		}
		r.Admissibility = class.Admissibility.String()
		r.Reason = class.Reason
		r.KEff = &k.Servers
		r.Bottleneck = k.Resource
		if class.Admissibility == capacity.Unfeasible {
			return r, nil
		}
		servers = k.Servers
	}
	r.KEff = &servers
	if servers > queueing.MaxServers {
		return Result{}, cli.Usagef("k_eff %d exceeds the largest server count the model evaluates (%d)", servers, queueing.MaxServers)
	}

	lambda, err := arrivalRate(in, servers)
	if err != nil {
		return Result{}, err
	}
	r.ArrivalRate = cli.Float(lambda)
	if servers == 0 {
		r.Note = "k_eff = 0: the nominal quota cannot hold one such workload, so the queue model has no server (the workload can be admitted only by borrowing)"
		return r, nil
	}
	res, err := queueing.Analyze(queueing.Model{
		Servers:        servers,
		ArrivalRate:    lambda,
		PreemptionRate: in.PreemptionRate,
		MeanService:    in.MeanService,
		ServiceSCV:     in.ServiceCV * in.ServiceCV,
		ArrivalSCV:     in.ArrivalCV * in.ArrivalCV,
	})
	if err != nil {
		return Result{}, cli.Usagef("%v", err)
	}
	r.Utilization = cli.Float(res.Utilization)
	r.Stable = &res.Stable
	if res.Stable {
		r.Waits = cli.NewWaits(res.Approximation1, res.Whitt)
		r.ProbabilityOfWait = cli.Float(res.WaitProbability)
	}
	return r, nil
}

// arrivalRate returns λ: the flag, or for a target utilization ρ_eff the
// rate with (λ + μ_p)·E[S]/k = ρ_eff.
func arrivalRate(in Input, servers int) (float64, error) {
	if in.ArrivalRate != nil {
		return *in.ArrivalRate, nil
	}
	if servers == 0 {
		return 0, cli.FlagError("utilization", "k_eff is 0 (the nominal quota cannot hold one such workload), so no arrival rate yields a utilization; give --arrival-rate instead")
	}
	total, err := queueing.ArrivalRateForUtilization(*in.Utilization, servers, in.MeanService)
	if err != nil {
		return 0, cli.FlagError("utilization", "%v", err)
	}
	if in.PreemptionRate > total {
		return 0, cli.FlagError("preemption-rate", "%g/s alone exceeds the load of utilization %g (%g/s re-entries and arrivals together)", in.PreemptionRate, *in.Utilization, total)
	}
	return total - in.PreemptionRate, nil
}

// capacityModel builds the one-flavor ClusterQueue and the one-pod workload
// of quota mode.
func capacityModel(in Input) (*capacity.ClusterQueue, capacity.Workload) {
	borrowable := make(map[string]int64, len(in.Borrowable))
	for _, b := range in.Borrowable {
		borrowable[b.Name] = b.Value
	}
	group := capacity.ResourceGroup{Flavors: []capacity.FlavorQuotas{{Name: flavorName}}}
	for _, q := range in.Quota {
		group.Resources = append(group.Resources, q.Name)
		group.Flavors[0].Quotas = append(group.Flavors[0].Quotas, capacity.Quota{Nominal: q.Value, Borrowable: borrowable[q.Name]})
	}
	requests := make(map[string]int64, len(in.Demand))
	for _, d := range in.Demand {
		requests[d.Name] = d.Value
	}
	cq := &capacity.ClusterQueue{Name: "predict", ResourceGroups: []capacity.ResourceGroup{group}}
	return cq, capacity.Workload{PodSets: []capacity.PodSet{{Name: "main", Count: 1, Requests: requests}}}
}

// describe is the table rendering of a Result.
func describe(r Result, in Input) [][2]string {
	rows := [][2]string{{"admissibility", r.Admissibility}}
	if r.Reason != "" {
		rows = append(rows, [2]string{"reason", r.Reason})
	}
	if r.KEff != nil {
		k := fmt.Sprint(*r.KEff)
		if r.Bottleneck != "" {
			k += " (bottleneck: " + r.Bottleneck + ")"
		} else if in.Servers > 0 {
			k += " (--servers)"
		}
		rows = append(rows, [2]string{"k_eff", k})
	}
	if r.Admissibility == capacity.Unfeasible.String() {
		return append(rows, [2]string{"wait", "none: the workload can never be admitted without changing the quota or the workload"})
	}
	if r.ArrivalRate != nil {
		rows = append(rows, [2]string{"arrival rate λ", cli.Number(*r.ArrivalRate) + "/s"})
	}
	if in.PreemptionRate > 0 {
		rows = append(rows, [2]string{"preemption rate μ_p", cli.Number(in.PreemptionRate) + "/s"})
	}
	rows = append(rows,
		[2]string{"mean service E[S]", cli.Seconds(in.MeanService)},
		[2]string{"variability", fmt.Sprintf("C_S² = %s, c_a² = %s", cli.Number(in.ServiceCV*in.ServiceCV), cli.Number(in.ArrivalCV*in.ArrivalCV))},
	)
	if r.Note != "" {
		return append(rows, [2]string{"model", r.Note})
	}
	rows = append(rows, [2]string{"utilization ρ_eff", cli.NumberOrDash(r.Utilization)})
	if r.Stable != nil && !*r.Stable {
		return append(rows, [2]string{"stability", "unstable (ρ ≥ 1): no finite mean wait"})
	}
	return append(rows,
		[2]string{"stability", "stable (ρ < 1)"},
		[2]string{"P(wait > 0)", cli.NumberOrDash(r.ProbabilityOfWait) + " (Erlang-C)"},
		[2]string{"mean wait", cli.SecondsOrDash(r.MeanWaitSeconds) + " (paper Approximation 1)"},
		[2]string{"mean wait, Whitt", cli.SecondsOrDash(r.WhittMeanWaitSeconds) + " (GI/G/k, Allen–Cunneen)"},
		[2]string{"P90 wait", cli.SecondsOrDash(r.P90WaitSeconds) + " (Approximation 1 law)"},
	)
}
