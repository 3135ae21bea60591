package predict

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
	"github.com/kueue-waittime/kueue-waittime/pkg/queueing"
)

// flags holds the raw flag values; parse validates them into an Input.
type flags struct {
	servers, quota, demand, borrowable string
	arrivalRate, utilization           string
	meanService                        string
	serviceCV, arrivalCV               string
	preemptionRate                     string
	output                             string
}

const long = `Evaluate the paper's a-priori queue model of one ClusterQueue.

The server count is --servers K, or k_eff derived by vector packing from a
nominal --quota and the --demand of one workload (paper Eq. 3): the largest
number of such workloads the quota holds at once, with the binding resource
as bottleneck. Every quota resource lives in one flavor named "default". The
workload is Quotable when its demand fits nominal + --borrowable in every
resource, and Unfeasible otherwise (it never gets admitted without changing
the quota), in which case no wait is given.

The queue is M/G/k with k = k_eff of the nominal quota, arrival rate λ
(--arrival-rate, or derived from a target --utilization ρ_eff as
λ = ρ_eff·k/E[S] − μ_p), preemption
re-entries μ_p (--preemption-rate) counted as extra arrivals, mean service
E[S] (--mean-service) and service-time coefficient of variation C_S
(--service-cv). It reports ρ_eff = (λ + μ_p)·E[S]/k, stability (ρ_eff < 1), the
Erlang-C probability of waiting, the paper's Approximation 1 mean wait
C(k, ρ)·E[S]/(k(1 − ρ))·(C_S² + 1)/2, Whitt's GI/G/k mean (which also uses the
interarrival coefficient of variation c_a, --arrival-cv) and the P90 of the
Approximation 1 wait law. An unstable queue has no finite wait.

With --borrowable, k_eff⁺ counts nominal + --borrowable (the paper's
optimistic bound, §3.5; the live estimator counts the amount it expects to
borrow). When it differs from k_eff, the same figures over k_eff⁺ are
reported beside the nominal ones (kEffWithBorrowing and withBorrowing in
JSON), never instead of them. A workload that only borrowing lets run
(k_eff = 0, k_eff⁺ ≥ 1) gets the figures with borrowing alone; a target
--utilization is then over k_eff⁺.

Quantities use Kubernetes notation (500m, 2, 64Mi) and are converted to
Kueue's units (cpu in millicores, memory in bytes); durations use Go notation
(20s, 1m30s). Exit status: 0 for any valid input (unstable and Unfeasible
included), 2 for invalid input.`

const example = `  # Paper Table 2: 2 CPU quota, 500m/64Mi jobs of 20s mean at 64% utilization.
  kueue-waittime predict --quota cpu=2,memory=1Gi --demand cpu=500m,memory=64Mi \
      --utilization 0.64 --mean-service 20s

  # Paper Table 3: memory is the bottleneck; JSON output.
  kueue-waittime predict --quota cpu=4,memory=2Gi --demand cpu=500m,memory=512Mi \
      --utilization 0.7 --mean-service 20s -o json

  # Borrowing: k_eff 1 on the nominal quota, k_eff⁺ 2 with the borrowable cpu.
  kueue-waittime predict --quota cpu=20 --borrowable cpu=20 --demand cpu=20 \
      --utilization 0.5 --mean-service 20s

  # A job larger than the quota and anything it could borrow is Unfeasible.
  kueue-waittime predict --quota cpu=2 --borrowable cpu=4 --demand cpu=20 \
      --arrival-rate 0.01 --mean-service 20s

  # Four servers given directly, bursty arrivals, deterministic service.
  kueue-waittime predict --servers 4 --arrival-rate 0.15 --mean-service 20s \
      --service-cv 0 --arrival-cv 2`

