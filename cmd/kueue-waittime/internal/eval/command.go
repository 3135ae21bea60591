package eval

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/features"
	"sigs.k8s.io/kueue/pkg/scheduler/waittime/engine"
	"sigs.k8s.io/kueue/pkg/scheduler/waittime/estimator"
	"sigs.k8s.io/kueue/pkg/scheduler/waittimemetrics"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
	"github.com/kueue-waittime/kueue-waittime/internal/harness/controlplane"
	"github.com/kueue-waittime/kueue-waittime/internal/harness/report"
	"github.com/kueue-waittime/kueue-waittime/internal/harness/runner"
	"github.com/kueue-waittime/kueue-waittime/internal/harness/scenario"
)

// kueueRun is a local control plane with the patched Kueue running, its
// wait time estimator and the recorder of the estimator's ledger scores.
type kueueRun struct {
	cp        *controlplane.ControlPlane
	estimator *estimator.Estimator
	scores    *report.ScoreRecorder
	// replica is the non-scheduling estimator, when started with one.
	replica *estimator.Estimator
	// metricsURL is the manager's /metrics, when it serves them.
	metricsURL string
	// refreshBudget is the longest refresh that does not stretch the
	// estimator's refresh period (see scaledRefreshCPU).
	refreshBudget time.Duration
}

// harness returns a Harness on the run.
func (k *kueueRun) harness() *runner.Harness {
	return &runner.Harness{CP: k.cp, Estimator: k.estimator, Replica: k.replica, Scores: k.scores, RefreshBudget: k.refreshBudget}
}

// scaledRefreshCPU is the refresh loop's CPU budget for a refresh period
// that stands for the production default's (1s) in a scenario whose times
// are scaled down: the default budget, scaled up by the same factor (at
// most a whole CPU), so that a refresh stretches the period exactly when
// the same refresh would in production, and by as many periods.
func scaledRefreshCPU(refresh time.Duration) int {
	scale := float64(engine.DefaultRefreshPeriod) / float64(refresh)
	return int(min(1000, max(1, math.Round(engine.DefaultRefreshCPUMillicores*scale))))
}

// startKueue starts a local control plane and the patched Kueue with the
// WaitTimeEstimation gate on, refreshing estimates every refresh. prior is
// the a-priori mean service time the estimator assumes until it has
// observed enough completions — what an operator would configure. mappings
// go into Kueue's Configuration (resources.deviceClassMappings), with the
// KueueDRAIntegration gate on; afs is its admissionFairSharing (nil:
// off). The estimator reports its ledger scores to the run's recorder, as
// the manager reports them to its metrics. With a
// metricsAddress (host:port) the manager also serves its metrics there, the
// estimator's reported by the manager's own reporter, from the same events.
//
// With replica, a second estimator runs beside it as a replica that does
// not schedule would (same informers and cache, no scheduler hooks, no
// reporter), for Harness.Replica. With cycles, the in-process components'
// log goes to its sink, which keeps the scheduler's cycles (see quietKlog).
// requeueBatch is the batch period of Kueue's requeuer of inadmissible
// workloads (0: the control plane's default, Kueue's 1s scaled like the
// scenarios' service times).
func startKueue(ctx context.Context, refresh, prior, requeueBatch time.Duration, mappings []configapi.DeviceClassMapping, afs *configapi.AdmissionFairSharing, metricsAddress string, replica bool, cycles *cycleRecorder) (*kueueRun, error) {
	if err := utilfeature.DefaultMutableFeatureGate.Set(string(features.WaitTimeEstimation) + "=true"); err != nil {
		return nil, err
	}
	if len(mappings) > 0 {
		if err := utilfeature.DefaultMutableFeatureGate.Set(string(features.KueueDRAIntegration) + "=true"); err != nil {
			return nil, err
		}
	}
	quietKlog(cycles)
	scores := &report.ScoreRecorder{}
	var reporter estimator.MetricsReporter = scores
	if metricsAddress != "" {
		reporter = reporters{scores, waittimemetrics.NewReporter(nil, nil)}
	}
	// The estimator is configured from the Configuration as the manager's
	// is, with the refresh period and its CPU budget scaled like the
	// scenarios' service times; the prior is what no Configuration holds.
	section := &configapi.WaitTimeEstimation{
		RefreshPeriod:        &metav1.Duration{Duration: refresh},
		RefreshCPUMillicores: new(int32(scaledRefreshCPU(refresh))),
	}
	common := []estimator.Option{estimator.WithPriorMeanService(prior)}
	var replicaOpts []estimator.Option
	if replica {
		replicaOpts = common
	}
	cp, err := controlplane.Start(controlplane.Options{
		WaitTimeEstimation:      section,
		EstimatorOptions:        append(slices.Clone(common), estimator.WithMetricsReporter(reporter)),
		ReplicaEstimatorOptions: replicaOpts,
		DeviceClassMappings:     mappings,
		AdmissionFairSharing:    afs,
		MetricsBindAddress:      metricsAddress,
		RequeuingBatchPeriod:    requeueBatch,
	})
	if err != nil {
		return nil, err
	}
	k, err := cp.StartKueue(ctx)
	if err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	run := &kueueRun{cp: cp, estimator: k.Estimator, replica: k.Replica, scores: scores,
		refreshBudget: refresh * time.Duration(scaledRefreshCPU(refresh)) / 1000}
	if metricsAddress != "" {
		run.metricsURL = "http://" + metricsAddress + "/metrics"
	}
	return run, nil
}

