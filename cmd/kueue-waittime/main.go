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

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/app"
	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
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

// newRootCommand assembles the command tree (see app.NewRootCommand).
func newRootCommand() *cobra.Command {
	return app.NewRootCommand()
}