// NewCommand returns the predict subcommand.
func NewCommand() *cobra.Command {
	var f flags
	cmd := &cobra.Command{
		Use:     "predict (--servers K | --quota R=Q,... --demand R=Q,...) (--arrival-rate PER_SECOND | --utilization RHO) --mean-service DURATION",
		Short:   "A-priori wait of one ClusterQueue from its quota and workload (the paper's M/G/k model)",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in, format, err := f.parse(cmd)
			if err != nil {
				return err
			}
			r, err := Predict(in)
			if err != nil {
				return err
			}
			if format == cli.FormatJSON {
				return cli.WriteJSON(cmd.OutOrStdout(), r)
			}
			tw := cli.NewTable(cmd.OutOrStdout())
			for _, row := range describe(r, in) {
				fmt.Fprintf(tw, "%s\t%s\n", row[0], row[1])
			}
			return tw.Flush()
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVar(&f.servers, "servers", "", "server count `K` (>= 1); excludes --quota, --demand and --borrowable")
	fs.StringVar(&f.quota, "quota", "", "nominal quota as `R=Q,...` (e.g. cpu=2,memory=1Gi), all in one flavor \"default\"; needs --demand")
	fs.StringVar(&f.demand, "demand", "", "one workload's requests as `R=Q,...` (e.g. cpu=500m,memory=64Mi); needs --quota")
	fs.StringVar(&f.borrowable, "borrowable", "", "most the queue can borrow from its cohort, `R=Q,...` of --quota resources (default 0); needs --quota")
	fs.StringVar(&f.arrivalRate, "arrival-rate", "", "arrival rate λ in workloads `PER_SECOND` (>= 0); excludes --utilization")
	fs.StringVar(&f.utilization, "utilization", "", "target utilization `RHO` = ρ_eff (>= 0), from which λ = ρ·k/E[S] − μ_p; excludes --arrival-rate")
	fs.StringVar(&f.meanService, "mean-service", "", "mean service time E[S] as a Go `DURATION` (> 0, e.g. 20s)")
	fs.StringVar(&f.serviceCV, "service-cv", "1", "coefficient of variation `C` of service times (1 exponential, 0 deterministic)")
	fs.StringVar(&f.arrivalCV, "arrival-cv", "1", "coefficient of variation `C` of interarrival times, for Whitt's estimate (1 Poisson, 0 periodic)")
	fs.StringVar(&f.preemptionRate, "preemption-rate", "0", "preempted workloads re-entering the queue, `PER_SECOND` (>= 0), counted as extra arrivals")
	cli.AddOutputFlag(cmd, &f.output)
	return cmd
}

// parse validates the flags in a fixed order, so that the first problem is
// the one reported.
func (f *flags) parse(cmd *cobra.Command) (Input, cli.Format, error) {
	set := cmd.Flags().Changed
	var in Input
	format, err := cli.ParseFormat(f.output)
	if err != nil {
		return in, "", err
	}

	switch {
	case set("servers") && set("quota"):
		return in, "", cli.Usagef("--servers and --quota exclude each other: give the server count or the quota")
	case set("servers") && set("demand"):
		return in, "", cli.Usagef("--demand needs --quota, not --servers")
	case set("servers") && set("borrowable"):
		return in, "", cli.Usagef("--borrowable needs --quota, not --servers")
	case !set("servers") && !set("quota"):
		if set("demand") {
			return in, "", cli.Usagef("--demand needs --quota")
		}
		if set("borrowable") {
			return in, "", cli.Usagef("--borrowable needs --quota")
		}
		return in, "", cli.Usagef("one of --servers or --quota (with --demand) is required")
	case set("quota") && !set("demand"):
		return in, "", cli.Usagef("--quota needs --demand")
	}
	switch {
	case set("arrival-rate") && set("utilization"):
		return in, "", cli.Usagef("--arrival-rate and --utilization exclude each other: give one")
	case !set("arrival-rate") && !set("utilization"):
		return in, "", cli.Usagef("one of --arrival-rate or --utilization is required")
	case !set("mean-service"):
		return in, "", cli.Usagef("--mean-service is required")
	}

	if set("servers") {
		k, err := strconv.Atoi(strings.TrimSpace(f.servers))
		if err != nil || k < 1 || k > queueing.MaxServers {
			return in, "", cli.FlagError("servers", "must be an integer in [1, %d], got %q", queueing.MaxServers, f.servers)
		}
		in.Servers = k
	} else {
		if in.Quota, err = cli.ResourceList(f.quota); err != nil {
			return in, "", cli.FlagError("quota", "%v", err)
		}
		if in.Demand, err = cli.ResourceList(f.demand); err != nil {
			return in, "", cli.FlagError("demand", "%v", err)
		}
		for _, d := range in.Demand {
			if d.Name == "pods" {
				return in, "", cli.FlagError("demand", "pods is not requested: the workload counts as one pod against a pods quota")
			}
		}
		if set("borrowable") {
			if in.Borrowable, err = cli.ResourceList(f.borrowable); err != nil {
				return in, "", cli.FlagError("borrowable", "%v", err)
			}
			for _, b := range in.Borrowable {
				if !hasResource(in.Quota, b.Name) {
					return in, "", cli.FlagError("borrowable", "resource %s is not in --quota", b.Name)
				}
			}
		}
	}

	if set("arrival-rate") {
		v, err := cli.NonNegativeFloat(f.arrivalRate)
		if err != nil {
			return in, "", cli.FlagError("arrival-rate", "%v", err)
		}
		in.ArrivalRate = &v
	} else {
		v, err := cli.NonNegativeFloat(f.utilization)
		if err != nil {
			return in, "", cli.FlagError("utilization", "%v", err)
		}
		in.Utilization = &v
	}
	if in.MeanService, err = cli.PositiveDuration(f.meanService); err != nil {
		return in, "", cli.FlagError("mean-service", "%v", err)
	}
	for _, p := range []struct {
		name string
		raw  string
		dst  *float64
	}{
		{"service-cv", f.serviceCV, &in.ServiceCV},
		{"arrival-cv", f.arrivalCV, &in.ArrivalCV},
		{"preemption-rate", f.preemptionRate, &in.PreemptionRate},
	} {
		if *p.dst, err = cli.NonNegativeFloat(p.raw); err != nil {
			return in, "", cli.FlagError(p.name, "%v", err)
		}
	}
	return in, format, nil
}

func hasResource(list []cli.ResourceAmount, name string) bool {
	for _, r := range list {
		if r.Name == name {
			return true
		}
	}
	return false
}
