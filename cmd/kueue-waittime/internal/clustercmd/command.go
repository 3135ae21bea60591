// Package clustercmd is the `cluster` subcommand: a local cluster with the
// patched Kueue deployed from its manifests, kept running until Ctrl-C.
package clustercmd

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/kueue-waittime/kueue-waittime/internal/harness/cluster"
)

// NewCommand returns the `cluster` command.
func NewCommand() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Run a local cluster (KWOK nodes) with the patched Kueue deployed from its manifests, until Ctrl-C",
		Long: `cluster starts kube-apiserver and etcd, kube-controller-manager,
kube-scheduler and KWOK (four 8-CPU nodes, two nodes with four GPUs as an
extended resource and two with four DRA devices, simulated), applies the rendered manifests (make manifests) and runs the
manager binary of the image (make image) as the manifests' ServiceAccount.
It prints the kubeconfig to use and waits; Ctrl-C stops everything.

A Job's pods run for the duration of their annotation
pod-complete.stage.kwok.x-k8s.io/delay (default 10s), then Succeed.

The binaries come from KUBEBUILDER_ASSETS and KWOK, the manifests from
KUEUE_MANIFESTS and the image from KUEUE_IMAGE_LAYOUT: make cluster sets
them all.`,
		Example: `  make cluster
  KUBECONFIG=_output/cluster/kubeconfig bin/k8s/1.36.0/kubectl get nodes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			abs, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			// A previous run's state (certificates, logs) is not reused.
			if err := os.RemoveAll(abs); err != nil {
				return err
			}
			errOut := cmd.ErrOrStderr()
			start := time.Now()
			fmt.Fprintln(errOut, "cluster: starting kube-apiserver, etcd, kube-controller-manager, kube-scheduler and KWOK…")
			c, err := cluster.Start(ctx, cluster.Options{Dir: abs})
			if err != nil {
				return err
			}
			defer func() {
				fmt.Fprintln(errOut, "cluster: stopping…")
				if err := c.Stop(); err != nil {
					fmt.Fprintln(errOut, "cluster:", err)
				}
			}()
			fmt.Fprintf(errOut, "cluster: nodes Ready after %s; deploying Kueue from the manifests…\n", time.Since(start).Round(time.Second))
			managers, err := c.DeployKueue(ctx, cluster.KueueOptions{})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, `cluster: ready after %s.
  kubeconfig (administrator): %s
  manager log:                %s
  manager metrics:            %s (a ServiceAccount token bound to kueue-metrics-reader)
  component logs:             %s
Try:
  export KUBECONFIG=%s
  bin/k8s/1.36.0/kubectl get nodes          # make kubectl builds it
Ctrl-C stops the cluster.
`, time.Since(start).Round(time.Second), c.AdminKubeconfig, managers[0].Log, managers[0].MetricsURL(), filepath.Join(abs, "logs"), c.AdminKubeconfig)
			ticker := time.NewTicker(time.Second)
			defer ticker.Stop()
			for {
				select {
				case <-ctx.Done():
					return nil
				case <-ticker.C:
					if err := c.Alive(); err != nil {
						return err
					}
				}
			}
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "_output/cluster", "directory of the kubeconfigs, configuration and logs (emptied first)")
	return cmd
}
