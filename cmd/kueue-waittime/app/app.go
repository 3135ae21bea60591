// Package app assembles the kueue-waittime command tree. It lies outside
// internal/ so that tests elsewhere in the module (test/docs) can check the
// documentation's command lines and scenarios against the real commands,
// flags and parser without running anything.
package app

import (
	"github.com/spf13/cobra"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/clustercmd"
	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/dispatched"
	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/eval"
	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/plan"
	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/predict"
	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/score"
	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/whatif"
	"github.com/kueue-waittime/kueue-waittime/internal/harness/scenario"
)

// NewRootCommand assembles the command tree: one line per subcommand.
func NewRootCommand() *cobra.Command {
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

// ParseScenario parses an evaluation scenario of either format as
// `kueue-waittime eval -f` reads it: strictly, with its defaults applied,
// validated. It returns the first problem.
func ParseScenario(data []byte) error {
	_, err := scenario.ParseSpec(data)
	return err
}
