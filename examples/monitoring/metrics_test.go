package monitoring

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
)

// targetLabels are the labels Prometheus gives every series of a target
// (job, instance) and those a ServiceMonitor's target adds; a scrape does
// not show them.
var targetLabels = map[string]bool{"job": true, "instance": true, "namespace": true, "pod": true, "service": true, "endpoint": true, "container": true}

// query is one PromQL expression of the rules or the dashboard.
type query struct {
	where string // "alert X", "panel Y", ...
	expr  string
}

// ruleQueries returns the expressions of rules.yaml and the names of its
// recording rules.
func ruleQueries(t *testing.T) ([]query, map[string]bool) {
	t.Helper()
	var qs []query
	recorded := map[string]bool{}
	for _, g := range loadRules(t).Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				recorded[r.Record] = true
				qs = append(qs, query{"recording rule " + r.Record, r.Expr})
			} else {
				qs = append(qs, query{"alert " + r.Alert, r.Expr})
			}
		}
	}
	return qs, recorded
}

// grafanaVariables are the dashboard's interval variables, which are not
// PromQL; the test puts a duration in their place.
var grafanaVariables = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h")

// labelValues matches a Grafana "label_values(metric, label)" query.
var labelValues = regexp.MustCompile(`^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)$`)

// dashboard is the part of dashboard.json the test reads.
type dashboard struct {
	UID        string `json:"uid"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID         int    `json:"id"`
		Title      string `json:"title"`
		Datasource struct {
			UID string `json:"uid"`
		} `json:"datasource"`
		GridPos struct {
			H, W, X, Y int
		} `json:"gridPos"`
		Targets []struct {
			Expr  string `json:"expr"`
			RefID string `json:"refId"`
		} `json:"targets"`
	} `json:"panels"`
}

// loadDashboard decodes dashboard.json strictly enough to notice a
// renamed field: every panel has an id, a title, a target and the
// dashboard's data source variable.
func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	raw, err := os.ReadFile("dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	if d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("dashboard.json: uid %q, %d panels", d.UID, len(d.Panels))
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		switch {
		case p.ID == 0 || ids[p.ID]:
			t.Errorf("panel %q: id %d is missing or repeated", p.Title, p.ID)
		case p.Title == "" || len(p.Targets) == 0:
			t.Errorf("panel %d: title %q, %d targets; want both", p.ID, p.Title, len(p.Targets))
		case p.Datasource.UID != "${datasource}":
			t.Errorf("panel %q: data source %q, want ${datasource}", p.Title, p.Datasource.UID)
		case p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X+p.GridPos.W > 24:
			t.Errorf("panel %q: gridPos %+v outside Grafana's 24 columns", p.Title, p.GridPos)
		}
		ids[p.ID] = true
	}
	return d
}

// dashboardQueries returns the PromQL of the dashboard's panels and the
// label_values queries of its variables.
func dashboardQueries(t *testing.T) (exprs []query, variables [][2]string) {
	t.Helper()
	d := loadDashboard(t)
	for _, p := range d.Panels {
		for _, target := range p.Targets {
			exprs = append(exprs, query{fmt.Sprintf("panel %q (%s)", p.Title, target.RefID), grafanaVariables.Replace(target.Expr)})
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		m := labelValues.FindStringSubmatch(v.Definition)
		if m == nil {
			t.Errorf("variable %s: %q is not label_values(metric, label)", v.Name, v.Definition)
			continue
		}
		variables = append(variables, [2]string{m[1], m[2]})
	}
	return exprs, variables
}

// scrape returns the metric families of the scrape of "volbind controller"
// that the end-to-end suite saved, at $VOLBIND_SCRAPE. Without it the
// test is skipped, except in CI ($CI set), where .ci/e2e must provide it.
func scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	path := os.Getenv("VOLBIND_SCRAPE")
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("$VOLBIND_SCRAPE is not set: in CI, .ci/e2e runs this test on the scrape the end-to-end suite saves")
		}
		t.Skip("no scrape of volbind controller: set $VOLBIND_SCRAPE (bash .ci/e2e does)")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("the scrape of volbind controller: %v", err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	// A scrape of something else would make every check below vacuous.
	for _, name := range []string{"volbind_controller_leader", "volbind_binder_syncs_total", "pv_collector_total_pv_count"} {
		if families[name] == nil {
			t.Fatalf("%s has no %s: not a scrape of volbind controller with the Kubernetes metrics", path, name)
		}
	}
	return families
}

// resolver finds the series a selector selects in the scrape.
type resolver struct {
	families map[string]*dto.MetricFamily
	recorded map[string]bool
}

// family returns the family of a series name: the family itself, or the
// histogram or summary whose _bucket, _sum or _count series it is; extra
// are the labels that series has beyond the family's (le for buckets).
func (r resolver) family(name string) (mf *dto.MetricFamily, extra []string) {
	if mf := r.families[name]; mf != nil {
		return mf, nil
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		mf := r.families[strings.TrimSuffix(name, suffix)]
		if mf == nil || !strings.HasSuffix(name, suffix) {
			continue
		}
		switch t := mf.GetType(); {
		case suffix == "_bucket" && t == dto.MetricType_HISTOGRAM:
			return mf, []string{"le"}
		case suffix != "_bucket" && (t == dto.MetricType_HISTOGRAM || t == dto.MetricType_SUMMARY):
			return mf, nil
		}
	}
	return nil, nil
}

// hasLabel reports whether label is a label of mf's series, one of extra
// or a target label.
func hasLabel(mf *dto.MetricFamily, extra []string, label string) bool {
	if targetLabels[label] || label == model.MetricNameLabel {
		return true
	}
	for _, e := range extra {
		if e == label {
			return true
		}
	}
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label {
				return true
			}
		}
	}
	return false
}

// check reports, for q, every selector whose metric is neither recorded
// nor in the scrape, every label matcher and every "by" label on a scraped
// series that has no such label, and returns the number of selectors.
func (r resolver) check(t *testing.T, q query) int {
	t.Helper()
	expr, err := promql.ParseExpr(q.expr)
	if err != nil {
		t.Errorf("%s: %q does not parse: %v", q.where, q.expr, err)
		return 0
	}
	selectors := 0
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		switch n := node.(type) {
		case *parser.VectorSelector:
			selectors++
			r.checkSelector(t, q, n)
		case *parser.AggregateExpr:
			vs := selectorOf(n.Expr)
			if vs == nil || r.recorded[vs.Name] {
				return nil
			}
			mf, extra := r.family(vs.Name)
			for _, l := range n.Grouping {
				if mf != nil && !hasLabel(mf, extra, l) {
					t.Errorf("%s: %s by (%s): %s has no label %s", q.where, n.Op, strings.Join(n.Grouping, ", "), vs.Name, l)
				}
			}
		}
		return nil
	})
	return selectors
}

// checkSelector checks one selector of q.
func (r resolver) checkSelector(t *testing.T, q query, vs *parser.VectorSelector) {
	t.Helper()
	if vs.Name == "" {
		t.Errorf("%s: selector %s names no metric", q.where, vs)
		return
	}
	if r.recorded[vs.Name] {
		return
	}
	mf, extra := r.family(vs.Name)
	if mf == nil {
		t.Errorf("%s: metric %s is not in the scrape of volbind controller (nor a recording rule)", q.where, vs.Name)
		return
	}
	for _, m := range vs.LabelMatchers {
		if m.Name != model.MetricNameLabel && !hasLabel(mf, extra, m.Name) {
			t.Errorf("%s: %s has no label %s (matcher %s)", q.where, vs.Name, m.Name, m)
		}
	}
}

// selectorOf returns the selector an aggregation's input reads directly
// (through parentheses, a range selector and range functions such as rate),
// or nil when the input is computed.
func selectorOf(e parser.Expr) *parser.VectorSelector {
	for {
		switch n := e.(type) {
		case *parser.ParenExpr:
			e = n.Expr
		case *parser.MatrixSelector:
			e = n.VectorSelector
		case *parser.Call:
			if len(n.Args) != 1 {
				return nil
			}
			e = n.Args[0]
		case *parser.VectorSelector:
			return n
		default:
			return nil
		}
	}
}

// TestQueriesParse: every expression of the rules and the dashboard
// parses with Prometheus' PromQL parser and selects at least one metric.
func TestQueriesParse(t *testing.T) {
	t.Parallel()
	rules, recorded := ruleQueries(t)
	panels, _ := dashboardQueries(t)
	for _, q := range append(rules, panels...) {
		expr, err := promql.ParseExpr(q.expr)
		if err != nil {
			t.Errorf("%s: %q: %v", q.where, q.expr, err)
			continue
		}
		if len(parser.ExtractSelectors(expr)) == 0 {
			t.Errorf("%s: %q selects no metric", q.where, q.expr)
		}
	}
	if len(recorded) == 0 {
		t.Error("no recording rules")
	}
}

// TestQueriesMatchScrape: every metric the rules and the dashboard read
// is a recording rule of rules.yaml or exists, with every label they
// match or group by, in the scrape of "volbind controller" the end-to-end
// suite saved: no alert or panel waits on a metric that is never
// exported.
func TestQueriesMatchScrape(t *testing.T) {
	t.Parallel()
	families := scrape(t)
	rules, recorded := ruleQueries(t)
	panels, variables := dashboardQueries(t)
	r := resolver{families: families, recorded: recorded}
	selectors := 0
	for _, q := range append(rules, panels...) {
		selectors += r.check(t, q)
	}
	for _, v := range variables {
		mf, extra := r.family(v[0])
		if mf == nil || !hasLabel(mf, extra, v[1]) {
			t.Errorf("dashboard variable label_values(%s, %s): no such metric and label in the scrape", v[0], v[1])
		}
	}
	t.Logf("%d queries, %d selectors checked against %d metric families", len(rules)+len(panels), selectors, len(families))
}
