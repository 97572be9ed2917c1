package binder

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/clock"
)

// KubeMetricsConfig turns on the metrics of kube-controller-manager's
// PersistentVolume controller (Kubernetes v1.37), with its names, types,
// labels, buckets and help texts, so that dashboards and alerts written for
// it keep working:
//
//   - pv_collector_total_pv_count{plugin_name,volume_mode},
//     pv_collector_bound_pv_count and pv_collector_unbound_pv_count
//     {storage_class}, pv_collector_bound_pvc_count and
//     pv_collector_unbound_pvc_count
//     {namespace,storage_class,volume_attributes_class}: gauges computed
//     from the Binder's caches at each scrape. A volume or claim is bound
//     when its phase is Bound. plugin_name is the plugin Kubernetes' PV
//     controller finds for the volume among those it loads:
//     "kubernetes.io/host-path" and "kubernetes.io/nfs", "N/A" for every
//     other volume (CSI volumes included).
//   - volume_operation_errors_total{plugin_name,operation_name}: failed
//     provisionings ("provision", also a failed binding of a claim whose
//     provisioning started) and deletions ("delete"). plugin_name is the
//     provisioner (the CSI driver of a migrated in-tree one) or the name
//     the Deleter is registered under, "N/A" when none can be named.
//   - volume_operation_total_seconds{plugin_name,operation_name}: from the
//     start of a provisioning until its claim is bound, and from the first
//     attempt to delete a released volume until its object is deleted,
//     external provisioners included.
//   - storage_operation_duration_seconds{volume_plugin,operation_name,
//     status,migrated}: the calls of Provisioner.Provision
//     ("volume_provision") and Deleter.Delete ("volume_delete"), with
//     status "success" or "fail-unknown" and migrated "false".
//   - retroactive_storageclass_total and
//     retroactive_storageclass_errors_total: assignments of the default
//     StorageClass to claims without class, and the failed ones.
//   - workqueue_depth, workqueue_adds_total, workqueue_queue_duration_seconds,
//     workqueue_work_duration_seconds, workqueue_unfinished_work_seconds,
//     workqueue_longest_running_processor_seconds and workqueue_retries_total
//     of the queues "claims" and "volumes", as client-go's workqueue reports
//     them in kube-controller-manager.
//
// Unlike Kubernetes, a cancelled operation, one the Fence refused, and the
// deletion of a volume no Deleter can delete (which Kubernetes marks Failed
// without counting an error either) are not counted as errors.
type KubeMetricsConfig struct {
	// Registerer receives the metrics. Nil means Config.Registerer; New
	// fails (ErrInvalidConfig) when both are nil or when a name is taken:
	// a registry that holds client-go's global workqueue metrics
	// (k8s.io/component-base/metrics/prometheus/workqueue registers them)
	// clashes.
	Registerer prometheus.Registerer
	// ShowHidden also exports volume_operation_total_errors, the name
	// Kubernetes deprecated in v1.36 for volume_operation_errors_total and
	// hides from v1.37 on unless kube-controller-manager runs with
	// --show-hidden-metrics-for-version=1.36. False (the default) is
	// v1.37's default.
	ShowHidden bool
}

// Label values of the Kubernetes metrics.
const (
	kubeNotAvailable = "N/A" // a plugin that cannot be named
	kubeStatusOK     = "success"
	kubeStatusFailed = "fail-unknown"
	// Operation names of storage_operation_duration_seconds.
	kubeOpPluginProvision = "volume_provision"
	kubeOpPluginDelete    = "volume_delete"
)

// kubeDurationBuckets are the buckets of Kubernetes' storage operation
// histograms.
var kubeDurationBuckets = []float64{.1, .25, .5, 1, 2.5, 5, 10, 15, 25, 50, 120, 300, 600}

