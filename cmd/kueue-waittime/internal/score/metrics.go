package score

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
)

// The metric families the score is read from, as the patched Kueue manager
// exports them (pkg/metrics/waittime.go of the patch set).
const (
	familyAbsoluteError = "kueue_wait_time_prediction_absolute_error_seconds"
	familyUnanswered    = "kueue_wait_time_predictions_unanswered_total"
	familyQuantile      = "kueue_wait_time_quantile_predictions_total"
	familyCoverage      = "kueue_wait_time_quantile_coverage"
	familyAdjustment    = "kueue_wait_time_quantile_adjustment"
	familyUnscored      = "kueue_wait_time_unscored_workloads_total"
	familyServers       = "kueue_cluster_queue_effective_servers"
	familyUtilization   = "kueue_cluster_queue_utilization_estimate"
	familyAPrioriWait   = "kueue_cluster_queue_apriori_wait_time_seconds"
	familyUnfeasible    = "kueue_unfeasible_pending_workloads"

	// familyProcessStart is the standard process collector's start time:
	// two scrapes with different values come from different processes.
	familyProcessStart = "process_start_time_seconds"
)

// Label names and values.
const (
	labelClusterQueue = "cluster_queue"
	labelPredictor    = "predictor"
	labelQuantile     = "quantile"
	labelResult       = "result"
	labelReason       = "reason"

	predictorForecast = "forecast"

	resultHit  = "hit"
	resultMiss = "miss"

	reasonAdmittedBeforeEstimate = "AdmittedBeforeEstimate"
	reasonDeletedBeforeAdmission = "DeletedBeforeAdmission"
)

// priorityLabels are the label names that split a ClusterQueue's rows by
// priority, the first present winning. No metric carries one today; when a
// future manager adds one, rows per priority appear without a change here.
var priorityLabels = []string{"priority", "priority_class"}

// kind is how a family is read.
type kind int

const (
	kindCounter kind = iota
	kindGauge
	kindHistogram
)

// families maps every family read to its kind.
var families = map[string]kind{
	familyAbsoluteError: kindHistogram,
	familyUnanswered:    kindCounter,
	familyQuantile:      kindCounter,
	familyUnscored:      kindCounter,
	familyCoverage:      kindGauge,
	familyAdjustment:    kindGauge,
	familyServers:       kindGauge,
	familyUtilization:   kindGauge,
	familyAPrioriWait:   kindGauge,
	familyUnfeasible:    kindGauge,
}

// series is one time series of a family: a counter's or gauge's value, or
// a histogram's buckets.
type series struct {
	family string
	labels map[string]string
	// value is a counter's or gauge's value; for a histogram, its count.
	value float64
	// sum, bounds and cumulative are a histogram's sum, bucket upper
	// bounds (the last +Inf) and cumulative bucket counts.
	sum        float64
	bounds     []float64
	cumulative []float64
}

// scrape is what one exposition holds of the families read.
type scrape struct {
	source string
	// at is when it was taken; zero when unknown (a file).
	at time.Time
	// series by key (see seriesKey).
	series map[string]*series
	// processStart is process_start_time_seconds, nil when absent.
	processStart *float64
}

// hasEstimator tells whether the scrape holds any wait time estimation
// series at all.
func (s *scrape) hasEstimator() bool {
	return len(s.series) > 0
}

// parseScrape reads one Prometheus text exposition.
func parseScrape(source string, r io.Reader) (*scrape, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, cli.Usagef("%s: not Prometheus text exposition format (%v)", source, err)
	}
	return extract(source, mfs)
}

// extract keeps the series of the families read.
func extract(source string, mfs map[string]*dto.MetricFamily) (*scrape, error) {
	s := &scrape{source: source, series: map[string]*series{}}
	if mf, ok := mfs[familyProcessStart]; ok && len(mf.GetMetric()) == 1 {
		if v, ok := scalar(mf.GetType(), mf.GetMetric()[0]); ok {
			s.processStart = &v
		}
	}
	for name, want := range families {
		mf, ok := mfs[name]
		if !ok {
			continue
		}
		typ := mf.GetType()
		if ok := typ == dto.MetricType_UNTYPED && want != kindHistogram ||
			want == kindCounter && typ == dto.MetricType_COUNTER ||
			want == kindGauge && typ == dto.MetricType_GAUGE ||
			want == kindHistogram && typ == dto.MetricType_HISTOGRAM; !ok {
			return nil, cli.Usagef("%s: %s is a %s, not the %s the manager exports", source, name, strings.ToLower(typ.String()), kindName(want))
		}
		for _, m := range mf.GetMetric() {
			sr := &series{family: name, labels: map[string]string{}}
			for _, lp := range m.GetLabel() {
				sr.labels[lp.GetName()] = lp.GetValue()
			}
			if want == kindHistogram {
				h := m.GetHistogram()
				sr.value = float64(h.GetSampleCount())
				if h.SampleCountFloat != nil {
					sr.value = h.GetSampleCountFloat()
				}
				sr.sum = h.GetSampleSum()
				for _, b := range h.GetBucket() {
					c := float64(b.GetCumulativeCount())
					if b.CumulativeCountFloat != nil {
						c = b.GetCumulativeCountFloat()
					}
					sr.bounds = append(sr.bounds, b.GetUpperBound())
					sr.cumulative = append(sr.cumulative, c)
				}
				if n := len(sr.bounds); n == 0 || !math.IsInf(sr.bounds[n-1], 1) {
					sr.bounds = append(sr.bounds, math.Inf(1))
					sr.cumulative = append(sr.cumulative, sr.value)
				}
			} else {
				sr.value, _ = scalar(typ, m)
			}
			s.series[seriesKey(name, sr.labels)] = sr
		}
	}
	return s, nil
}

