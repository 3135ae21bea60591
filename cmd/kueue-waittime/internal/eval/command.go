package eval

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	"sigs.k8s.io/kueue/pkg/features"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
	"github.com/kueue-waittime/kueue-waittime/pkg/estimator"
	"github.com/kueue-waittime/kueue-waittime/test/controlplane"
)

// startKueue starts a local control plane and the patched Kueue with the
// WaitTimeEstimation gate on, refreshing estimates every refresh. prior is
// the a-priori mean service time the estimator assumes until it has
// observed enough completions — what an operator would configure, and what
// the paper's formula is given too. mappings go into Kueue's Configuration
// (resources.deviceClassMappings), with the KueueDRAIntegration gate on.
func startKueue(ctx context.Context, refresh, prior time.Duration, mappings []configapi.DeviceClassMapping) (*controlplane.ControlPlane, error) {
	if err := utilfeature.DefaultMutableFeatureGate.Set(string(features.WaitTimeEstimation) + "=true"); err != nil {
		return nil, err
	}
	if len(mappings) > 0 {
		if err := utilfeature.DefaultMutableFeatureGate.Set(string(features.KueueDRAIntegration) + "=true"); err != nil {
			return nil, err
		}
	}
	quietKlog()
	cp, err := controlplane.Start(controlplane.Options{
		EstimatorOptions: []estimator.Option{
			estimator.WithRefreshPeriod(refresh),
			estimator.WithMaxStaleness(max(refresh, time.Second)),
			estimator.WithPriorMeanService(prior),
		},
		DeviceClassMappings: mappings,
	})
	if err != nil {
		return nil, err
	}
	if _, err := cp.StartKueue(ctx); err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	return cp, nil
}

// NewCommand returns `kueue-waittime eval`.
func NewCommand() *cobra.Command {
	var files []string
	var outDir string
	var poll, refresh time.Duration
	cmd := &cobra.Command{
		Use:   "eval -f SCENARIO.yaml [-f ...] [--out DIR]",
		Short: "Run scenarios on the real Kueue scheduler and compare the predictors",
		Long: `eval runs the patched Kueue scheduler in process on a real kube-apiserver and
etcd (built into bin/ by make envtest; PROJECT_DIR and KUBEBUILDER_ASSETS say
where), submits the scenario's workloads, finishes each after its sampled
service time, reads wait-time estimates through the visibility API while
workloads wait, and compares the forecast with the paper's Erlang-C formula,
Whitt's GI/G/k approximation and the paper's EMA baseline (alpha 0.3).
A scenario's dra section requests devices through a ResourceClaimTemplate,
which Kueue's DRA integration counts as the mapped logical resource.

It prints a markdown table per scenario and, with --out, writes
<name>.md, <name>.json, <name>-workloads.csv and two PNG plots
(<name>-levels.png, <name>-forecast.png) for each.`,
		Example: `  make eval EVAL_ARGS="-f test/eval/table2.yaml --out _output/eval"`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 {
				return cli.FlagError("file", "at least one scenario file is required")
			}
			var scenarios []*Scenario
			for _, f := range files {
				sc, err := LoadScenario(f)
				if err != nil {
					return cli.Usagef("%v", err)
				}
				scenarios = append(scenarios, sc)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			for _, sc := range scenarios {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: starting kube-apiserver, etcd and Kueue (WaitTimeEstimation on)\n", sc.Name)
				cp, err := startKueue(ctx, refresh, sc.MeanService.Duration, sc.deviceClassMappings())
				if err != nil {
					return err
				}
				h := &Harness{CP: cp, PollInterval: poll, Progress: cmd.ErrOrStderr()}
				report, err := h.Run(ctx, sc)
				if stopErr := cp.Stop(); err == nil {
					err = stopErr
				}
				if err != nil {
					return fmt.Errorf("%s: %w", sc.Name, err)
				}
				if err := report.WriteMarkdown(cmd.OutOrStdout()); err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout())
				if outDir != "" {
					if err := writeOutputs(outDir, report); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&files, "file", "f", nil, "scenario file (repeatable); see test/eval/")
	cmd.Flags().StringVar(&outDir, "out", "", "directory for the markdown, JSON, per-workload CSV and PNG outputs")
	cmd.Flags().DurationVar(&poll, "poll", 200*time.Millisecond, "how often the visibility API is read")
	cmd.Flags().DurationVar(&refresh, "refresh", 200*time.Millisecond, "the estimator's refresh period")
	return cmd
}

// quietKlog keeps the in-process kube components' klog lines off the
// terminal: the command's own output is the table.
func quietKlog() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	ctrllog.SetLogger(logr.Discard())
}

func writeOutputs(dir string, r *Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := r.WritePlots(dir); err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	for name, write := range map[string]func(io.Writer) error{
		r.Scenario.Name + ".md":            r.WriteMarkdown,
		r.Scenario.Name + ".json":          r.WriteJSON,
		r.Scenario.Name + "-workloads.csv": r.WriteCSV,
	} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if err := errors.Join(write(f), f.Close()); err != nil {
			return err
		}
	}
	return nil
}

