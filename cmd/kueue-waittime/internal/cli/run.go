package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// Exit statuses of the kueue-waittime command.
const (
	// ExitOK: the command ran; its answer (stable, unstable, Unfeasible…)
	// is on stdout.
	ExitOK = 0
	// ExitFailure: the input was valid but the command could not finish
	// (for example stdout could not be written).
	ExitFailure = 1
	// ExitUsage: invalid input. One line on stderr says why; stdout is
	// empty.
	ExitUsage = 2
)

// UsageError marks an error caused by invalid input: the command exits
// with ExitUsage.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a *UsageError with a formatted message.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// FlagError returns a *UsageError about one flag's value in the form
// `--name: message`, the message formatted from format and args.
func FlagError(name, format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf("--%s: %s", name, fmt.Sprintf(format, args...))}
}

// NewRoot returns the root command of a tool made of subcommands: it
// silences cobra's own error and usage printing (Execute prints one line
// instead), turns flag-parsing errors into usage errors and, run without a
// subcommand, prints its help.
func NewRoot(use, short, long string) *cobra.Command {
	root := &cobra.Command{
		Use:           use,
		Short:         short,
		Long:          long,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &UsageError{Err: err}
	})
	return root
}

// Execute runs root with args, reading from stdin and writing to stdout
// and stderr, and returns the exit status: ExitOK on success, ExitUsage for
// invalid input (a *UsageError, a flag or argument error, an unknown
// subcommand) and ExitFailure otherwise. On error exactly one line,
// prefixed with the failing command's path ("kueue-waittime predict: "),
// goes to stderr. Subcommands inherit root's flag-error handling.
func Execute(root *cobra.Command, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteC()
	if err == nil {
		return ExitOK
	}
	path := root.Name()
	if cmd != nil {
		path = cmd.CommandPath()
	}
	fmt.Fprintf(stderr, "%s: %s\n", path, oneLine(err.Error()))
	var usage *UsageError
	if errors.As(err, &usage) || isCobraUsageError(err) {
		return ExitUsage
	}
	return ExitFailure
}

// isCobraUsageError recognizes the errors cobra itself returns for bad
// arguments (it has no error types for them).
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, prefix := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "invalid argument", "flag needs an argument", "required flag"} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}

// oneLine folds a multi-line message (an aggregated validation error, say)
// into one line.
func oneLine(msg string) string {
	fields := strings.FieldsFunc(msg, func(r rune) bool { return r == '\n' || r == '\r' })
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	return strings.Join(fields, "; ")
}
