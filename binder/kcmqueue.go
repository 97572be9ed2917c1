package binder

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

// newKubeQueueMetrics returns the workqueue metrics under the names, help
// texts and buckets kube-controller-manager gives them
// (k8s.io/component-base/metrics/prometheus/workqueue); the Binder's queues
// are named "claims" and "volumes", as the PV controller's are.
func newKubeQueueMetrics() queueMetrics {
	buckets := prometheus.ExponentialBuckets(10e-9, 10, 10) // 10 ns .. 10 s
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: name, Help: "[BETA] " + help}, []string{"name"})
	}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "workqueue", Name: name, Help: "[BETA] " + help}, []string{"name"})
	}
	histogram := func(name, help string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "workqueue", Name: name, Help: "[BETA] " + help,
			Buckets: buckets}, []string{"name"})
	}
	return queueMetrics{
		depth:        gauge("depth", "Current depth of workqueue"),
		adds:         counter("adds_total", "Total number of adds handled by workqueue"),
		latency:      histogram("queue_duration_seconds", "How long in seconds an item stays in workqueue before being requested."),
		workDuration: histogram("work_duration_seconds", "How long in seconds processing an item from workqueue takes."),
		unfinished: gauge("unfinished_work_seconds", "How many seconds of work has done that is in progress and hasn't "+
			"been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck "+
			"threads by observing the rate at which this increases."),
		longest: gauge("longest_running_processor_seconds", "How many seconds has the longest running processor for workqueue been running."),
		retries: counter("retries_total", "Total number of retries handled by workqueue"),
	}
}

// collectors returns the collectors of q, to register them.
func (q *queueMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{q.depth, q.adds, q.latency, q.workDuration, q.unfinished, q.longest, q.retries}
}

// queueProvider returns the workqueue metrics provider of the Binder's
// queues: the volbind_binder_workqueue_* metrics of m, the workqueue_* ones
// of k, both, or nil.
func queueProvider(m *metrics, k *kubeMetrics) workqueue.MetricsProvider {
	switch {
	case k == nil:
		return m.provider()
	case m == nil:
		return &k.queue
	}
	return providers{&m.queue, &k.queue}
}

// providers is a workqueue.MetricsProvider whose metrics update the
// metrics of each of its providers.
type providers []workqueue.MetricsProvider

var _ workqueue.MetricsProvider = providers(nil)

// gauges, settableGauges, counters and histograms update each of theirs.
type (
	gauges         []workqueue.GaugeMetric
	settableGauges []workqueue.SettableGaugeMetric
	counters       []workqueue.CounterMetric
	histograms     []workqueue.HistogramMetric
)

func (g gauges) Inc() {
	for _, m := range g {
		m.Inc()
	}
}

func (g gauges) Dec() {
	for _, m := range g {
		m.Dec()
	}
}

func (g settableGauges) Set(v float64) {
	for _, m := range g {
		m.Set(v)
	}
}

func (c counters) Inc() {
	for _, m := range c {
		m.Inc()
	}
}

func (h histograms) Observe(v float64) {
	for _, m := range h {
		m.Observe(v)
	}
}

// each returns f applied to every provider of ps.
func each[T any](ps providers, f func(workqueue.MetricsProvider) T) []T {
	out := make([]T, len(ps))
	for i, p := range ps {
		out[i] = f(p)
	}
	return out
}

// NewDepthMetric implements workqueue.MetricsProvider.
func (ps providers) NewDepthMetric(name string) workqueue.GaugeMetric {
	return gauges(each(ps, func(p workqueue.MetricsProvider) workqueue.GaugeMetric { return p.NewDepthMetric(name) }))
}

// NewAddsMetric implements workqueue.MetricsProvider.
func (ps providers) NewAddsMetric(name string) workqueue.CounterMetric {
	return counters(each(ps, func(p workqueue.MetricsProvider) workqueue.CounterMetric { return p.NewAddsMetric(name) }))
}

// NewLatencyMetric implements workqueue.MetricsProvider.
func (ps providers) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return histograms(each(ps, func(p workqueue.MetricsProvider) workqueue.HistogramMetric { return p.NewLatencyMetric(name) }))
}

// NewWorkDurationMetric implements workqueue.MetricsProvider.
func (ps providers) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return histograms(each(ps, func(p workqueue.MetricsProvider) workqueue.HistogramMetric { return p.NewWorkDurationMetric(name) }))
}

// NewUnfinishedWorkSecondsMetric implements workqueue.MetricsProvider.
func (ps providers) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return settableGauges(each(ps, func(p workqueue.MetricsProvider) workqueue.SettableGaugeMetric {
		return p.NewUnfinishedWorkSecondsMetric(name)
	}))
}

// NewLongestRunningProcessorSecondsMetric implements workqueue.MetricsProvider.
func (ps providers) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return settableGauges(each(ps, func(p workqueue.MetricsProvider) workqueue.SettableGaugeMetric {
		return p.NewLongestRunningProcessorSecondsMetric(name)
	}))
}

// NewRetriesMetric implements workqueue.MetricsProvider.
func (ps providers) NewRetriesMetric(name string) workqueue.CounterMetric {
	return counters(each(ps, func(p workqueue.MetricsProvider) workqueue.CounterMetric { return p.NewRetriesMetric(name) }))
}
