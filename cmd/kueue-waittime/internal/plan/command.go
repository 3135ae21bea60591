package plan

import (
	"github.com/spf13/cobra"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

const long = `Plan wait times from a cluster's real Kueue manifests.

plan reads multi-document YAML or JSON files (-f, repeatable; - for stdin; a
directory for its *.yaml, *.yml and *.json files) holding:

  - Kueue objects as "kubectl get -o yaml" exports them: ResourceFlavor, Cohort
    and ClusterQueue of kueue.x-k8s.io/v1beta2 (v1beta1 is converted), also
    wrapped in a "kind: List". Other Kueue kinds (LocalQueue, Workload,
    AdmissionCheck, Topology, ...) are skipped; any other kind is an error.
    Unknown fields are errors.
  - One or more WorkloadClasses documents saying what arrives where:

      apiVersion: kueue-waittime.x-k8s.io/v1alpha1
      kind: WorkloadClasses
      classes:
      - name: small                  # unique
        clusterQueue: cq-eval        # must be defined in the input
        priority: 0                  # higher preempts lower (default 0)
        podSets:                     # count defaults to 1
        - {name: main, count: 1, requests: {cpu: 500m, memory: 64Mi}}
        arrivalRate: 0.128           # per second; or arrivalsPerHour: 460.8
        meanService: 20s             # E[S], a Go duration
        serviceCV: 1                 # C_S (default 1: exponential)
        arrivalCV: 1                 # c_a, for Whitt's estimate (default 1: Poisson)

The manifests are loaded into Kueue's own scheduler cache and snapshot, in
memory (no API server), so quotas, cohort borrowing and borrowing/lending
limits mean exactly what they mean to Kueue. Per ClusterQueue plan prints
each class's partition (Quotable, or Unfeasible with the reason: its demand
exceeds nominal + borrowable everywhere) and single-class k_eff; the k_eff of
the Quotable classes' mix weighted by arrival rates, with its bottleneck
flavor/resource; utilization ρ_eff and stability; the Erlang-C probability of
waiting, the paper's Approximation 1 mean wait, Whitt's GI/G/k mean and the
P90; and the same per priority level, where class p waits behind the load of
the classes of priority ≥ p only. ClusterQueues Kueue would keep inactive
(a missing ResourceFlavor, stopPolicy Hold) are reported as such.

k_eff divides the nominal quota (the paper's model) unless --capacity-basis
potential counts everything borrowable as well (an idle cohort).

Exit status: 0 when the plan was made (unstable queues and Unfeasible classes
included), 2 for invalid input (a missing file, an unknown kind or field, a
malformed quantity, a class naming an unknown ClusterQueue).`

const example = `  # The paper's evaluation cluster and its workload.
  kueue-waittime plan -f cluster.yaml -f classes.yaml

  # A live cluster's queues, and classes from stdin, as JSON.
  kubectl get resourceflavors,cohorts,clusterqueues -o yaml > cluster.yaml
  cat classes.yaml | kueue-waittime plan -f cluster.yaml -f - -o json`

// NewCommand returns the plan subcommand.
func NewCommand() *cobra.Command {
	var (
		files  []string
		basis  string
		output string
	)
	cmd := &cobra.Command{
		Use:     "plan -f FILE [-f FILE...]",
		Short:   "What-if wait times of every ClusterQueue from real Kueue manifests and workload classes",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := cli.ParseFormat(output)
			if err != nil {
				return err
			}
			var b capacity.CapacityBasis
			switch basis {
			case "nominal":
				b = capacity.BasisNominal
			case "potential":
				b = capacity.BasisPotential
			default:
				return cli.FlagError("capacity-basis", "must be nominal or potential, got %q", basis)
			}
			if len(files) == 0 {
				return cli.Usagef("-f is required: give the manifest and workload-class files")
			}
			in, err := load(files, cmd.InOrStdin())
			if err != nil {
				return err
			}
			states, notes, err := buildSnapshot(cmd.Context(), in)
			if err != nil {
				return err
			}
			report, err := analyze(in, states, notes, b)
			if err != nil {
				return err
			}
			if format == cli.FormatJSON {
				return cli.WriteJSON(cmd.OutOrStdout(), report)
			}
			return writeTable(cmd.OutOrStdout(), report)
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringArrayVarP(&files, "filename", "f", nil, "manifest or workload-class `FILE` (YAML/JSON, multi-document), a directory of them, or - for stdin; repeatable")
	fs.StringVar(&basis, "capacity-basis", "nominal", "`BASIS` k_eff divides: nominal quota (the paper) or potential (nominal + all borrowable, an idle cohort)")
	cli.AddOutputFlag(cmd, &output)
	return cmd
}
