package main

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/tools/leaderelection"
	clientmetrics "k8s.io/client-go/tools/metrics"
)

// restClientMetrics are client-go's REST client metrics with the names,
// labels and buckets component-base gives them in kube-controller-manager,
// on a registry of ours instead of component-base's global one.
type restClientMetrics struct {
	requestLatency     *prometheus.HistogramVec // verb, host
	rateLimiterLatency *prometheus.HistogramVec // verb, host
	requestResult      *prometheus.CounterVec   // code, method, host
	requestRetry       *prometheus.CounterVec   // code, verb, host
}

// newRESTClientMetrics creates the collectors and registers them on reg.
func newRESTClientMetrics(reg prometheus.Registerer) (*restClientMetrics, error) {
	buckets := []float64{0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0}
	m := &restClientMetrics{
		requestLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rest_client_request_duration_seconds",
			Help:    "Request latency in seconds. Broken down by verb, and host.",
			Buckets: buckets,
		}, []string{"verb", "host"}),
		rateLimiterLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rest_client_rate_limiter_duration_seconds",
			Help:    "Client side rate limiter latency in seconds. Broken down by verb, and host.",
			Buckets: buckets,
		}, []string{"verb", "host"}),
		requestResult: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rest_client_requests_total",
			Help: "Number of HTTP requests, partitioned by status code, method, and host.",
		}, []string{"code", "method", "host"}),
		requestRetry: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rest_client_request_retries_total",
			Help: "Number of request retries, partitioned by status code, verb, and host.",
		}, []string{"code", "verb", "host"}),
	}
	for _, c := range []prometheus.Collector{m.requestLatency, m.rateLimiterLatency, m.requestResult, m.requestRetry} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("controller: register client metrics: %w", err)
		}
	}
	return m, nil
}

// registerOpts returns the adapters for client-go's metrics.Register,
// which takes effect once per process.
func (m *restClientMetrics) registerOpts() clientmetrics.RegisterOpts {
	return clientmetrics.RegisterOpts{
		RequestLatency:     latencyAdapter{m.requestLatency},
		RateLimiterLatency: latencyAdapter{m.rateLimiterLatency},
		RequestResult:      resultAdapter{m.requestResult},
		RequestRetry:       retryAdapter{m.requestRetry},
	}
}

type latencyAdapter struct{ h *prometheus.HistogramVec }

var _ clientmetrics.LatencyMetric = latencyAdapter{}

func (a latencyAdapter) Observe(_ context.Context, verb string, u url.URL, latency time.Duration) {
	a.h.WithLabelValues(verb, u.Host).Observe(latency.Seconds())
}

type resultAdapter struct{ c *prometheus.CounterVec }

var _ clientmetrics.ResultMetric = resultAdapter{}

func (a resultAdapter) Increment(_ context.Context, code, method, host string) {
	a.c.WithLabelValues(code, method, host).Inc()
}

type retryAdapter struct{ c *prometheus.CounterVec }

var _ clientmetrics.RetryMetric = retryAdapter{}

func (a retryAdapter) IncrementRetry(_ context.Context, code, verb, host string) {
	a.c.WithLabelValues(code, verb, host).Inc()
}

// leaderMetrics are client-go's leader-election metrics, with
// component-base's names: leader_election_master_status is 1 while this
// replica leads the Lease of the "name" label, and
// leader_election_slowpath_total counts renewals that had to read the
// Lease again.
type leaderMetrics struct {
	status   *prometheus.GaugeVec   // name
	slowpath *prometheus.CounterVec // name
}

var (
	_ leaderelection.MetricsProvider = (*leaderMetrics)(nil)
	_ leaderelection.LeaderMetric    = (*leaderMetrics)(nil)
)

// newLeaderMetrics creates the collectors and registers them on reg.
func newLeaderMetrics(reg prometheus.Registerer) (*leaderMetrics, error) {
	m := &leaderMetrics{
		status: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "leader_election_master_status",
			Help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
		}, []string{"name"}),
		slowpath: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leader_election_slowpath_total",
			Help: "Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease. Please make sure to group by name.",
		}, []string{"name"}),
	}
	for _, c := range []prometheus.Collector{m.status, m.slowpath} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("controller: register leader-election metrics: %w", err)
		}
	}
	return m, nil
}

// NewLeaderMetric implements leaderelection.MetricsProvider.
func (m *leaderMetrics) NewLeaderMetric() leaderelection.LeaderMetric { return m }

// On implements leaderelection.LeaderMetric.
func (m *leaderMetrics) On(name string) { m.status.WithLabelValues(name).Set(1) }

// Off implements leaderelection.LeaderMetric.
func (m *leaderMetrics) Off(name string) { m.status.WithLabelValues(name).Set(0) }

// SlowpathExercised implements leaderelection.LeaderMetric.
func (m *leaderMetrics) SlowpathExercised(name string) { m.slowpath.WithLabelValues(name).Inc() }
