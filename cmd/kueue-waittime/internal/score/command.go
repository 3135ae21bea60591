package score

import (
	"context"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
)

const long = `Score the wait time estimates of a running Kueue manager from its metrics.

With the WaitTimeEstimation gate on, the manager scores every workload at its
admission against the first estimate it published for it: the forecast and,
computed at that same moment, three baselines (the EMA of observed waits, the
paper's Erlang-C formula, Whitt's GI/G/k formula), plus whether the workload
was admitted within its first P50 and P90. score reads those metrics and
prints, per ClusterQueue (per priority too, if a priority or priority_class
label is ever present) and over all ClusterQueues:

  - workloads scored: the forecast's answers plus its non-answers;
  - per predictor, the workloads it answered, its MAE (exact: the error
    histogram's sum over its count) and its median absolute error,
    estimated from the histogram's buckets (≈);
  - the forecast's MAE over each baseline's (0.62× means 38% smaller); all
    predictors are scored on the same workloads, except those a baseline
    had no answer for, which the verdict points out;
  - P50 and P90 coverage, the fraction admitted within the first published
    quantile, with a Wilson 95% interval (it assumes independent workloads,
    so it is too narrow on a congested queue); the manager's decayed
    coverage and calibration factor when it exports them;
  - workloads not scored (admitted before any estimate, deleted while
    pending);
  - one verdict line per row.

Input, exactly one of:

  -f, --file FILE     a Prometheus text exposition ("-" for stdin): everything
                      since the manager started. Twice (the older first): the
                      window between two scrapes of one process. A Kueue
                      performance runner's metricsDump.tgz (a gzip'd tar of
                      scrapes): the window between its first and last scrape,
                      ordered by entry name.
  --url URL           GET a /metrics endpoint (text format), with
                      --token-file (bearer token) and --insecure-skip-tls-verify.
  --service NS/NAME:PORT
                      GET --path through the API server's service proxy, as
                      kubectl get --raw /api/v1/namespaces/NS/services/https:NAME:PORT/proxy/metrics
                      would, with --kubeconfig (default: $KUBECONFIG,
                      ~/.kube/config, in-cluster). NS/http:NAME:PORT for plain HTTP.

With --url or --service, --interval D scrapes twice D apart and scores the
window (it waits D). A window subtracts the older scrape from the newer; a
counter or histogram that went down, or a changed process_start_time_seconds,
means the scrapes come from different processes (a restart, another replica
behind the Service), which is an error.

Output: a table (default; ClusterQueues by name, each followed by its
priorities, "(all)" last, then the verdicts in the same order) or -o json,
one object:

  window: {scrapes, sources, seconds}
  clusterQueues: [row...]   by name
  pooled: row               all ClusterQueues
  row: clusterQueue, priority (both omitted when empty), scored,
       predictors: {forecast|ema|paper|whitt: {n, unanswered, mae,
                    medianAbsErrorApprox}},
       forecastMAERatio: {ema, paper, whitt},
       p50, p90: {predictions, hits, coverage, ci95, recentCoverage,
                  calibrationFactor},
       admittedBeforeEstimate, deletedBeforeAdmission,
       effectiveServers, utilizationEstimate, unfeasiblePending,
       verdict, priorities: [row...] (omitted without a priority label)

Times are in seconds; a figure that does not exist is null.

Exit status: 0 when a report was printed; 2 for invalid input, with one line
on stderr: a file that is not Prometheus text, a URL answering 4xx, no wait
time estimation metrics (the gate is off), scrapes of different processes, a
window in which no workload was scored, an unreadable metrics dump; 1 when
the endpoint cannot be reached or answers 5xx.`

const example = `  # The manager's metrics through the API server (needs get on services/proxy).
  kueue-waittime score --service kueue-system/kueue-controller-manager-metrics-service:8443

  # The last hour, from two saved scrapes of one manager process.
  kubectl get --raw /api/v1/namespaces/kueue-system/services/https:kueue-controller-manager-metrics-service:8443/proxy/metrics > before.txt
  sleep 3600
  kubectl get --raw /api/v1/namespaces/kueue-system/services/https:kueue-controller-manager-metrics-service:8443/proxy/metrics > after.txt
  kueue-waittime score -f before.txt -f after.txt

  # A port-forwarded manager, a 10-minute window, as JSON.
  kueue-waittime score --url https://localhost:8443/metrics --insecure-skip-tls-verify \
      --token-file token.txt --interval 10m -o json

  # A Kueue performance runner's scrapes.
  kueue-waittime score -f metricsDump.tgz`

// flags holds the raw flag values.
type flags struct {
	files      []string
	url        string
	insecure   bool
	tokenFile  string
	kubeconfig string
	service    string
	path       string
	interval   string
	output     string
}

