package binder

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

const metricsNamespace = "volbind"

// Results of a sync, the "result" label of volbind_binder_syncs_total.
const (
	resultSuccess  = "success"
	resultError    = "error"
	resultConflict = "conflict"
	resultInvalid  = "invalid"
)

// metrics are the Binder's Prometheus collectors. A nil *metrics records
// nothing.
type metrics struct {
	syncs        *prometheus.CounterVec   // kind, result
	syncDuration *prometheus.HistogramVec // kind
	binds        prometheus.Counter
	conflicts    *prometheus.CounterVec // resource
	writes       *prometheus.CounterVec // resource, verb
	ignored      *prometheus.CounterVec // resource, reason (ignored.go)

	queue queueMetrics
}

// queueMetrics implements workqueue.MetricsProvider on the Binder's
// registry, with the queue name as label.
type queueMetrics struct {
	depth, unfinished, longest *prometheus.GaugeVec
	adds, retries              *prometheus.CounterVec
	latency, workDuration      *prometheus.HistogramVec
}

var _ workqueue.MetricsProvider = (*queueMetrics)(nil)

// newMetrics creates and registers the collectors; a nil registerer gives
// nil metrics.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	buckets := prometheus.ExponentialBuckets(1e-6, 4, 14) // 1 µs .. 67 s
	m := &metrics{
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Subsystem: "binder", Name: "syncs_total",
			Help: "Claim and volume syncs by kind (claim, volume) and result (success, error, conflict, invalid).",
		}, []string{"kind", "result"}),
		syncDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: metricsNamespace, Subsystem: "binder", Name: "sync_duration_seconds",
			Help: "Duration of one claim or volume sync, API calls included.", Buckets: buckets,
		}, []string{"kind"}),
		binds: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: metricsNamespace, Subsystem: "binder", Name: "binds_total",
			Help: "Claims whose binding to a volume the Binder completed.",
		}),
		conflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Subsystem: "binder", Name: "conflicts_total",
			Help: "API writes refused with a Conflict, by resource.",
		}, []string{"resource"}),
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Subsystem: "binder", Name: "api_writes_total",
			Help: "Successful API writes, by resource and verb (create, update, update_status, delete).",
		}, []string{"resource", "verb"}),
		ignored: newIgnoredCounter(),
		queue: queueMetrics{
			depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
				Namespace: metricsNamespace, Subsystem: "binder_workqueue", Name: "depth",
				Help: "Current depth of the workqueue.",
			}, []string{"name"}),
			adds: prometheus.NewCounterVec(prometheus.CounterOpts{
				Namespace: metricsNamespace, Subsystem: "binder_workqueue", Name: "adds_total",
				Help: "Adds handled by the workqueue.",
			}, []string{"name"}),
			latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
				Namespace: metricsNamespace, Subsystem: "binder_workqueue", Name: "queue_duration_seconds",
				Help: "How long an item stays in the workqueue before being processed.", Buckets: buckets,
			}, []string{"name"}),
			workDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
				Namespace: metricsNamespace, Subsystem: "binder_workqueue", Name: "work_duration_seconds",
				Help: "How long processing an item from the workqueue takes.", Buckets: buckets,
			}, []string{"name"}),
			unfinished: prometheus.NewGaugeVec(prometheus.GaugeOpts{
				Namespace: metricsNamespace, Subsystem: "binder_workqueue", Name: "unfinished_work_seconds",
				Help: "Seconds of work in progress not yet observed by work_duration.",
			}, []string{"name"}),
			longest: prometheus.NewGaugeVec(prometheus.GaugeOpts{
				Namespace: metricsNamespace, Subsystem: "binder_workqueue", Name: "longest_running_processor_seconds",
				Help: "Seconds the longest running processor has been running.",
			}, []string{"name"}),
			retries: prometheus.NewCounterVec(prometheus.CounterOpts{
				Namespace: metricsNamespace, Subsystem: "binder_workqueue", Name: "retries_total",
				Help: "Rate-limited requeues handled by the workqueue.",
			}, []string{"name"}),
		},
	}
	// The series known in advance start at zero, so that rates and alerts
	// see them before the first error or conflict.
	for _, kind := range []queueKind{claimQueue, volumeQueue} {
		for _, result := range []string{resultSuccess, resultError, resultConflict, resultInvalid} {
			m.syncs.WithLabelValues(kind.String(), result)
		}
	}
	for _, resource := range []string{resourceVolumes, resourceClaims} {
		m.conflicts.WithLabelValues(resource)
	}
	q := &m.queue
	for _, c := range []prometheus.Collector{m.syncs, m.syncDuration, m.binds, m.conflicts, m.writes, m.ignored,
		q.depth, q.adds, q.latency, q.workDuration, q.unfinished, q.longest, q.retries} {
		if err := reg.Register(c); err != nil {
			return nil, errors.Join(ErrInvalidConfig, err)
		}
	}
	return m, nil
}

func (m *metrics) sync(kind, result string, d time.Duration) {
	if m == nil {
		return
	}
	m.syncs.WithLabelValues(kind, result).Inc()
	m.syncDuration.WithLabelValues(kind).Observe(d.Seconds())
}

func (m *metrics) bound() {
	if m != nil {
		m.binds.Inc()
	}
}

func (m *metrics) conflict(resource string) {
	if m != nil {
		m.conflicts.WithLabelValues(resource).Inc()
	}
}

func (m *metrics) wrote(resource, verb string) {
	if m != nil {
		m.writes.WithLabelValues(resource, verb).Inc()
	}
}

// provider returns the workqueue metrics provider, nil without metrics.
func (m *metrics) provider() workqueue.MetricsProvider {
	if m == nil {
		return nil
	}
	return &m.queue
}

// NewDepthMetric implements workqueue.MetricsProvider.
func (q *queueMetrics) NewDepthMetric(name string) workqueue.GaugeMetric {
	return q.depth.WithLabelValues(name)
}

// NewAddsMetric implements workqueue.MetricsProvider.
func (q *queueMetrics) NewAddsMetric(name string) workqueue.CounterMetric {
	return q.adds.WithLabelValues(name)
}

// NewLatencyMetric implements workqueue.MetricsProvider.
func (q *queueMetrics) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return q.latency.WithLabelValues(name)
}

// NewWorkDurationMetric implements workqueue.MetricsProvider.
func (q *queueMetrics) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return q.workDuration.WithLabelValues(name)
}

// NewUnfinishedWorkSecondsMetric implements workqueue.MetricsProvider.
func (q *queueMetrics) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return q.unfinished.WithLabelValues(name)
}

// NewLongestRunningProcessorSecondsMetric implements workqueue.MetricsProvider.
func (q *queueMetrics) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return q.longest.WithLabelValues(name)
}

// NewRetriesMetric implements workqueue.MetricsProvider.
func (q *queueMetrics) NewRetriesMetric(name string) workqueue.CounterMetric {
	return q.retries.WithLabelValues(name)
}
