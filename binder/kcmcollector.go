package binder

import (
	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
)

// The gauges of kube-controller-manager's PV collector.
var (
	kubeTotalPVs = prometheus.NewDesc("pv_collector_total_pv_count",
		"[ALPHA] Gauge measuring total number of persistent volumes", []string{"plugin_name", "volume_mode"}, nil)
	kubeBoundPVs = prometheus.NewDesc("pv_collector_bound_pv_count",
		"[ALPHA] Gauge measuring number of persistent volume currently bound", []string{"storage_class"}, nil)
	kubeUnboundPVs = prometheus.NewDesc("pv_collector_unbound_pv_count",
		"[ALPHA] Gauge measuring number of persistent volume currently unbound", []string{"storage_class"}, nil)
	kubeBoundPVCs = prometheus.NewDesc("pv_collector_bound_pvc_count",
		"[ALPHA] Gauge measuring number of persistent volume claim currently bound",
		[]string{"namespace", "storage_class", "volume_attributes_class"}, nil)
	kubeUnboundPVCs = prometheus.NewDesc("pv_collector_unbound_pvc_count",
		"[ALPHA] Gauge measuring number of persistent volume claim currently unbound",
		[]string{"namespace", "storage_class", "volume_attributes_class"}, nil)
)

// pvCollector computes the pv_collector_* gauges from the store at each
// scrape: nothing is counted as events happen, so the gauges can never
// drift from the caches.
type pvCollector struct{ s *store }

var _ prometheus.Collector = pvCollector{}

// Describe implements prometheus.Collector.
func (c pvCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{kubeTotalPVs, kubeBoundPVs, kubeUnboundPVs, kubeBoundPVCs, kubeUnboundPVCs} {
		ch <- d
	}
}

// volumeTotal is a label pair of pv_collector_total_pv_count.
type volumeTotal struct{ plugin, mode string }

// claimLabels are the labels of the claim gauges.
type claimLabels struct{ namespace, class, attributesClass string }

// Collect implements prometheus.Collector.
func (c pvCollector) Collect(ch chan<- prometheus.Metric) {
	totals := map[volumeTotal]int{}
	bound, unbound := map[string]int{}, map[string]int{}
	for _, pv := range c.s.volumes.List() {
		mode := v1.PersistentVolumeFilesystem // the API server's default
		if pv.Spec.VolumeMode != nil {
			mode = *pv.Spec.VolumeMode
		}
		totals[volumeTotal{kubePluginName(pv), string(mode)}]++
		if pv.Status.Phase == v1.VolumeBound {
			bound[pv.Spec.StorageClassName]++
		} else {
			unbound[pv.Spec.StorageClassName]++
		}
	}
	for l, n := range totals {
		ch <- prometheus.MustNewConstMetric(kubeTotalPVs, prometheus.GaugeValue, float64(n), l.plugin, l.mode)
	}
	for class, n := range bound {
		ch <- prometheus.MustNewConstMetric(kubeBoundPVs, prometheus.GaugeValue, float64(n), class)
	}
	for class, n := range unbound {
		ch <- prometheus.MustNewConstMetric(kubeUnboundPVs, prometheus.GaugeValue, float64(n), class)
	}

	boundClaims, unboundClaims := map[claimLabels]int{}, map[claimLabels]int{}
	for _, pvc := range c.s.claims.List() {
		l := claimLabels{pvc.Namespace, volume.GetPersistentVolumeClaimClass(pvc), ptr.Deref(pvc.Spec.VolumeAttributesClassName, "")}
		if pvc.Status.Phase == v1.ClaimBound {
			boundClaims[l]++
		} else {
			unboundClaims[l]++
		}
	}
	for l, n := range boundClaims {
		ch <- prometheus.MustNewConstMetric(kubeBoundPVCs, prometheus.GaugeValue, float64(n), l.namespace, l.class, l.attributesClass)
	}
	for l, n := range unboundClaims {
		ch <- prometheus.MustNewConstMetric(kubeUnboundPVCs, prometheus.GaugeValue, float64(n), l.namespace, l.class, l.attributesClass)
	}
}

// kubePluginName is the plugin_name of pv_collector_total_pv_count: the
// plugin kube-controller-manager's PV controller finds for the volume among
// the two it loads that can serve a volume source (the others, CSI
// included, are not loaded by that controller), or "N/A" when none or
// both match.
func kubePluginName(pv *v1.PersistentVolume) string {
	hostPath, nfs := pv.Spec.HostPath != nil, pv.Spec.NFS != nil
	switch {
	case hostPath && !nfs:
		return "kubernetes.io/host-path"
	case nfs && !hostPath:
		return "kubernetes.io/nfs"
	}
	return kubeNotAvailable
}