// NewCommand returns `kueue-waittime score`.
func NewCommand() *cobra.Command {
	var f flags
	cmd := &cobra.Command{
		Use:     "score (-f FILE [-f FILE] | --url URL | --service NAMESPACE/NAME:PORT) [--interval DURATION]",
		Short:   "Accuracy of a running manager's wait time estimates, from its metrics",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			r, format, err := f.run(ctx, cmd)
			if err != nil {
				return err
			}
			if format == cli.FormatJSON {
				return cli.WriteJSON(cmd.OutOrStdout(), r)
			}
			return writeTable(cmd.OutOrStdout(), r)
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringArrayVarP(&f.files, "file", "f", nil, "Prometheus text exposition `FILE` (- for stdin); twice, the older first, for a window; or a metricsDump.tgz")
	fs.StringVar(&f.url, "url", "", "GET the metrics from `URL` (http or https)")
	fs.BoolVar(&f.insecure, "insecure-skip-tls-verify", false, "with --url: do not verify the server's certificate")
	fs.StringVar(&f.tokenFile, "token-file", "", "with --url: send the bearer token in `FILE`")
	fs.StringVar(&f.service, "service", "", "GET the metrics through the API server's service proxy from `NAMESPACE/NAME:PORT` (https; NAMESPACE/http:NAME:PORT for http)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "with --service: the kubeconfig `FILE` (default: $KUBECONFIG, ~/.kube/config, in-cluster)")
	fs.StringVar(&f.path, "path", "/metrics", "with --service: the metrics `PATH` on the service")
	fs.StringVar(&f.interval, "interval", "", "with --url or --service: scrape twice `DURATION` apart and score the window")
	cli.AddOutputFlag(cmd, &f.output)
	return cmd
}

// run validates the flags, reads the input and builds the report.
func (f *flags) run(ctx context.Context, cmd *cobra.Command) (Report, cli.Format, error) {
	format, err := cli.ParseFormat(f.output)
	if err != nil {
		return Report{}, "", err
	}
	in, err := f.read(ctx, cmd)
	if err != nil {
		return Report{}, "", err
	}
	r, err := score(in)
	return r, format, err
}

// read validates the source flags and reads the scrapes, in a fixed order
// so that the first problem is the one reported.
func (f *flags) read(ctx context.Context, cmd *cobra.Command) (*input, error) {
	set := cmd.Flags().Changed
	sources := 0
	for _, name := range []string{"file", "url", "service"} {
		if set(name) {
			sources++
		}
	}
	switch {
	case sources == 0:
		return nil, cli.Usagef("one of --file, --url or --service is required")
	case sources > 1:
		return nil, cli.Usagef("--file, --url and --service exclude each other: give one source")
	case !set("url") && (set("insecure-skip-tls-verify") || set("token-file")):
		return nil, cli.Usagef("--insecure-skip-tls-verify and --token-file need --url")
	case !set("service") && (set("kubeconfig") || set("path")):
		return nil, cli.Usagef("--kubeconfig and --path need --service")
	case set("file") && set("interval"):
		return nil, cli.Usagef("--interval needs --url or --service: give two files for a window")
	}
	var interval time.Duration
	if set("interval") {
		seconds, err := cli.PositiveDuration(f.interval)
		if err != nil {
			return nil, cli.FlagError("interval", "%v", err)
		}
		interval = time.Duration(seconds * float64(time.Second))
	}

	switch {
	case set("file"):
		return readFiles(f.files, cmd.InOrStdin())
	case set("url"):
		u, err := url.Parse(strings.TrimSpace(f.url))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, cli.FlagError("url", "want an http or https URL such as https://localhost:8443/metrics, got %q", f.url)
		}
		token := ""
		if set("token-file") {
			raw, err := os.ReadFile(f.tokenFile)
			if err != nil {
				return nil, cli.FlagError("token-file", "%v", err)
			}
			if token = strings.TrimSpace(string(raw)); token == "" {
				return nil, cli.FlagError("token-file", "%s is empty", f.tokenFile)
			}
		}
		return readLive(ctx, u.String(), httpFetcher(u.String(), f.insecure, token), interval)
	}
	target, err := parseService(f.service)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(f.path, "/") {
		return nil, cli.FlagError("path", "must start with /, got %q", f.path)
	}
	fetch, err := serviceFetcher(f.kubeconfig, target, f.path)
	if err != nil {
		return nil, err
	}
	return readLive(ctx, "service "+f.service, fetch, interval)
}

// score builds the report of an input, or says why there is none.
func score(in *input) (Report, error) {
	if !in.last.hasEstimator() {
		return Report{}, cli.Usagef("no wait time estimation metrics in %s: is the WaitTimeEstimation feature gate on?", in.last.source)
	}
	w, err := in.window()
	if err != nil {
		return Report{}, err
	}
	win := Window{Scrapes: 1, Sources: []string{in.last.source}}
	if in.first != nil {
		win = Window{Scrapes: 2, Sources: []string{in.first.source, in.last.source}}
		if !in.first.at.IsZero() && !in.last.at.IsZero() {
			win.Seconds = cli.Float(in.last.at.Sub(in.first.at).Seconds())
		}
	}
	r := buildReport(win, w)
	if r.Pooled.Scored == 0 {
		if in.first == nil {
			return Report{}, cli.Usagef("no workload was scored since the manager started")
		}
		return Report{}, cli.Usagef("no workload was scored in the window")
	}
	return r, nil
}