func kindName(k kind) string {
	switch k {
	case kindCounter:
		return "counter"
	case kindGauge:
		return "gauge"
	}
	return "histogram"
}

// scalar is the value of a counter, gauge or untyped metric.
func scalar(typ dto.MetricType, m *dto.Metric) (float64, bool) {
	switch typ {
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue(), true
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue(), true
	case dto.MetricType_UNTYPED:
		return m.GetUntyped().GetValue(), true
	}
	return 0, false
}

// seriesKey names a series the way the exposition format does, labels
// sorted: family{a="x",b="y"}. It is the key of scrape.series and the
// series named in errors.
func seriesKey(family string, labels map[string]string) string {
	var b strings.Builder
	b.WriteString(family)
	b.WriteByte('{')
	for i, name := range slices.Sorted(maps.Keys(labels)) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(strconv.Quote(labels[name]))
	}
	b.WriteByte('}')
	return b.String()
}

// processChange says that two scrapes cannot be subtracted: they come from
// different processes, or (reversed) the later one was given first.
type processChange struct {
	// what went wrong, for the message: "counter reset on …" or
	// "process_start_time_seconds …".
	what string
	// reversed: every series that changed went down, as when the newer
	// scrape is given first.
	reversed bool
}

// difference returns the window between two scrapes of one process: for
// each counter and histogram series of last, its value less the one in
// first (a series new since first counts from 0; one gone since first, a
// deleted ClusterQueue's, is dropped), and the gauges of last. A series
// that went down, or a changed process start time, means the scrapes come
// from different processes (or are in the wrong order): the result is then
// nil and the change says why.
func difference(first, last *scrape) (*scrape, *processChange) {
	if first.processStart != nil && last.processStart != nil && *first.processStart != *last.processStart {
		return nil, &processChange{what: fmt.Sprintf("%s %s, then %s", familyProcessStart,
			strconv.FormatFloat(*first.processStart, 'f', -1, 64), strconv.FormatFloat(*last.processStart, 'f', -1, 64))}
	}
	out := &scrape{source: last.source, at: last.at, series: map[string]*series{}, processStart: last.processStart}
	var down []string
	up := false
	for _, key := range slices.Sorted(maps.Keys(last.series)) {
		l := last.series[key]
		f, ok := first.series[key]
		if families[l.family] == kindGauge || !ok {
			out.series[key] = l
			continue
		}
		if families[l.family] == kindHistogram && !slices.Equal(l.bounds, f.bounds) {
			// One process does not change its buckets.
			return nil, &processChange{what: "other buckets on " + key}
		}
		d := *l
		d.value = l.value - f.value
		d.sum = l.sum - f.sum
		reset := ""
		if d.value < 0 {
			reset = countKey(l, key)
		}
		if families[l.family] == kindHistogram {
			d.cumulative = make([]float64, len(l.cumulative))
			for i := range l.cumulative {
				d.cumulative[i] = l.cumulative[i] - f.cumulative[i]
				if d.cumulative[i] < 0 && reset == "" {
					reset = bucketKey(l, i)
				}
			}
		}
		switch {
		case reset != "":
			down = append(down, reset)
		case d.value > 0:
			up = true
		}
		out.series[key] = &d
	}
	if len(down) > 0 {
		// When nothing went up, the newer scrape was probably given first.
		return nil, &processChange{what: "counter reset on " + down[0], reversed: !up}
	}
	return out, nil
}

// countKey names the count of a histogram series, or the series itself.
func countKey(s *series, key string) string {
	if families[s.family] != kindHistogram {
		return key
	}
	return seriesKey(s.family+"_count", s.labels)
}

// bucketKey names bucket i of a histogram series.
func bucketKey(s *series, i int) string {
	labels := maps.Clone(s.labels)
	labels["le"] = strconv.FormatFloat(s.bounds[i], 'g', -1, 64)
	return seriesKey(s.family+"_bucket", labels)
}