// NewDemoCommand returns `kueue-waittime demo`, the README's main job.
func NewDemoCommand() *cobra.Command {
	var workloads int
	var utilization float64
	var meanService time.Duration
	var seed uint64
	var kubeconfigOut string
	var hold bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Stream workloads through a local Kueue and watch their wait-time estimates live",
		Long: `demo starts a local control plane (kube-apiserver and etcd) and the patched
Kueue with the WaitTimeEstimation gate on, creates a ClusterQueue with 2 CPU
and a LocalQueue, streams Poisson arrivals of 500m-CPU workloads (and one that
asks for 20 CPU, which is Unfeasible), finishes each after its service time,
and redraws a table of the pending workloads — position, admissibility, ETA
P50/P90 — from the visibility API. It ends with predicted versus actual
waits. Ctrl-C stops everything cleanly.`,
		Example: `  make demo
  kueue-waittime demo --workloads 60 --utilization 0.9 --mean-service 3s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if workloads < 2 {
				return cli.FlagError("workloads", "must be at least 2, got %d", workloads)
			}
			if !(utilization > 0) {
				return cli.FlagError("utilization", "must be > 0, got %v", utilization)
			}
			if meanService <= 0 {
				return cli.FlagError("mean-service", "must be > 0, got %v", meanService)
			}
			sc := &Scenario{
				Name:               "demo",
				Quota:              map[string]string{"cpu": "2", "memory": "1Gi"},
				Demand:             map[string]string{"cpu": "500m", "memory": "64Mi"},
				UnfeasibleFraction: 1 / float64(workloads),
				UnfeasibleDemand:   map[string]string{"cpu": "20", "memory": "64Mi"},
				Levels:             []float64{utilization},
				JobsPerLevel:       workloads,
				MeanService:        Duration{meanService},
				Service:            ServiceSpec{Distribution: "exponential", TruncateAt: 3},
				Seed:               seed,
			}
			if err := sc.Validate(); err != nil {
				return cli.Usagef("%v", err)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			fmt.Fprintln(cmd.ErrOrStderr(), "starting kube-apiserver, etcd and Kueue (WaitTimeEstimation on)…")
			cp, err := startKueue(ctx, 250*time.Millisecond, meanService, nil)
			if err != nil {
				return err
			}
			defer func() {
				fmt.Fprintln(cmd.ErrOrStderr(), "stopping Kueue and the control plane…")
				_ = cp.Stop()
			}()
			if kubeconfigOut != "" {
				if err := writeKubeconfig(cp.Kubeconfig, kubeconfigOut); err != nil {
					return err
				}
				defer os.Remove(kubeconfigOut)
			}
			tryIt := demoCommands(kubeconfigOut)
			fmt.Fprint(cmd.ErrOrStderr(), tryIt)
			h := &Harness{CP: cp, PollInterval: 500 * time.Millisecond, Live: cmd.OutOrStdout(), Namespace: demoNamespace}
			report, err := h.Run(ctx, sc)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout())
			if err := report.WriteSummary(cmd.OutOrStdout()); err != nil {
				return err
			}
			if hold {
				fmt.Fprint(cmd.ErrOrStderr(), "\nThe control plane keeps running until Ctrl-C.\n"+tryIt)
				<-ctx.Done()
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&kubeconfigOut, "kubeconfig-out", "_output/demo/kubeconfig",
		"where to write an administrator's kubeconfig of the demo control plane while it runs (empty: nowhere)")
	cmd.Flags().BoolVar(&hold, "hold", false, "keep the control plane running after the summary, until Ctrl-C")
	cmd.Flags().IntVar(&workloads, "workloads", 40, "how many workloads to submit")
	cmd.Flags().Float64Var(&utilization, "utilization", 0.85, "target utilization ρ of the ClusterQueue")
	cmd.Flags().DurationVar(&meanService, "mean-service", 3*time.Second, "mean service time of the workloads")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "random seed of arrivals and service times")
	return cmd
}

// demoNamespace holds the demo's LocalQueue "eval" (its ClusterQueue is
// "demo-0"), so the README's commands can name them.
const demoNamespace = "demo"

// demoCommands tells how to query the running demo as a user would.
func demoCommands(kubeconfig string) string {
	if kubeconfig == "" {
		return ""
	}
	return fmt.Sprintf(`While the demo runs, query it as a user would (in another terminal):
  KUBECONFIG=%[1]s bin/kueuectl list workload -n %[2]s
  KUBECONFIG=%[1]s bin/k8s/1.36.0/kubectl get --raw /apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/%[2]s/localqueues/eval/pendingworkloads
  (make kubectl builds bin/k8s/1.36.0/kubectl)
`, kubeconfig, demoNamespace)
}

// writeKubeconfig copies the control plane's administrator kubeconfig to dst
// (creating its directory), readable only by the user.
func writeKubeconfig(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o600)
}
