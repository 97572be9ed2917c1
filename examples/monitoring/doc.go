// Package monitoring is the test of volbind's shipped monitoring: the
// Prometheus rules (rules.yaml, and the same groups in prometheusrule.yaml
// for prometheus-operator) and the Grafana dashboard (dashboard.json). Its
// tests parse the rules with Prometheus' own rulefmt and every expression
// with its PromQL parser, and check every metric and label they name
// against a scrape of "volbind controller" that the end-to-end suite saves
// (.ci/e2e passes it in $VOLBIND_SCRAPE), so that no alert waits on a
// metric that does not exist. It is a Go module of its own, so that
// github.com/prometheus/prometheus never enters volbind's go.mod; it has no
// code for anyone to import.
package monitoring
