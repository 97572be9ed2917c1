package scheduling

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Subsystem is the Prometheus subsystem of the metrics, as in kube-scheduler.
const Subsystem = "scheduler_volume"

// Operation label values.
const (
	opPredicate = "predicate" // Find
	opAssume    = "assume"
	opBind      = "bind"

	opCacheAdd    = "add"
	opCacheGet    = "get"
	opCacheDelete = "delete"
)

// metrics are kube-scheduler's volume binding metrics.
type metrics struct {
	// cacheRequests counts operations on the recorded decisions by "add", "get" and
	// "delete".
	cacheRequests *prometheus.CounterVec
	// stageLatency observes Find ("predicate"), Assume and Bind with
	// kube-scheduler's name and buckets.
	stageLatency *prometheus.HistogramVec
	// stageDuration observes the same with buckets from 1 µs to 16 s,
	// where an in-memory Assume (tens of µs) and a Bind that waits for
	// the API server (ms to s) both land in a bucket of their own.
	stageDuration *prometheus.HistogramVec
	// stageErrors counts their failures.
	stageErrors *prometheus.CounterVec
}

// newMetrics returns the metrics registered with reg; nil (no metrics, whose
// methods do nothing) for a nil reg.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	m := &metrics{
		cacheRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: Subsystem,
			Name:      "binder_cache_requests_total",
			Help:      "Total number for request volume binding cache",
		}, []string{"operation"}),
		stageLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: Subsystem,
			Name:      "scheduling_duration_seconds",
			Help:      "Volume scheduling stage latency",
			// kube-scheduler's buckets, kept as they are for dashboards
			// built on them (they start at 1000 s, so every observation
			// lands in the first; stageDuration resolves them).
			Buckets: prometheus.ExponentialBuckets(1000, 2, 15),
		}, []string{"operation"}),
		stageDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "volbind",
			Subsystem: Subsystem,
			Name:      "stage_duration_seconds",
			Help:      "Volume scheduling stage latency, with buckets from 1 microsecond to 16 seconds",
			Buckets:   prometheus.ExponentialBuckets(1e-6, 4, 13), // 1 µs .. 16.8 s
		}, []string{"operation"}),
		stageErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: Subsystem,
			Name:      "scheduling_stage_error_total",
			Help:      "Volume scheduling stage error count",
		}, []string{"operation"}),
	}
	for _, c := range []prometheus.Collector{m.cacheRequests, m.stageLatency, m.stageDuration, m.stageErrors} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("scheduling: register metrics: %w", err)
		}
	}
	return m, nil
}

// stage observes one Find, Assume or Bind that began at start and counts
// its failure. A nil m does nothing.
func (m *metrics) stage(op string, start, end time.Time, failed bool) {
	if m == nil {
		return
	}
	d := end.Sub(start).Seconds()
	m.stageLatency.WithLabelValues(op).Observe(d)
	m.stageDuration.WithLabelValues(op).Observe(d)
	if failed {
		m.stageErrors.WithLabelValues(op).Inc()
	}
}

// cacheRequest counts one operation on the recorded decisions. A nil m does
// nothing.
func (m *metrics) cacheRequest(op string) {
	if m == nil {
		return
	}
	m.cacheRequests.WithLabelValues(op).Inc()
}
