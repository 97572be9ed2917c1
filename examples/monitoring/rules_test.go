package monitoring

import (
	"bytes"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

// severities are the values the alerts' severity label may take.
var severities = []string{"critical", "warning", "info"}

// promql parses PromQL as Prometheus does by default.
var promql = parser.NewParser(parser.Options{})

// parseRules parses a rules file's content with Prometheus' rulefmt, as
// Prometheus loads rule_files (unknown fields are errors).
func parseRules(t *testing.T, name string, content []byte) *rulefmt.RuleGroups {
	t.Helper()
	groups, errs := rulefmt.Parse(content, false, model.UTF8Validation, promql, slog.New(slog.DiscardHandler))
	for _, err := range errs {
		t.Errorf("%s: %v", name, err)
	}
	if groups == nil || len(groups.Groups) == 0 {
		t.Fatalf("%s: no rule groups", name)
	}
	return groups
}

// loadRules parses rules.yaml.
func loadRules(t *testing.T) *rulefmt.RuleGroups {
	t.Helper()
	raw, err := os.ReadFile("rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return parseRules(t, "rules.yaml", raw)
}

// TestRuleFiles: rules.yaml is a valid rules file; every alert waits
// ("for") before it fires and has a known severity, a summary and a
// description; prometheusrule.yaml is a PrometheusRule whose groups, as a
// rules file, parse and are the same as rules.yaml's.
func TestRuleFiles(t *testing.T) {
	t.Parallel()
	groups := loadRules(t)
	alerts, records := 0, 0
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				records++
				continue
			}
			alerts++
			switch {
			case r.For <= 0:
				t.Errorf("alert %s fires at once; give it a for:", r.Alert)
			case !slices.Contains(severities, r.Labels["severity"]):
				t.Errorf("alert %s has severity %q, want one of %v", r.Alert, r.Labels["severity"], severities)
			case r.Annotations["summary"] == "" || r.Annotations["description"] == "":
				t.Errorf("alert %s lacks a summary or description: %v", r.Alert, r.Annotations)
			}
		}
	}
	if alerts == 0 || records == 0 {
		t.Errorf("rules.yaml has %d alerts and %d recording rules, want both", alerts, records)
	}

	raw, err := os.ReadFile("prometheusrule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var pr struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Metadata   struct {
			Name      string `yaml:"name"`
			Namespace string `yaml:"namespace"`
		} `yaml:"metadata"`
		Spec yaml.Node `yaml:"spec"`
	}
	if err := yaml.Unmarshal(raw, &pr); err != nil {
		t.Fatalf("prometheusrule.yaml: %v", err)
	}
	if pr.APIVersion != "monitoring.coreos.com/v1" || pr.Kind != "PrometheusRule" || pr.Metadata.Name == "" || pr.Metadata.Namespace == "" {
		t.Errorf("prometheusrule.yaml is %s %s %s/%s, want a named monitoring.coreos.com/v1 PrometheusRule",
			pr.APIVersion, pr.Kind, pr.Metadata.Namespace, pr.Metadata.Name)
	}
	var spec bytes.Buffer
	enc := yaml.NewEncoder(&spec)
	if err := enc.Encode(&pr.Spec); err != nil {
		t.Fatal(err)
	}
	operator := parseRules(t, "prometheusrule.yaml spec", spec.Bytes())
	if !reflect.DeepEqual(operator.Groups, groups.Groups) {
		t.Error("the groups of prometheusrule.yaml differ from rules.yaml's; keep the two files the same")
	}
}