// reporters hands everything the estimator reports to each of its members
// in turn.
type reporters []estimator.MetricsReporter

func (rs reporters) ReportQueueModel(m estimator.QueueModel) {
	for _, r := range rs {
		r.ReportQueueModel(m)
	}
}

func (rs reporters) ClearQueueModel(cq kueue.ClusterQueueReference) {
	for _, r := range rs {
		r.ClearQueueModel(cq)
	}
}

func (rs reporters) ReportScore(s estimator.Score) {
	for _, r := range rs {
		r.ReportScore(s)
	}
}

func (rs reporters) ReportUnscored(cq kueue.ClusterQueueReference, reason estimator.UnscoredReason) {
	for _, r := range rs {
		r.ReportUnscored(cq, reason)
	}
}

func (rs reporters) ReportRefresh(rr estimator.RefreshReport) {
	for _, r := range rs {
		r.ReportRefresh(rr)
	}
}

// freeLocalAddress returns 127.0.0.1:PORT with a port that was free a
// moment ago.
func freeLocalAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port for the metrics: %w", err)
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// NewCommand returns `kueue-waittime eval`.
func NewCommand() *cobra.Command {
	var files []string
	var outDir string
	var poll, refresh, requeueBatch time.Duration
	var parallel int
	var replica, onCluster, recordCycles, profile bool
	var summarize, replay, clusterDir string
	var seed uint64
	cmd := &cobra.Command{
		Use:   "eval -f SCENARIO.yaml [-f ...] [--out DIR]",
		Short: "Run scenarios on the real Kueue scheduler and compare the predictors",
		Long: `eval runs the patched Kueue scheduler in process on a real kube-apiserver and
etcd (built into bin/ by make envtest; PROJECT_DIR and KUBEBUILDER_ASSETS say
where). For every level and seed of a scenario it creates a replica (its own
namespace, ClusterQueues, cohorts and priority classes), submits the planned
arrivals, finishes each admitted workload after its sampled service time
(a preempted one restarts when admitted again), and scores the predictors
from the estimator's prediction ledger: for every workload pending at an
estimator refresh, its first published forecast and, from that same moment
and state, the paper's EMA baseline, its modified Erlang-C formula and
Whitt's GI/G/k approximation with the measured parameters, all against the
wait that remained. The first 20% of each replica's arrivals are warm-up.
Scenario files are single-queue (test/eval/table*.yaml) or multi-tenant
(test/eval/mt-*.yaml: cohorts, borrowing and lending, priorities,
preemption, mixed demands, DRA).

It prints a markdown table per scenario (per level, per ClusterQueue, per
priority class: MAE with 95% intervals, forecast/baseline MAE ratios, P50
and P90 coverage) and, with --out, writes <name>.md, <name>.json,
<name>-workloads.csv and PNG plots for each; --summarize DIR then writes
DIR/summary.md, every scenario and level in one table with the coverage
pooled over all of them; --replay-calibration DIR replays each ClusterQueue's
P50 and P90 calibrators, as the estimator runs them and in variants (another
step γ, misses counted when a wait passes its quantile), on those CSVs' raw
quantiles and outcomes, and prints the coverage each would have given.

--seed replaces each scenario's base seed, so its replicas draw other
arrivals and service times than its file's seed gives (the report's JSON
records the seed used). Run again with the file's seed, a scenario repeats
its arrival sequence and only the timing of the run changes; with another,
a miss can be told apart from one sequence's particular bursts.

With --cluster, each scenario runs instead on a local cluster of its own
(kube-apiserver, etcd, kube-controller-manager, kube-scheduler, KWOK nodes;
the manager is the image's /manager deployed from the rendered manifests, as
make cluster runs it; KUBEBUILDER_ASSETS, KWOK, KUEUE_MANIFESTS and
KUEUE_IMAGE_LAYOUT say where they are). Every arrival is a batch/v1 Job in its
replica's LocalQueue: Kueue's job integration suspends and admits it, the Job
controller creates its pod, kube-scheduler binds it to a KWOK node and KWOK
runs it for the sampled service time. The harness only submits and watches.
The scores are the manager's own ledger, read from its metrics endpoint at the
end (one row per ClusterQueue, as kueue-waittime score prints them; every
workload counts, no warm-up cut); --out writes <name>-cluster.md and
<name>-cluster.json. DRA scenarios are refused.`,
		Example: `  make eval EVAL_ARGS="-f test/eval/table2.yaml --out _output/eval"
  make eval-cluster   # eval --cluster -f test/eval/cluster.yaml --out _output/eval-cluster`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if replay != "" {
				if len(files) > 0 || summarize != "" {
					return cli.FlagError("replay-calibration", "takes the results of an earlier run alone")
				}
				if err := report.WriteCalibrationReplay(cmd.OutOrStdout(), replay); err != nil {
					return cli.Usagef("%v", err)
				}
				return nil
			}
			if summarize != "" {
				if len(files) > 0 {
					return cli.FlagError("summarize", "takes the results of an earlier run, not scenario files")
				}
				if cmd.Flags().Changed("seed") {
					return cli.FlagError("seed", "goes with the scenario files of a run, not --summarize")
				}
				if err := report.WriteDirSummary(summarize); err != nil {
					return cli.Usagef("%v", err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", filepath.Join(summarize, "summary.md"))
				return nil
			}
			if len(files) == 0 {
				return cli.FlagError("file", "at least one scenario file is required")
			}
			var reseed *uint64
			if cmd.Flags().Changed("seed") {
				reseed = &seed
			}
			specs, err := loadSpecs(files, reseed)
			if err != nil {
				return cli.Usagef("%v", err)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if onCluster {
				if set := cmd.Flags().Changed; set("replica") || set("refresh") || set("requeuing-batch-period") || set("parallel") || set("cycles") || set("profile") {
					return cli.Usagef("--replica, --refresh, --requeuing-batch-period, --parallel, --cycles and --profile go with the in-process mode: on the cluster the manifests' Configuration sets the refresh period, the manager requeues with Kueue's own batch period, one manager runs, the replicas run as the scenario's parallel says, and the scheduler logs in its pod")
				}
				return runClusterEval(ctx, cmd, specs, clusterDir, outDir, poll)
			}
			if cmd.Flags().Changed("cluster-dir") {
				return cli.FlagError("cluster-dir", "goes with --cluster")
			}
			if !(requeueBatch > 0) {
				return cli.FlagError("requeuing-batch-period", "must be > 0")
			}
			if recordCycles && outDir == "" {
				return cli.FlagError("cycles", "writes <name>-cycles.csv into the --out directory: give one")
			}
			if profile && outDir == "" {
				return cli.FlagError("profile", "writes <name>-cpu.pprof, <name>-block.pprof and <name>-mutex.pprof into the --out directory: give one")
			}
			for _, spec := range specs {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: starting kube-apiserver, etcd and Kueue (WaitTimeEstimation on)\n", spec.Name)
				var cycles *cycleRecorder
				if recordCycles {
					cycles = &cycleRecorder{now: time.Now}
				}
				k, err := startKueue(ctx, refresh, spec.PriorMeanService(), requeueBatch, spec.DeviceClassMappings(), spec.AdmissionFairSharing, "", replica, cycles)
				if err != nil {
					return err
				}
				h := k.harness()
				h.PollInterval, h.Progress, h.Parallel = poll, cmd.ErrOrStderr(), parallel
				var prof *runProfile
				if profile {
					if err := os.MkdirAll(outDir, 0o755); err != nil {
						return errors.Join(err, k.cp.Stop())
					}
					if prof, err = startRunProfile(outDir, spec.Name); err != nil {
						return errors.Join(err, k.cp.Stop())
					}
				}
				result, err := h.Run(ctx, spec)
				if prof != nil {
					err = errors.Join(err, prof.stop())
				}
				if stopErr := k.cp.Stop(); err == nil {
					err = stopErr
				}
				if err != nil {
					return fmt.Errorf("%s: %w", spec.Name, err)
				}
				if err := result.WriteMarkdown(cmd.OutOrStdout()); err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout())
				if outDir != "" {
					if err := writeOutputs(outDir, result); err != nil {
						return err
					}
				}
				if cycles != nil {
					if err := report.WriteFiles(outDir, map[string]func(io.Writer) error{spec.Name + "-cycles.csv": cycles.writeCSV}); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&files, "file", "f", nil, "scenario file (repeatable); see test/eval/")
	cmd.Flags().StringVar(&outDir, "out", "", "directory for the markdown, JSON, per-workload CSV and PNG outputs")
	cmd.Flags().DurationVar(&poll, "poll", 200*time.Millisecond, "how often the estimator's published results are sampled (admissibility labels, pending counts)")
	cmd.Flags().DurationVar(&refresh, "refresh", 100*time.Millisecond, "the estimator's refresh period (the production default 1s, scaled like the scenarios' service times)")
	cmd.Flags().StringVar(&summarize, "summarize", "", "instead of running: summarize the per-workload CSVs of an earlier --out directory into DIR/summary.md")
	cmd.Flags().StringVar(&replay, "replay-calibration", "", "instead of running: replay each ClusterQueue's P50 and P90 calibration, as built and in variants, on the per-workload CSVs of an earlier --out directory, and print their coverage")
	cmd.Flags().DurationVar(&requeueBatch, "requeuing-batch-period", 100*time.Millisecond, "the batch period of Kueue's requeuer of inadmissible workloads: how long after a quota release (a finish, a deletion) they go back to their queue, while workloads that arrive meanwhile are tried at once (Kueue's 1s, scaled like the scenarios' service times)")
	cmd.Flags().IntVar(&parallel, "parallel", 0, "how many (level, seed) replicas of a scenario run at once as independent ClusterQueues (0: all)")
	cmd.Flags().BoolVar(&onCluster, "cluster", false, "run on a local cluster (KWOK nodes, the manager deployed from the manifests) with every arrival a batch/v1 Job, scored from the manager's metrics")
	cmd.Flags().StringVar(&clusterDir, "cluster-dir", "_output/eval-cluster", "with --cluster: directory of each scenario's cluster state and logs (DIR/<scenario>, emptied first)")
	cmd.Flags().Uint64Var(&seed, "seed", 0, "replace every scenario's base seed (its replicas' arrivals and service times) by this one")
	cmd.Flags().BoolVar(&recordCycles, "cycles", false, "also write <name>-cycles.csv into --out: every scheduling cycle of the in-process scheduler (when it obtained its heads, how many, how long it had waited for them, how long its snapshot, nomination and processing took, and how many heads it put back not admitted, by status), from its log")
	cmd.Flags().BoolVar(&profile, "profile", false, "also write <name>-cpu.pprof, <name>-block.pprof and <name>-mutex.pprof into --out: this process's CPU profile while the scenario runs (Kueue, the estimators, the harness; not kube-apiserver or etcd), where its goroutines blocked, and its contended mutexes (the last two cumulative over the scenarios of one run), for go tool pprof")
	cmd.Flags().BoolVar(&replica, "replica", false, "also run a second estimator as a manager replica that does not schedule, and report how the P50s it publishes agree with the scheduling one's")
	return cmd
}

// runClusterEval runs each scenario on its own local cluster (eval
// --cluster): its arrivals as Jobs, scored from the manager's metrics.
// It prints each scenario's summary and the score table, and with outDir
// writes <name>-cluster.md and <name>-cluster.json.
func runClusterEval(ctx context.Context, cmd *cobra.Command, specs []*scenario.Spec, clusterDir, outDir string, poll time.Duration) error {
	for _, spec := range specs {
		errOut := cmd.ErrOrStderr()
		fmt.Fprintf(errOut, "%s: ", spec.Name)
		c, manager, token, err := runner.StartClusterKueue(ctx, filepath.Join(clusterDir, runner.Sanitize(spec.Name)), errOut)
		if err != nil {
			return fmt.Errorf("%s: %w", spec.Name, err)
		}
		h := &clusterHarness{
			ClusterHarness: runner.ClusterHarness{Cluster: c, PollInterval: poll, Progress: errOut},
			metricsURL:     manager.MetricsURL(), metricsToken: token,
		}
		result, err := h.run(ctx, spec)
		if stopErr := c.Stop(); err == nil {
			err = stopErr
		}
		if err != nil {
			return fmt.Errorf("%s: %w", spec.Name, err)
		}
		if err := result.WriteMarkdown(cmd.OutOrStdout()); err != nil {
			return err
		}
		if outDir == "" {
			continue
		}
		if err := report.WriteFiles(outDir, map[string]func(io.Writer) error{
			spec.Name + "-cluster.md":   result.WriteMarkdown,
			spec.Name + "-cluster.json": func(w io.Writer) error { return cli.WriteJSON(w, result) },
		}); err != nil {
			return err
		}
	}
	return nil
}

// quietKlog keeps the in-process kube components' klog lines off the
// terminal: the command's own output is the table. The controller-runtime
// log (Kueue's) is discarded, or, with cycles, handed to its sink, which
// keeps the scheduler's cycle lines and drops the rest.
func quietKlog(cycles *cycleRecorder) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	if cycles != nil {
		ctrllog.SetLogger(logr.New(cycles.sink()))
		return
	}
	ctrllog.SetLogger(logr.Discard())
}

// loadSpecs loads the scenario files; with seed not nil, every scenario
// takes *seed as its base seed instead of its file's.
func loadSpecs(files []string, seed *uint64) ([]*scenario.Spec, error) {
	var specs []*scenario.Spec
	for _, f := range files {
		spec, err := scenario.LoadSpec(f)
		if err != nil {
			return nil, err
		}
		if seed != nil {
			spec.Seed = *seed
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

func writeOutputs(dir string, r *report.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := r.WritePlots(dir); err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	return report.WriteFiles(dir, map[string]func(io.Writer) error{
		r.Spec.Name + ".md":            r.WriteMarkdown,
		r.Spec.Name + ".json":          r.WriteJSON,
		r.Spec.Name + "-workloads.csv": r.WriteCSV,
	})
}

// NewDemoCommand returns `kueue-waittime demo`, the README's main job.
func NewDemoCommand() *cobra.Command {
	var workloads int
	var utilization float64
	var meanService time.Duration
	var seed uint64
	var inProcess, hold bool
	var dir, kubeconfigOut, metricsAddress, summaryJSON string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Stream Jobs through Kueue on a local cluster and watch their wait-time estimates live",
		Long: `demo starts a local cluster — kube-apiserver and etcd, kube-controller-manager,
kube-scheduler and KWOK nodes — and deploys the patched Kueue from its rendered
manifests (the image's /manager, WaitTimeEstimation on), as make cluster does.
It creates a ClusterQueue with 2 CPU and a LocalQueue and submits Poisson
arrivals of batch/v1 Jobs of one 500m-CPU pod through it (the third Job asks
for 20 CPU, more than the ClusterQueue can ever hold: it is Unfeasible).
Kueue suspends and admits them, the Job controller creates their pods,
kube-scheduler binds them to KWOK nodes, and KWOK runs each pod for its Job's
service time, then it Succeeds. Meanwhile demo redraws the pending workloads
— position, admissibility, ETA P50/P90, reason — as the visibility API serves
them (into a file or pipe: a plain line every 5 seconds). It ends with what
the Jobs did and predicted versus actual waits, scored by the manager's own
prediction ledger, read from its metrics endpoint as
` + "`kueue-waittime score --url`" + ` reads it.

With --in-process, demo instead runs the patched Kueue inside this process on
kube-apiserver and etcd only, creates Workload objects directly and finishes
them itself (no Jobs, pods or nodes), and scores from the ledger in process.

The cluster needs the binaries and files make demo builds: KUBEBUILDER_ASSETS,
KWOK, KUEUE_MANIFESTS and KUEUE_IMAGE_LAYOUT say where they are. Ctrl-C stops
everything cleanly.`,
		Example: `  make demo
  make demo DEMO_ARGS="--workloads 12 --mean-service 5s"
  kueue-waittime demo --in-process --workloads 60 --utilization 0.9 --mean-service 3s`,
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
			set := cmd.Flags().Changed
			if inProcess && set("dir") {
				return cli.FlagError("dir", "is where the cluster keeps its state: not with --in-process")
			}
			if inProcess && set("summary-json") {
				return cli.FlagError("summary-json", "describes a run on the cluster: not with --in-process")
			}
			if !inProcess && (set("kubeconfig-out") || set("metrics-address")) {
				return cli.Usagef("--kubeconfig-out and --metrics-address go with --in-process; the cluster's kubeconfig is DIR/kubeconfig")
			}
			sc := &scenario.Scenario{
				Name:         "demo",
				Quota:        map[string]string{"cpu": "2", "memory": "1Gi"},
				Demand:       map[string]string{"cpu": "500m", "memory": "64Mi"},
				Levels:       []float64{utilization},
				JobsPerLevel: workloads,
				MeanService:  scenario.Duration{Duration: meanService},
				Service:      scenario.ServiceSpec{Distribution: "exponential", TruncateAt: 3},
				Seed:         seed,
			}
			if err := sc.Validate(); err != nil {
				return cli.Usagef("%v", err)
			}
			spec := scenario.SpecFromScenario(sc)
			spec.Seeds, spec.Warmup = new(1), new(0.0)
			// The demo promises one Unfeasible workload: the third asks
			// for 20 CPU of a 2-CPU ClusterQueue.
			unfeasible := func(p *scenario.Plan) {
				scenario.MakeUnfeasible(p, min(2, len(p.Arrivals)-1), map[string]string{"cpu": "20", "memory": "64Mi"})
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if inProcess {
				return runInProcessDemo(ctx, cmd, spec, unfeasible, kubeconfigOut, metricsAddress, hold)
			}
			return runClusterDemo(ctx, cmd, spec, unfeasible, dir, summaryJSON, hold)
		},
	}
	cmd.Flags().BoolVar(&inProcess, "in-process", false, "run Kueue in this process on kube-apiserver and etcd only, with Workload objects instead of Jobs (no pods, nodes or manifests)")
	cmd.Flags().StringVar(&dir, "dir", "_output/demo", "directory of the cluster's kubeconfig, metrics token, configuration and logs (emptied first)")
	cmd.Flags().StringVar(&summaryJSON, "summary-json", "", "also write the closing summary as JSON to this file")
	cmd.Flags().StringVar(&kubeconfigOut, "kubeconfig-out", "_output/demo/kubeconfig",
		"with --in-process: where to write an administrator's kubeconfig of the control plane while it runs (empty: nowhere)")
	cmd.Flags().BoolVar(&hold, "hold", false, "keep the cluster (or control plane) running after the summary, until Ctrl-C")
	cmd.Flags().StringVar(&metricsAddress, "metrics-address", "auto",
		"with --in-process: host:port where the manager serves its metrics over HTTP, for `kueue-waittime score --url` (auto: a free port on 127.0.0.1; empty: none)")
	cmd.Flags().IntVar(&workloads, "workloads", 30, "how many Jobs (workloads) to submit, the third of them Unfeasible")
	cmd.Flags().Float64Var(&utilization, "utilization", 0.8, "target utilization ρ of the ClusterQueue")
	cmd.Flags().DurationVar(&meanService, "mean-service", 8*time.Second, "mean service time (a pod's run time on its KWOK node)")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "random seed of arrivals and service times")
	return cmd
}

// runClusterDemo is the demo on a local cluster: Jobs, pods, KWOK nodes
// and the manager deployed from the manifests.
func runClusterDemo(ctx context.Context, cmd *cobra.Command, spec *scenario.Spec, adjust func(*scenario.Plan), dir, summaryJSON string, hold bool) error {
	errOut := cmd.ErrOrStderr()
	c, manager, token, err := runner.StartClusterKueue(ctx, dir, errOut)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer func() {
		fmt.Fprintln(errOut, "stopping Kueue and the cluster…")
		if err := c.Stop(); err != nil {
			fmt.Fprintln(errOut, "stopping the cluster:", err)
		}
	}()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	tokenFile := filepath.Join(dir, "metrics-token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		return err
	}
	tryIt := clusterDemoCommands(kubeconfig, manager.MetricsURL(), tokenFile, manager.Log)
	fmt.Fprint(errOut, tryIt)
	h := &clusterHarness{
		ClusterHarness: runner.ClusterHarness{
			Cluster: c, PollInterval: 500 * time.Millisecond, Live: cmd.OutOrStdout(), Namespace: demoNamespace, AdjustPlan: adjust,
		},
		metricsURL: manager.MetricsURL(), metricsToken: token,
	}
	result, err := h.run(ctx, spec)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	fmt.Fprintln(cmd.OutOrStdout())
	if err := result.WriteSummary(cmd.OutOrStdout()); err != nil {
		return err
	}
	if summaryJSON != "" {
		f, err := os.Create(summaryJSON)
		if err != nil {
			return err
		}
		if err := errors.Join(cli.WriteJSON(f, result), f.Close()); err != nil {
			return err
		}
	}
	if hold {
		fmt.Fprint(errOut, "\nThe cluster keeps running until Ctrl-C.\n"+tryIt)
		<-ctx.Done()
	}
	return nil
}

// runInProcessDemo is the demo with Kueue in this process and Workload
// objects (demo --in-process).
func runInProcessDemo(ctx context.Context, cmd *cobra.Command, spec *scenario.Spec, adjust func(*scenario.Plan), kubeconfigOut, metricsAddress string, hold bool) error {
	if metricsAddress == "auto" {
		addr, err := freeLocalAddress()
		if err != nil {
			return err
		}
		metricsAddress = addr
	}
	fmt.Fprintln(cmd.ErrOrStderr(), "starting kube-apiserver, etcd and Kueue (WaitTimeEstimation on)…")
	k, err := startKueue(ctx, 250*time.Millisecond, spec.PriorMeanService(), 0, nil, nil, metricsAddress, false, nil)
	if err != nil {
		return err
	}
	defer func() {
		fmt.Fprintln(cmd.ErrOrStderr(), "stopping Kueue and the control plane…")
		_ = k.cp.Stop()
	}()
	if kubeconfigOut != "" {
		if err := writeKubeconfig(k.cp.Kubeconfig, kubeconfigOut); err != nil {
			return err
		}
		defer os.Remove(kubeconfigOut)
	}
	tryIt := demoCommands(kubeconfigOut, k.metricsURL)
	fmt.Fprint(cmd.ErrOrStderr(), tryIt)
	h := k.harness()
	h.PollInterval, h.Live, h.Namespace = 500*time.Millisecond, cmd.OutOrStdout(), demoNamespace
	h.KeepObjects = hold
	h.AdjustPlan = adjust
	result, err := h.Run(ctx, spec)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	fmt.Fprintln(cmd.OutOrStdout())
	if err := result.WriteSummary(cmd.OutOrStdout()); err != nil {
		return err
	}
	if hold {
		fmt.Fprint(cmd.ErrOrStderr(), "\nThe control plane keeps running until Ctrl-C.\n"+tryIt)
		<-ctx.Done()
	}
	return nil
}

// demoNamespace holds the demo's LocalQueue "eval" (its ClusterQueue is
// "demo-eval"), so the README's commands can name them.
const demoNamespace = "demo"

// demoCommands tells how to query the running demo as a user would.
func demoCommands(kubeconfig, metricsURL string) string {
	var b strings.Builder
	if kubeconfig != "" {
		fmt.Fprintf(&b, `While the demo runs, query it as a user would (in another terminal):
  KUBECONFIG=%[1]s bin/kueuectl list workload -n %[2]s
  KUBECONFIG=%[1]s bin/k8s/1.36.0/kubectl get --raw /apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/%[2]s/localqueues/eval/pendingworkloads
  (make kubectl builds bin/k8s/1.36.0/kubectl)
`, kubeconfig, demoNamespace)
	}
	if metricsURL != "" {
		fmt.Fprintf(&b, `The manager's metrics, scored as an operator would (after the summary, with --hold):
  bin/kueue-waittime score --url %s
`, metricsURL)
	}
	return b.String()
}

// clusterDemoCommands tells how to watch the demo's cluster as a user and an
// operator would.
func clusterDemoCommands(kubeconfig, metricsURL, tokenFile, managerLog string) string {
	return fmt.Sprintf(`While the demo runs, watch it as a user would (in another terminal; make kubectl builds kubectl):
  KUBECONFIG=%[1]s bin/k8s/1.36.0/kubectl get jobs,pods -n %[2]s -o wide
  KUBECONFIG=%[1]s bin/kueuectl list workload -n %[2]s
  KUBECONFIG=%[1]s bin/k8s/1.36.0/kubectl get --raw /apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/%[2]s/localqueues/eval/pendingworkloads
The manager's metrics, scored as an operator would (the summary reads the same endpoint):
  bin/kueue-waittime score --url %[3]s --insecure-skip-tls-verify --token-file %[4]s
The manager's log: %[5]s
`, kubeconfig, demoNamespace, metricsURL, tokenFile, managerLog)
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
