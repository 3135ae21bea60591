// Package dispatched implements `kueue-waittime dispatched`: on a MultiKueue
// manager running the wait-time dispatcher, where a LocalQueue's workloads
// are being placed, read from the visibility API's dispatchedworkloads.
package dispatched

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	visibility "sigs.k8s.io/kueue/apis/visibility/v1beta2"
	kueueclientset "sigs.k8s.io/kueue/client-go/clientset/versioned"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
)

// NewCommand returns the dispatched command.
func NewCommand() *cobra.Command {
	var f flags
	cmd := &cobra.Command{
		Use:   "dispatched --local-queue NAME",
		Short: "Where a MultiKueue manager's wait-time dispatcher is placing a LocalQueue's workloads",
		Long: `dispatched lists, on a MultiKueue manager whose dispatcher is
kueue.x-k8s.io/multikueue-dispatcher-wait-time, the LocalQueue's workloads that
are being placed on worker clusters (not yet admitted on one): for each worker
of the workload's MultiKueueConfig, whether it is nominated, the admissibility
and the P50 and P90 waits it answered, and when; or why it gave no answer. A
nominated worker is not asked again: its row is the answer it was chosen on.
BASIS says on what the last nominating round chose (ExpectedWait, Incremental
or None). It reads the manager's visibility API (localqueues/dispatchedworkloads),
which the manager serves from memory.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := cli.ParseFormat(f.output)
			if err != nil {
				return err
			}
			if f.localQueue == "" {
				return cli.FlagError("local-queue", "is required")
			}
			return run(cmd.Context(), f, format, cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.localQueue, "local-queue", "", "the LocalQueue `NAME`")
	fs.StringVarP(&f.namespace, "namespace", "n", "", "the `NAMESPACE` (default: the kubeconfig's)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "the kubeconfig `FILE` (default: $KUBECONFIG, ~/.kube/config, in-cluster)")
	cli.AddOutputFlag(cmd, &f.output)
	return cmd
}

type flags struct {
	localQueue, namespace, kubeconfig, output string
}

func run(ctx context.Context, f flags, format cli.Format, out io.Writer) error {
	restConfig, namespace, err := cli.RESTConfig(f.kubeconfig, f.namespace)
	if err != nil {
		return err
	}
	clientset, err := kueueclientset.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	summary, err := clientset.VisibilityV1beta2().LocalQueues(namespace).GetDispatchedWorkloadsSummary(ctx, f.localQueue, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("LocalQueue %s/%s: %w", namespace, f.localQueue, err)
	}
	if format == cli.FormatJSON {
		return cli.WriteJSON(out, summary)
	}
	return render(out, summary)
}

// render prints one row per worker of each workload, or a line saying that
// none is being placed.
func render(out io.Writer, s *visibility.DispatchedWorkloadsSummary) error {
	if len(s.Items) == 0 {
		_, err := fmt.Fprintln(out, "No workload is being placed on a worker cluster.")
		return err
	}
	tw := cli.NewTable(out)
	fmt.Fprintln(tw, "WORKLOAD\tBASIS\tWORKER\tNOMINATED\tADMISSIBILITY\tP50\tP90\tANSWERED\tNOTE")
	for _, wl := range s.Items {
		for _, w := range wl.Workers {
			admissibility, p50, p90, answered, note := "-", "-", "-", "-", w.Error
			if e := w.WaitTimeEstimate; e != nil {
				admissibility, p50, p90 = string(e.Admissibility), milliseconds(e.P50WaitMilliseconds), milliseconds(e.P90WaitMilliseconds)
				if note == "" {
					note = e.Reason
				}
			}
			if w.AnsweredAt != nil {
				answered = w.AnsweredAt.UTC().Format("2006-01-02T15:04:05.000Z")
			}
			if note == "" {
				note = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%t\t%s\t%s\t%s\t%s\t%s\n", wl.Name, wl.Basis, w.Name, w.Nominated, admissibility, p50, p90, answered, note)
		}
	}
	return tw.Flush()
}

func milliseconds(v *int64) string {
	if v == nil {
		return "-"
	}
	return cli.Seconds(float64(*v) / 1000)
}
