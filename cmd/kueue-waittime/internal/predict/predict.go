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
// pointers are figures that do not exist (unstable or Unfeasible queues, or
// a nominal quota that holds no workload).
//
// The rule (the same as the live estimator's queue model): the model's
// server count is the nominal k_eff; utilization, stability and waits are
// over it. With --borrowable, k_eff⁺ counts the whole borrowable amount
// too: the paper's optimistic bound (§3.5), whose figures go beside the
// nominal ones in WithBorrowing, never instead of them.
type Result struct {
	// Admissibility is "Quotable" or "Unfeasible" (paper Def. 3).
	Admissibility string `json:"admissibility"`
	// Reason says why the workload is Unfeasible.
	Reason string `json:"reason,omitempty"`
	// KEff is the effective server count k_eff of the nominal quota (or
	// --servers).
	KEff *int `json:"kEff"`
	// KEffWithBorrowing is k_eff⁺, the count on nominal + --borrowable;
	// given when it differs from KEff.
	KEffWithBorrowing *int `json:"kEffWithBorrowing,omitempty"`
	// Bottleneck is the binding resource of k_eff (quota mode only).
	Bottleneck string `json:"bottleneck,omitempty"`
	// ArrivalRate is λ per second: the flag, or ρ_eff·k/E[S] − μ_p with k
	// = k_eff (k_eff⁺ when k_eff is 0).
	ArrivalRate *float64 `json:"arrivalRate"`
	Load
	// WithBorrowing is the model over KEffWithBorrowing; set with it.
	WithBorrowing *Load `json:"withBorrowing,omitempty"`
	// Note explains why the nominal model could not be evaluated, when it
	// could not, or which server count a target utilization is over.
	Note string `json:"note,omitempty"`
}

// Load is the M/G/k model over one server count k.
type Load struct {
	// Utilization is ρ_eff = (λ + μ_p)·E[S]/k.
	Utilization *float64 `json:"utilization"`
	// Stable is ρ_eff < 1; nil when the model was not evaluated.
	Stable *bool `json:"stable"`
	cli.Waits
}

// Predict evaluates the model. Errors are *cli.UsageError: input that
// passes flag parsing but leaves the model undefined (no server even with
// borrowing and a target utilization, a preemption rate above the target
// load, figures the model rejects).
func Predict(in Input) (Result, error) {
	var r Result
	servers, borrowing := in.Servers, 0
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
		kb, err := capacity.KEff(cq, w, capacity.BasisPotential)
		if err != nil {
			return Result{}, cli.Usagef("%v", err)
		}
		if kb.Servers != k.Servers {
			borrowing = kb.Servers
			r.KEffWithBorrowing = &borrowing
		}
	}
	r.KEff = &servers
	if servers > queueing.MaxServers {
		return Result{}, cli.Usagef("k_eff %d exceeds the largest server count the model evaluates (%d)", servers, queueing.MaxServers)
	}
	if borrowing > queueing.MaxServers {
		return Result{}, cli.Usagef("k_eff with borrowing %d exceeds the largest server count the model evaluates (%d)", borrowing, queueing.MaxServers)
	}

	lambda, err := arrivalRate(in, servers, borrowing)
	if err != nil {
		return Result{}, err
	}
	r.ArrivalRate = cli.Float(lambda)
	if servers == 0 {
		r.Note = "k_eff = 0: the nominal quota cannot hold one such workload, so the nominal model has no server; the workload can be admitted only by borrowing (see withBorrowing)"
		if in.Utilization != nil {
			r.Note += "; --utilization is over k_eff with borrowing"
		}
	} else if r.Load, err = load(in, servers, lambda); err != nil {
		return Result{}, err
	}
	if borrowing > 0 {
		l, err := load(in, borrowing, lambda)
		if err != nil {
			return Result{}, err
		}
		r.WithBorrowing = &l
	}
	return r, nil
}

// load evaluates the M/G/k model over servers (≥ 1) at arrival rate λ.
func load(in Input, servers int, lambda float64) (Load, error) {
	res, err := queueing.Analyze(queueing.Model{
		Servers:        servers,
		ArrivalRate:    lambda,
		PreemptionRate: in.PreemptionRate,
		MeanService:    in.MeanService,
		ServiceSCV:     in.ServiceCV * in.ServiceCV,
		ArrivalSCV:     in.ArrivalCV * in.ArrivalCV,
	})
	if err != nil {
		return Load{}, cli.Usagef("%v", err)
	}
	l := Load{Utilization: cli.Float(res.Utilization), Stable: &res.Stable}
	if res.Stable {
		l.Waits = cli.NewWaits(res.Approximation1, res.Whitt)
		l.ProbabilityOfWait = cli.Float(res.WaitProbability)
	}
	return l, nil
}

// arrivalRate returns λ: the flag, or for a target utilization ρ_eff the
// rate with (λ + μ_p)·E[S]/k = ρ_eff, k the nominal servers, or the servers
// with borrowing when the nominal quota holds no workload.
func arrivalRate(in Input, servers, borrowing int) (float64, error) {
	if in.ArrivalRate != nil {
		return *in.ArrivalRate, nil
	}
	if servers == 0 {
		servers = borrowing
	}
	if servers == 0 {
		return 0, cli.FlagError("utilization", "k_eff is 0 even with borrowing (neither the nominal quota nor nominal + --borrowable holds one such workload), so no arrival rate yields a utilization; give --arrival-rate instead")
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
	if r.KEffWithBorrowing != nil {
		rows = append(rows, [2]string{"k_eff⁺", fmt.Sprint(*r.KEffWithBorrowing) + " (nominal + --borrowable: the optimistic bound)"})
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
		rows = append(rows, [2]string{"model", r.Note})
	}
	if r.Utilization != nil {
		rows = append(rows, describeLoad(r.Load, "")...)
	}
	if r.WithBorrowing != nil {
		rows = append(rows, describeLoad(*r.WithBorrowing, " with borrowing")...)
	}
	return rows
}

// describeLoad renders the figures of one server count, each label
// followed by suffix.
func describeLoad(l Load, suffix string) [][2]string {
	rows := [][2]string{{"utilization ρ_eff" + suffix, cli.NumberOrDash(l.Utilization)}}
	if l.Stable != nil && !*l.Stable {
		return append(rows, [2]string{"stability" + suffix, "unstable (ρ ≥ 1): no finite mean wait"})
	}
	return append(rows,
		[2]string{"stability" + suffix, "stable (ρ < 1)"},
		[2]string{"P(wait > 0)" + suffix, cli.NumberOrDash(l.ProbabilityOfWait) + " (Erlang-C)"},
		[2]string{"mean wait" + suffix, cli.SecondsOrDash(l.MeanWaitSeconds) + " (paper Approximation 1)"},
		[2]string{"mean wait, Whitt" + suffix, cli.SecondsOrDash(l.WhittMeanWaitSeconds) + " (GI/G/k, Allen–Cunneen)"},
		[2]string{"P90 wait" + suffix, cli.SecondsOrDash(l.P90WaitSeconds) + " (Approximation 1 law)"},
	)
}
