package score

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
)

// manager is one manager process's wait time metrics, built with
// client_golang exactly as the patched Kueue declares them (names, labels,
// buckets), so that the parser reads real exposition output.
type manager struct {
	reg        *prometheus.Registry
	priority   bool
	errors     *prometheus.HistogramVec
	unanswered *prometheus.CounterVec
	outcomes   *prometheus.CounterVec
	unscored   *prometheus.CounterVec
	coverage   *prometheus.GaugeVec
	adjustment *prometheus.GaugeVec
	servers    *prometheus.GaugeVec
	util       *prometheus.GaugeVec
	unfeasible *prometheus.GaugeVec
	start      prometheus.Gauge
}

// kueueBuckets are Kueue's generateExponentialBuckets(16).
var kueueBuckets = append([]float64{1}, prometheus.ExponentialBuckets(2.5, 2, 15)...)

// newManager registers the metrics; withPriority adds a "priority" label to
// every series (no manager has one today: the report must handle it).
func newManager(t *testing.T, withPriority bool) *manager {
	t.Helper()
	labels := func(specific ...string) []string {
		out := append([]string{"cluster_queue"}, specific...)
		out = append(out, "replica_role")
		if withPriority {
			out = append(out, "priority")
		}
		return out
	}
	m := &manager{reg: prometheus.NewRegistry(), priority: withPriority}
	m.errors = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: familyAbsoluteError, Help: "abs error", Buckets: kueueBuckets}, labels("predictor"))
	m.unanswered = prometheus.NewCounterVec(prometheus.CounterOpts{Name: familyUnanswered, Help: "unanswered"}, labels("predictor"))
	m.outcomes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: familyQuantile, Help: "outcomes"}, labels("quantile", "result"))
	m.unscored = prometheus.NewCounterVec(prometheus.CounterOpts{Name: familyUnscored, Help: "unscored"}, labels("reason"))
	m.coverage = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: familyCoverage, Help: "coverage"}, labels("quantile"))
	m.adjustment = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: familyAdjustment, Help: "adjustment"}, labels("quantile"))
	m.servers = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: familyServers, Help: "k_eff"}, labels())
	m.util = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: familyUtilization, Help: "rho"}, labels())
	m.unfeasible = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: familyUnfeasible, Help: "unfeasible"}, labels())
	m.reg.MustRegister(m.errors, m.unanswered, m.outcomes, m.unscored, m.coverage, m.adjustment, m.servers, m.util, m.unfeasible)
	return m
}

// q names a ClusterQueue, and its priority when the manager has the label.
type q struct{ cq, priority string }

func (m *manager) values(at q, specific ...string) []string {
	out := append([]string{at.cq}, specific...)
	out = append(out, "standalone")
	if m.priority {
		out = append(out, at.priority)
	}
	return out
}

func (m *manager) observe(at q, predictor string, absErrors ...float64) *manager {
	for _, v := range absErrors {
		m.errors.WithLabelValues(m.values(at, predictor)...).Observe(v)
	}
	return m
}

func (m *manager) noAnswer(at q, predictor string, n int) *manager {
	m.unanswered.WithLabelValues(m.values(at, predictor)...).Add(float64(n))
	return m
}

func (m *manager) outcome(at q, quantile string, hits, misses int) *manager {
	m.outcomes.WithLabelValues(m.values(at, quantile, "hit")...).Add(float64(hits))
	m.outcomes.WithLabelValues(m.values(at, quantile, "miss")...).Add(float64(misses))
	return m
}

func (m *manager) unscoredWorkloads(at q, reason string, n int) *manager {
	m.unscored.WithLabelValues(m.values(at, reason)...).Add(float64(n))
	return m
}

func (m *manager) calibration(at q, quantile string, recentCoverage, factor float64) *manager {
	m.coverage.WithLabelValues(m.values(at, quantile)...).Set(recentCoverage)
	m.adjustment.WithLabelValues(m.values(at, quantile)...).Set(factor)
	return m
}

func (m *manager) model(at q, servers, utilization float64, unfeasible int) *manager {
	m.servers.WithLabelValues(m.values(at)...).Set(servers)
	m.util.WithLabelValues(m.values(at)...).Set(utilization)
	m.unfeasible.WithLabelValues(m.values(at)...).Set(float64(unfeasible))
	return m
}

// startedAt exports process_start_time_seconds.
func (m *manager) startedAt(unix float64) *manager {
	if m.start == nil {
		m.start = prometheus.NewGauge(prometheus.GaugeOpts{Name: familyProcessStart, Help: "start"})
		m.reg.MustRegister(m.start)
	}
	m.start.Set(unix)
	return m
}

// deleteQueue removes a ClusterQueue's ledger series, as the manager does
// when the ClusterQueue is deleted.
func (m *manager) deleteQueue(cq string) *manager {
	match := prometheus.Labels{"cluster_queue": cq}
	m.errors.DeletePartialMatch(match)
	m.unanswered.DeletePartialMatch(match)
	m.outcomes.DeletePartialMatch(match)
	m.unscored.DeletePartialMatch(match)
	return m
}

// text gathers the registry and encodes it in the text exposition format,
// as the manager's /metrics does.
func (m *manager) text(t *testing.T) string {
	t.Helper()
	return gatherText(t, m.reg)
}

func gatherText(t *testing.T, g prometheus.Gatherer) string {
	t.Helper()
	text, err := encodeText(g)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// encodeText gathers g and encodes it as the text exposition format.
func encodeText(g prometheus.Gatherer) (string, error) {
	mfs, err := g.Gather()
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return "", err
		}
	}
	return buf.String(), nil
}

// writeFile writes content to name in dir and returns the path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// dumpEntry is one file of a test metrics dump.
type tarEntry struct {
	name    string
	content string
	modTime time.Time
}

// writeDump writes a gzip'd tar of entries in the given order, as the
// performance runner's scraper does.
func writeDump(t *testing.T, dir, name string, entries ...tarEntry) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Size: int64(len(e.content)), Mode: 0o666, ModTime: e.modTime}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return writeFile(t, dir, name, buf.String())
}

// result is what one run of the command gave.
type result struct {
	code           int
	stdout, stderr string
}

// run executes `kueue-waittime score args...` in process, as main does.
func run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	root := cli.NewRoot("kueue-waittime", "short", "long")
	root.AddCommand(NewCommand())
	var stdout, stderr bytes.Buffer
	code := cli.Execute(root, append([]string{"score"}, args...), strings.NewReader(stdin), &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

func fp(v float64) *float64 { return &v }

func ip(v int) *int { return &v }