// kubeMetrics are the counters and histograms of KubeMetricsConfig and the
// start times of the operations they time. A nil *kubeMetrics records
// nothing.
type kubeMetrics struct {
	clock clock.PassiveClock
	// errs is volume_operation_errors_total; hiddenErrs its deprecated
	// twin, nil unless shown.
	errs, hiddenErrs               *prometheus.CounterVec
	retroactive, retroactiveFailed prometheus.Counter
	// pluginCalls is storage_operation_duration_seconds, operations
	// volume_operation_total_seconds.
	pluginCalls, operations *prometheus.HistogramVec
	starts                  opStarts
	queue                   queueMetrics
}

// newKubeMetrics creates the metrics of cfg.KubeMetrics with a collector
// of s and registers them; nil when cfg.KubeMetrics is nil. On error,
// nothing stays registered.
func newKubeMetrics(cfg Config, s *store) (*kubeMetrics, error) {
	kc := cfg.KubeMetrics
	if kc == nil {
		return nil, nil
	}
	reg := kc.Registerer
	if reg == nil {
		reg = cfg.Registerer
	}
	if reg == nil {
		return nil, errors.Join(ErrInvalidConfig, errors.New("binder: KubeMetrics without a Registerer"))
	}
	k := &kubeMetrics{
		clock: cfg.Clock,
		starts: opStarts{
			m: make(map[string]opStart),
		},
		errs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "volume_operation_errors_total", Help: "[ALPHA] Total volume operation errors",
		}, []string{"plugin_name", "operation_name"}),
		retroactive: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "retroactive_storageclass_total",
			Help: "[ALPHA] Total number of retroactive StorageClass assignments to persistent volume claim",
		}),
		retroactiveFailed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "retroactive_storageclass_errors_total",
			Help: "[ALPHA] Total number of failed retroactive StorageClass assignments to persistent volume claim",
		}),
		pluginCalls: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "storage_operation_duration_seconds", Help: "[BETA] Storage operation duration",
			Buckets: kubeDurationBuckets,
		}, []string{"volume_plugin", "operation_name", "status", "migrated"}),
		operations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "volume_operation_total_seconds", Help: "[BETA] Storage operation end to end duration in seconds",
			Buckets: kubeDurationBuckets,
		}, []string{"plugin_name", "operation_name"}),
		queue: newKubeQueueMetrics(),
	}
	cs := []prometheus.Collector{pvCollector{s}, k.errs, k.retroactive, k.retroactiveFailed, k.pluginCalls, k.operations}
	if kc.ShowHidden {
		k.hiddenErrs = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "volume_operation_total_errors", Help: "[ALPHA] (Deprecated since 1.36.0) Total volume operation errors",
		}, []string{"plugin_name", "operation_name"})
		cs = append(cs, k.hiddenErrs)
	}
	cs = append(cs, k.queue.collectors()...)
	for i, c := range cs {
		if err := reg.Register(c); err != nil {
			for _, done := range cs[:i] {
				reg.Unregister(done)
			}
			return nil, errors.Join(ErrInvalidConfig, err)
		}
	}
	return k, nil
}

// opStart is when an operation started and what it is counted under.
type opStart struct {
	plugin, op string
	at         time.Time
}

// opStarts remembers when the provisioning of a claim (key
// "namespace/name") or the deletion of a volume (key: its name) started, as
// Kubernetes' OperationStartTimeCache: from the first attempt until the
// claim is bound or the volume deleted, retries included. Claim keys
// contain a slash and volume names cannot, so the two never collide.
type opStarts struct {
	// mu guards m.
	mu sync.Mutex
	m  map[string]opStart
}

// opStarted records that the operation op of key started now, counted
// under plugin, unless one is recorded already.
func (k *kubeMetrics) opStarted(key, plugin, op string) {
	if k == nil {
		return
	}
	k.starts.mu.Lock()
	defer k.starts.mu.Unlock()
	if _, ok := k.starts.m[key]; !ok {
		k.starts.m[key] = opStart{plugin: plugin, op: op, at: k.clock.Now()}
	}
}

