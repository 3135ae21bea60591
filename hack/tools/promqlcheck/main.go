// Command promqlcheck parses every PromQL expression of Prometheus rule
// files and Grafana dashboards with Prometheus's own parser, and prints,
// one JSON object per line, where each expression is and the metric names
// it selects. It exits 1 if any expression does not parse.
//
// Usage: promqlcheck FILE...
//
// A file ending in .json is a Grafana dashboard: the "expr" of every panel
// target (rows' panels included) and the query of every templating
// variable, whose label_values(SELECTOR, LABEL) and query_result(EXPR)
// forms are unwrapped to their PromQL. Grafana's interval variables
// ($__rate_interval, $__interval, $__range, with or without braces) are
// replaced by 5m, and custom, interval and constant variables by their
// current value, before parsing, as Grafana interpolates them; query
// variables may appear only inside label matcher strings. Any other file is
// a Prometheus rule file, parsed with Prometheus's rulefmt, which also
// checks its structure.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

// expression is one PromQL expression found in a file.
type expression struct {
	File    string   `json:"file"`
	Where   string   `json:"where"`
	Expr    string   `json:"expr"`
	Metrics []string `json:"metrics"`
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: promqlcheck FILE...")
		os.Exit(2)
	}
	p := parser.NewParser(parser.Options{})
	failed := false
	out := json.NewEncoder(os.Stdout)
	for _, file := range os.Args[1:] {
		exprs, err := check(p, file)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			failed = true
		}
		for _, e := range exprs {
			if err := out.Encode(e); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
	}
	if failed {
		os.Exit(1)
	}
}

// check returns the expressions of one file with their metric names, and
// every parse error in it.
func check(p parser.Parser, file string) ([]expression, error) {
	var found []expression
	var errs []error
	add := func(where, expr string) {
		names, err := metricNames(p, expr)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %q: %w", file, where, expr, err))
			return
		}
		found = append(found, expression{File: file, Where: where, Expr: expr, Metrics: names})
	}
	if strings.HasSuffix(file, ".json") {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		if err := dashboardExpressions(data, add); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		return found, errors.Join(errs...)
	}
	groups, ruleErrs := rulefmt.ParseFile(file, false, model.UTF8Validation, p, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if len(ruleErrs) > 0 {
		for _, err := range ruleErrs {
			errs = append(errs, fmt.Errorf("%s: %w", file, err))
		}
		return nil, errors.Join(errs...)
	}
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			name := r.Alert
			if name == "" {
				name = r.Record
			}
			add("group "+g.Name+" rule "+name, r.Expr)
		}
	}
	return found, errors.Join(errs...)
}

// grafanaIntervals are the interval variables Grafana interpolates.
var grafanaIntervals = regexp.MustCompile(`\$\{?__(rate_interval|interval|range)\}?`)

// metricNames parses expr and returns the metric names its selectors name,
// sorted and without duplicates.
func metricNames(p parser.Parser, expr string) ([]string, error) {
	ast, err := p.ParseExpr(grafanaIntervals.ReplaceAllString(expr, "5m"))
	if err != nil {
		return nil, err
	}
	var names []string
	parser.Inspect(ast, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		for _, m := range vs.LabelMatchers {
			if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
				names = append(names, m.Value)
			}
		}
		return nil
	})
	slices.Sort(names)
	return slices.Compact(names), nil
}

// dashboardExpressions calls add for every PromQL expression of a Grafana
// dashboard.
func dashboardExpressions(data []byte, add func(where, expr string)) error {
	var d struct {
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Name    string          `json:"name"`
				Type    string          `json:"type"`
				Query   json.RawMessage `json:"query"`
				Current struct {
					Value json.RawMessage `json:"value"`
				} `json:"current"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return fmt.Errorf("not a Grafana dashboard: %w", err)
	}
	// Values Grafana substitutes for $name and ${name}.
	var replacements []string
	for _, v := range d.Templating.List {
		switch v.Type {
		case "custom", "interval", "constant":
			var value string
			if err := json.Unmarshal(v.Current.Value, &value); err != nil || value == "" {
				return fmt.Errorf("variable %s: no current value to substitute", v.Name)
			}
			replacements = append(replacements, "${"+v.Name+"}", value, "$"+v.Name, value)
		}
	}
	interpolate := strings.NewReplacer(replacements...)
	var walk func(panels []panel)
	walk = func(panels []panel) {
		for _, pn := range panels {
			for i, t := range pn.Targets {
				if t.Expr != "" {
					add("panel "+strconv.Quote(pn.Title)+" target "+strconv.Itoa(i), interpolate.Replace(t.Expr))
				}
			}
			walk(pn.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		query, err := variableQuery(v.Query)
		if err != nil {
			return fmt.Errorf("variable %s: %w", v.Name, err)
		}
		if expr, ok := unwrapVariableQuery(query); ok {
			add("variable "+v.Name, expr)
		}
	}
	return nil
}

type panel struct {
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

// variableQuery reads a templating variable's query: a string, or an
// object with a "query" string (Grafana 9 and later).
func variableQuery(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var o struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return "", fmt.Errorf("query is neither a string nor an object with a query: %w", err)
	}
	return o.Query, nil
}

// unwrapVariableQuery returns the PromQL inside a Grafana Prometheus
// variable query: the selector of label_values(SELECTOR, LABEL), the
// expression of query_result(EXPR); label_values(LABEL) and
// label_names() have none.
func unwrapVariableQuery(q string) (string, bool) {
	q = strings.TrimSpace(q)
	switch {
	case strings.HasPrefix(q, "label_values(") && strings.HasSuffix(q, ")"):
		inner := q[len("label_values(") : len(q)-1]
		i := strings.LastIndex(inner, ",")
		if i < 0 {
			return "", false
		}
		return strings.TrimSpace(inner[:i]), true
	case strings.HasPrefix(q, "query_result(") && strings.HasSuffix(q, ")"):
		return q[len("query_result(") : len(q)-1], true
	case q == "" || strings.HasPrefix(q, "label_names("):
		return "", false
	}
	return q, true
}
