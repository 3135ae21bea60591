package monitoring

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"

	"sigs.k8s.io/kueue/pkg/features"
	kueuemetrics "sigs.k8s.io/kueue/pkg/metrics"
)

const (
	dashboardFile  = "../../config/monitoring/dashboard.json"
	alertsFile     = "../../config/monitoring/alerts.yaml"
	alertTestsFile = "../../config/monitoring/alerts_test.yaml"
)

// tool returns the path of a binary named by an environment variable.
func tool(t *testing.T, env string) string {
	t.Helper()
	path := os.Getenv(env)
	if path == "" {
		t.Fatalf("%s is not set: run these tests through `make test-monitoring`", env)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s: %v", env, err)
	}
	return path
}

// expression is one line of promqlcheck's output.
type expression struct {
	File    string   `json:"file"`
	Where   string   `json:"where"`
	Expr    string   `json:"expr"`
	Metrics []string `json:"metrics"`
}

// parseExpressions runs promqlcheck, which parses every expression of the
// files with Prometheus's parser, and returns them.
func parseExpressions(t *testing.T, files ...string) []expression {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(tool(t, "PROMQLCHECK"), files...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("promqlcheck %v: %v\n%s", files, err, stderr.String())
	}
	var out []expression
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e expression
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("promqlcheck output %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

// recordingRegistry stands in for controller-runtime's registry while
// Kueue's metrics register, and records the series names each collector
// exposes: a histogram's _bucket, _sum and _count, a summary's _sum and
// _count beside its own name.
type recordingRegistry struct {
	prometheus.Gatherer
	mu    sync.Mutex
	names map[string]bool
}

func (r *recordingRegistry) Register(c prometheus.Collector) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	suffixes := []string{""}
	switch c.(type) {
	case *prometheus.HistogramVec, prometheus.Histogram:
		suffixes = []string{"_bucket", "_sum", "_count"}
	case *prometheus.SummaryVec, prometheus.Summary:
		suffixes = []string{"", "_sum", "_count"}
	}
	descs := make(chan *prometheus.Desc, 16)
	go func() {
		c.Describe(descs)
		close(descs)
	}()
	for d := range descs {
		name := fqName(d)
		for _, s := range suffixes {
			r.names[name+s] = true
		}
	}
	return nil
}

func (r *recordingRegistry) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = r.Register(c)
	}
}

func (r *recordingRegistry) Unregister(prometheus.Collector) bool { return false }

var fqNameInDesc = regexp.MustCompile(`fqName: "([^"]+)"`)

// fqName reads a descriptor's metric name: prometheus.Desc keeps it
// unexported and prints it in String.
func fqName(d *prometheus.Desc) string {
	m := fqNameInDesc.FindStringSubmatch(d.String())
	if m == nil {
		return ""
	}
	return m[1]
}

// registeredSeries returns every series name the patched manager's metrics
// package registers with the WaitTimeEstimation gate (and Kueue's optional
// LocalQueue metrics) on.
func registeredSeries(t *testing.T) map[string]bool {
	t.Helper()
	features.SetFeatureGateDuringTest(t, features.WaitTimeEstimation, true)
	features.SetFeatureGateDuringTest(t, features.LocalQueueMetrics, true)
	rec := &recordingRegistry{Gatherer: prometheus.NewRegistry(), names: make(map[string]bool)}
	saved := ctrlmetrics.Registry
	ctrlmetrics.Registry = rec
	t.Cleanup(func() { ctrlmetrics.Registry = saved })
	kueuemetrics.Register()
	if !rec.names["kueue_pending_workloads"] || !rec.names["kueue_wait_time_quantile_coverage"] {
		t.Fatalf("the registration recorded %d names, without Kueue's own or the estimator's: the recording registry missed them", len(rec.names))
	}
	return rec.names
}