// opFailed counts an error of key's operation, if one was started; it
// stays recorded.
func (k *kubeMetrics) opFailed(key string) {
	if k == nil {
		return
	}
	k.starts.mu.Lock()
	s, ok := k.starts.m[key]
	k.starts.mu.Unlock()
	if !ok {
		return
	}
	if s.plugin == "" {
		s.plugin = kubeNotAvailable
	}
	k.errs.WithLabelValues(s.plugin, s.op).Inc()
	if k.hiddenErrs != nil {
		k.hiddenErrs.WithLabelValues(s.plugin, s.op).Inc()
	}
}

// opDone observes the duration of key's operation, if one was started,
// and forgets it.
func (k *kubeMetrics) opDone(key string) {
	if k == nil {
		return
	}
	k.starts.mu.Lock()
	s, ok := k.starts.m[key]
	delete(k.starts.m, key)
	k.starts.mu.Unlock()
	if ok {
		k.operations.WithLabelValues(s.plugin, s.op).Observe(k.clock.Since(s.at).Seconds())
	}
}

// opForget forgets key's operation without observing it (its claim was
// deleted before it was bound).
func (k *kubeMetrics) opForget(key string) {
	if k == nil {
		return
	}
	k.starts.mu.Lock()
	defer k.starts.mu.Unlock()
	delete(k.starts.m, key)
}

// opEnded is Kubernetes' RecordMetric: opFailed when err counts as an
// operation error (countsAsError), opDone when err is nil.
func (k *kubeMetrics) opEnded(ctx context.Context, key string, err error) {
	switch {
	case err == nil:
		k.opDone(key)
	case countsAsError(ctx, err):
		k.opFailed(key)
	}
}

// countsAsError reports whether an operation's err is counted in
// volume_operation_errors_total: not when ctx is done (the Binder stops),
// the Fence refused, or no Deleter can delete the volume.
func countsAsError(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() == nil && !errors.Is(err, ErrFenced) && !errors.Is(err, ErrNoVolumePlugin)
}

// pluginCall observes a call of a Provisioner or Deleter, started at
// start, that returned err, in storage_operation_duration_seconds.
func (k *kubeMetrics) pluginCall(plugin, op string, start time.Time, err error) {
	if k == nil {
		return
	}
	status := kubeStatusOK
	if err != nil {
		status = kubeStatusFailed
	}
	k.pluginCalls.WithLabelValues(plugin, op, status, strconv.FormatBool(false)).Observe(k.clock.Since(start).Seconds())
}

// retroactiveAssigned counts an assignment of the default class to a
// claim, which failed with err when it is not nil.
func (k *kubeMetrics) retroactiveAssigned(err error) {
	if k == nil {
		return
	}
	k.retroactive.Inc()
	if err != nil {
		k.retroactiveFailed.Inc()
	}
}

// provisionPluginName is the plugin a provisioning of class is counted
// under, as Kubernetes' getProvisionerName: the CSI driver of a migrated
// in-tree provisioner ("N/A" when it has none), else the class's
// provisioner.
func (b *Binder) provisionPluginName(class *storagev1.StorageClass) string {
	p := class.Provisioner
	if !b.cfg.CSIMigration.IsMigrationEnabledForPlugin(p) {
		return p
	}
	driver, err := b.cfg.CSIMigration.GetCSINameFromInTreeName(p)
	if err != nil {
		return kubeNotAvailable
	}
	return driver
}

// deletePluginName is the plugin a deletion of pv is counted under, as
// Kubernetes' getProvisionerNameFromVolume: the name its Deleter is
// registered under; for a volume an external provisioner deletes, that of
// its class (provisionPluginName); "N/A" when neither is found.
func (b *Binder) deletePluginName(pv *v1.PersistentVolume) string {
	name, d, err := b.deletePlugin(pv)
	switch {
	case err != nil:
		return kubeNotAvailable
	case d != nil:
		return name
	}
	class, ok := b.classes.get(volume.GetPersistentVolumeClass(pv))
	if !ok {
		return kubeNotAvailable
	}
	return b.provisionPluginName(class)
}
