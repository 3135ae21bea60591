// Command kueue-waittime answers "how long will my workload wait?" for
// Kueue ClusterQueues with the queue-theoretic model of the paper
// "Queue-Theoretic Admission Control": `predict` evaluates it from flags,
// `plan` from real ClusterQueue, Cohort and ResourceFlavor manifests;
// `score` reports how accurate a running manager's estimates are, from its
// metrics; `demo` and `eval` run the real scheduler, `cluster` a local
// cluster with Kueue deployed from its manifests.
package main

import (
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/clustercmd"
	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/dispatched"
	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/eval"
	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/plan"
	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/predict"
	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/score"
	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/whatif"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args and returns the exit status (see
// cli.Execute); it reads standard input for `-f -`.
func run(args []string, stdout, stderr io.Writer) int {
	return execute(args, os.Stdin, stdout, stderr)
}

// execute is run with an explicit standard input, for tests.
func execute(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Execute(newRootCommand(), args, stdin, stdout, stderr)
}

// newRootCommand assembles the command tree: one line per subcommand.
func newRootCommand() *cobra.Command {
	root := cli.NewRoot("kueue-waittime",
		"Wait-time estimates for Kueue ClusterQueues",
		"kueue-waittime estimates how long workloads wait for admission in Kueue,\nfrom the queue-theoretic model of the paper (k_eff by vector packing, the\nQuotable/Unfeasible partition, M/G/k waits).")
	root.AddCommand(
		predict.NewCommand(),
		plan.NewCommand(),
		eval.NewCommand(),
		eval.NewDemoCommand(),
		score.NewCommand(),
		clustercmd.NewCommand(),
		whatif.NewCommand(),
		dispatched.NewCommand(),
	)
	return root
}