func TestExpressionsParseAndNameOnlyRegisteredSeries(t *testing.T) {
	registered := registeredSeries(t)
	exprs := parseExpressions(t, dashboardFile, alertsFile)
	perFile := map[string]int{}
	for _, e := range exprs {
		perFile[filepath.Base(e.File)]++
		if len(e.Metrics) == 0 {
			t.Errorf("%s: %s selects no metric by name: %q", e.File, e.Where, e.Expr)
		}
		for _, m := range e.Metrics {
			if !registered[m] {
				t.Errorf("%s: %s names %s, which the manager does not register", e.File, e.Where, m)
			}
		}
	}
	// The alerts file holds five rules; the dashboard more than twenty
	// queries. Fewer means promqlcheck missed some.
	if perFile["alerts.yaml"] < 5 || perFile["dashboard.json"] < 20 {
		t.Errorf("expressions found per file = %v, want ≥ 5 in alerts.yaml and ≥ 20 in dashboard.json", perFile)
	}
}

// The figures an operator reads on the dashboard, by the series behind them.
func TestDashboardShowsWhatAnOperatorNeeds(t *testing.T) {
	want := map[string]string{
		"pending workloads":                    "kueue_pending_workloads",
		"effective servers k_eff":              "kueue_cluster_queue_effective_servers",
		"utilization ρ":                        "kueue_cluster_queue_utilization_estimate",
		"a-priori wait":                        "kueue_cluster_queue_apriori_wait_time_seconds",
		"realized P50/P90 coverage":            "kueue_wait_time_quantile_predictions_total",
		"the manager's decayed coverage":       "kueue_wait_time_quantile_coverage",
		"MAE per predictor (sum)":              "kueue_wait_time_prediction_absolute_error_seconds_sum",
		"MAE per predictor (count)":            "kueue_wait_time_prediction_absolute_error_seconds_count",
		"Unfeasible workloads":                 "kueue_unfeasible_pending_workloads",
		"refresh duration":                     "kueue_wait_time_refresh_duration_seconds_bucket",
		"age of the published estimates":       "kueue_wait_time_estimates_published_timestamp_seconds",
		"workloads the ledger could not score": "kueue_wait_time_unscored_workloads_total",
	}
	shown := map[string]bool{}
	predictors := map[string]bool{}
	predictorLabel := regexp.MustCompile(`predictor="([a-z]+)"`)
	for _, e := range parseExpressions(t, dashboardFile) {
		for _, m := range e.Metrics {
			shown[m] = true
		}
		if slices.Contains(e.Metrics, "kueue_wait_time_prediction_absolute_error_seconds_sum") {
			for _, m := range predictorLabel.FindAllStringSubmatch(e.Expr, -1) {
				predictors[m[1]] = true
			}
		}
	}
	for figure, series := range want {
		if !shown[series] {
			t.Errorf("the dashboard does not show %s (%s)", figure, series)
		}
	}
	for _, p := range []string{"forecast", "ema", "paper", "whitt"} {
		if !predictors[p] {
			t.Errorf("the dashboard shows no MAE of predictor %q", p)
		}
	}
}

func TestAlertRulesPassPromtool(t *testing.T) {
	promtool := tool(t, "PROMTOOL")
	for _, args := range [][]string{
		{"check", "rules", alertsFile},
		{"test", "rules", alertTestsFile},
	} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if !strings.Contains(string(out), "SUCCESS") {
			t.Errorf("promtool %s did not report SUCCESS:\n%s", strings.Join(args, " "), out)
		}
	}
}

// Every alert is tested firing at least once and silent at least once.
func TestEveryAlertIsTestedFiringAndSilent(t *testing.T) {
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `json:"alert"`
			} `json:"rules"`
		} `json:"groups"`
	}
	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string            `json:"alertname"`
				ExpAlerts []json.RawMessage `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	for file, into := range map[string]any{alertsFile: &rules, alertTestsFile: &tests} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(data, into); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	firing, silent := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				firing[a.Alertname] = true
			} else {
				silent[a.Alertname] = true
			}
		}
	}
	var alerts []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				alerts = append(alerts, r.Alert)
			}
		}
	}
	sort.Strings(alerts)
	if len(alerts) < 5 {
		t.Fatalf("alerts.yaml holds %d alerts (%v), want 5", len(alerts), alerts)
	}
	for _, a := range alerts {
		if !firing[a] {
			t.Errorf("alert %s has no test case in which it fires", a)
		}
		if !silent[a] {
			t.Errorf("alert %s has no test case in which it stays silent", a)
		}
	}
}
