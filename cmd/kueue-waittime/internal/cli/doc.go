// Package cli holds what the kueue-waittime subcommands share: running a
// cobra command tree in-process with an exit code instead of os.Exit, the
// usage-error convention (exit status 2 with one line on stderr), parsing of
// numbers, durations and Kubernetes quantities from flags and files, the
// `-o table|json` output switch, and the formatting of the wait figures
// both predict and plan print.
package cli
