package binder

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/binder/bindertest"
	"github.com/volbind/volbind/internal/pvindex"
)

// kubeFamilies are the metric families of KubeMetricsConfig but the
// workqueue ones.
var kubeFamilies = []string{
	"pv_collector_total_pv_count", "pv_collector_bound_pv_count", "pv_collector_unbound_pv_count",
	"pv_collector_bound_pvc_count", "pv_collector_unbound_pvc_count",
	"volume_operation_errors_total", "volume_operation_total_errors", "volume_operation_total_seconds",
	"storage_operation_duration_seconds", "retroactive_storageclass_total", "retroactive_storageclass_errors_total",
}

// kubeBinder returns a Binder of e with cfg and the Kubernetes metrics on
// a new registry, which it returns too.
func (e *env) kubeBinder(cfg Config) (*Binder, *prometheus.Registry) {
	e.t.Helper()
	reg := prometheus.NewRegistry()
	cfg.KubeMetrics = &KubeMetricsConfig{Registerer: reg}
	return e.newBinder(cfg), reg
}

// sample returns the value of the counter or gauge, or the count and sum
// of the histogram, named name with the given labels ("k=v" pairs) in
// reg; ok is false when reg has no such series.
func sample(t *testing.T, reg prometheus.Gatherer, name string, labels ...string) (count uint64, value float64, ok bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if !hasLabels(m, labels) {
				continue
			}
			switch {
			case m.Histogram != nil:
				return m.Histogram.GetSampleCount(), m.Histogram.GetSampleSum(), true
			case m.Counter != nil:
				return 0, m.Counter.GetValue(), true
			case m.Gauge != nil:
				return 0, m.Gauge.GetValue(), true
			}
		}
	}
	return 0, 0, false
}

// hasLabels reports whether m has exactly the label pairs ("k=v").
func hasLabels(m *dto.Metric, pairs []string) bool {
	if len(m.GetLabel()) != len(pairs) {
		return false
	}
	for i, l := range m.GetLabel() { // sorted by name, as the pairs must be
		if pairs[i] != l.GetName()+"="+l.GetValue() {
			return false
		}
	}
	return true
}

// TestKubeCollector: the pv_collector_* gauges count the cached volumes
// and claims by kube-controller-manager's labels (plugin of the two it
// loads or N/A, volume mode, class, namespace, VolumeAttributesClass;
// bound means phase Bound), with its names and help texts, and follow the
// caches from one scrape to the next.
func TestKubeCollector(t *testing.T) {
	t.Parallel()
	nfs := func(pv *v1.PersistentVolume) {
		pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{NFS: &v1.NFSVolumeSource{Server: "nfs.example.com", Path: "/exports/" + pv.Name}}
	}
	betaClass := func(pvc *v1.PersistentVolumeClaim) {
		pvc.Spec.StorageClassName = nil
		pvc.Annotations = map[string]string{v1.BetaStorageClassAnnotation: "silver"}
	}
	other := func(pvc *v1.PersistentVolumeClaim) { pvc.Namespace = "other" }
	e := newEnv(t,
		newPV("pv1", "10Gi", hostPath, pvClass("gold"), boundTo("claim1", "uid-claim1"), pvPhase(v1.VolumeBound)),
		newPV("pv2", "10Gi", nfs, pvClass("gold")),
		newPV("pv3", "10Gi", pvBlock),
		newPV("pv4", "10Gi", pvPhase(v1.VolumeReleased), boundTo("gone", "uid-gone")),
		newPV("pv5", "10Gi", nfs, pvPhase(v1.VolumeFailed), pvClass("gold")), // no volume mode: Filesystem
		newPVC("claim1", "1Gi", pvcClass(ptr.To("gold")), pvcBound("pv1")),
		newPVC("claim2", "1Gi", func(pvc *v1.PersistentVolumeClaim) { pvc.Spec.VolumeAttributesClassName = ptr.To("fast") }),
		newPVC("claim3", "1Gi", pvcClass(ptr.To("gold")), pvcPhase(v1.ClaimLost), other),
		newPVC("claim4", "1Gi", betaClass),
	)
	_, reg := e.kubeBinder(Config{})

	const want = `
# HELP pv_collector_bound_pv_count [ALPHA] Gauge measuring number of persistent volume currently bound
# TYPE pv_collector_bound_pv_count gauge
pv_collector_bound_pv_count{storage_class="gold"} 1
# HELP pv_collector_bound_pvc_count [ALPHA] Gauge measuring number of persistent volume claim currently bound
# TYPE pv_collector_bound_pvc_count gauge
pv_collector_bound_pvc_count{namespace="default",storage_class="gold",volume_attributes_class=""} 1
# HELP pv_collector_total_pv_count [ALPHA] Gauge measuring total number of persistent volumes
# TYPE pv_collector_total_pv_count gauge
pv_collector_total_pv_count{plugin_name="N/A",volume_mode="Block"} 1
pv_collector_total_pv_count{plugin_name="N/A",volume_mode="Filesystem"} 1
pv_collector_total_pv_count{plugin_name="kubernetes.io/host-path",volume_mode="Filesystem"} 1
pv_collector_total_pv_count{plugin_name="kubernetes.io/nfs",volume_mode="Filesystem"} 2
# HELP pv_collector_unbound_pv_count [ALPHA] Gauge measuring number of persistent volume currently unbound
# TYPE pv_collector_unbound_pv_count gauge
pv_collector_unbound_pv_count{storage_class=""} 2
pv_collector_unbound_pv_count{storage_class="gold"} 2
# HELP pv_collector_unbound_pvc_count [ALPHA] Gauge measuring number of persistent volume claim currently unbound
# TYPE pv_collector_unbound_pvc_count gauge
pv_collector_unbound_pvc_count{namespace="default",storage_class="",volume_attributes_class="fast"} 1
pv_collector_unbound_pvc_count{namespace="default",storage_class="silver",volume_attributes_class=""} 1
pv_collector_unbound_pvc_count{namespace="other",storage_class="gold",volume_attributes_class=""} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), kubeFamilies[:5]...); err != nil {
		t.Error(err)
	}

	// The next scrape sees the caches as they are then.
	if err := e.srv.DeleteClaim(e.ctx, "other", "claim3"); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := sample(t, reg, "pv_collector_unbound_pvc_count", "namespace=other", "storage_class=gold", "volume_attributes_class="); ok {
		t.Error("pv_collector_unbound_pvc_count of a deleted claim is still exported")
	}
	if _, got, _ := sample(t, reg, "pv_collector_total_pv_count", "plugin_name=kubernetes.io/nfs", "volume_mode=Filesystem"); got != 2 {
		t.Errorf("pv_collector_total_pv_count{kubernetes.io/nfs,Filesystem} = %v, want 2", got)
	}
}

// TestKubeMetricsConfig: the Kubernetes metrics are off by default, go to
// Config.Registerer when KubeMetricsConfig names none, need a registerer,
// and a clash fails New with ErrInvalidConfig and leaves none of them
// registered. The deprecated volume_operation_total_errors is registered
// only with ShowHidden.
func TestKubeMetricsConfig(t *testing.T) {
	t.Parallel()
	e := newEnv(t, newPV("pv1", "1Gi"))
	families := func(reg *prometheus.Registry) map[string]bool {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, mf := range mfs {
			out[mf.GetName()] = true
		}
		return out
	}

	reg := prometheus.NewRegistry()
	e.newBinder(Config{Registerer: reg})
	if got := families(reg); got["pv_collector_total_pv_count"] {
		t.Errorf("families without KubeMetrics = %v, want no pv_collector_*", got)
	}

	reg = prometheus.NewRegistry()
	e.newBinder(Config{Registerer: reg, KubeMetrics: &KubeMetricsConfig{}})
	if got := families(reg); !got["pv_collector_total_pv_count"] {
		t.Errorf("families with KubeMetrics{} and Config.Registerer = %v, want pv_collector_total_pv_count", got)
	}
	if err := testutil.CollectAndCompare(reg, strings.NewReader(""), "volume_operation_total_errors"); err != nil {
		t.Errorf("volume_operation_total_errors without ShowHidden: %v", err)
	}

	if _, err := New(e.srv, Config{KubeMetrics: &KubeMetricsConfig{}}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("New with KubeMetrics and no registerer = %v, want ErrInvalidConfig", err)
	}

	reg = prometheus.NewRegistry()
	// As k8s.io/component-base/metrics/prometheus/workqueue registers it.
	taken := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_depth", Help: "[BETA] Current depth of workqueue"}, []string{"name"})
	reg.MustRegister(taken)
	if _, err := New(e.srv, Config{KubeMetrics: &KubeMetricsConfig{Registerer: reg}}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("New with workqueue_depth taken = %v, want ErrInvalidConfig", err)
	}
	reg.Unregister(taken)
	if _, err := New(e.srv, Config{KubeMetrics: &KubeMetricsConfig{Registerer: reg}}); err != nil {
		t.Errorf("New after the clash is gone = %v; the failed New left metrics registered", err)
	}

	hidden := prometheus.NewRegistry()
	b := e.newBinder(Config{KubeMetrics: &KubeMetricsConfig{Registerer: hidden, ShowHidden: true}})
	b.kube.opStarted("pv1", "example.com/disk", opDelete)
	b.kube.opFailed("pv1")
	const want = `
# HELP volume_operation_total_errors [ALPHA] (Deprecated since 1.36.0) Total volume operation errors
# TYPE volume_operation_total_errors counter
volume_operation_total_errors{operation_name="delete",plugin_name="example.com/disk"} 1
# HELP volume_operation_errors_total [ALPHA] Total volume operation errors
# TYPE volume_operation_errors_total counter
volume_operation_errors_total{operation_name="delete",plugin_name="example.com/disk"} 1
`
	if err := testutil.GatherAndCompare(hidden, strings.NewReader(want), "volume_operation_total_errors", "volume_operation_errors_total"); err != nil {
		t.Error(err)
	}
}

// TestKubeMetricsProvision: an internal provisioning that fails once
// counts one provision error and two Provisioner calls (one failed), and
// its end-to-end duration, from the first attempt until the claim is
// bound, once; an external provisioning is timed until the claim is bound
// to the volume the external provisioner created.
func TestKubeMetricsProvision(t *testing.T) {
	t.Parallel()
	p := newPlugin()
	p.fail = 1
	e, _ := provEnv(t, p, goldClaim("claim1", "1Gi"), newPVC("claim2", "1Gi", pvcClass(ptr.To("external"))))
	b, reg := e.kubeBinder(Config{Provisioning: &ProvisioningConfig{Provisioners: map[string]Provisioner{diskProvisioner: p}}})
	start := e.fc.Now()
	e.run(b)
	e.eventually(b, func() bool { return e.claim("claim1").Status.Phase == v1.ClaimBound })

	if _, got, _ := sample(t, reg, "volume_operation_errors_total", "operation_name=provision", "plugin_name="+diskProvisioner); got != 1 {
		t.Errorf("volume_operation_errors_total{provision,%s} = %v, want 1", diskProvisioner, got)
	}
	for status, want := range map[string]uint64{"fail-unknown": 1, "success": 1} {
		n, _, _ := sample(t, reg, "storage_operation_duration_seconds", "migrated=false", "operation_name=volume_provision", "status="+status, "volume_plugin="+diskProvisioner)
		if n != want {
			t.Errorf("storage_operation_duration_seconds{volume_provision,%s} count = %d, want %d", status, n, want)
		}
	}
	n, sum, _ := sample(t, reg, "volume_operation_total_seconds", "operation_name=provision", "plugin_name="+diskProvisioner)
	if elapsed := e.fc.Since(start).Seconds(); n != 1 || sum <= 0 || sum > elapsed {
		t.Errorf("volume_operation_total_seconds{provision,%s} = count %d sum %v, want 1 observation in (0, %v]", diskProvisioner, n, sum, elapsed)
	}

	// claim2 waits for example.com/external, which creates its volume.
	if n, _, _ := sample(t, reg, "volume_operation_total_seconds", "operation_name=provision", "plugin_name=example.com/external"); n != 0 {
		t.Fatalf("external provisioning observed before its claim is bound (%d)", n)
	}
	e.fc.Step(3 * time.Second)
	pv := newPV("pvc-uid-claim2", "1Gi", pvClass("external"), boundTo("claim2", "uid-claim2"), provisionedBy("example.com/external"))
	pv.ResourceVersion = ""
	if _, err := e.srv.CreateVolume(e.ctx, pv); err != nil {
		t.Fatal(err)
	}
	e.eventually(b, func() bool { return e.claim("claim2").Status.Phase == v1.ClaimBound })
	if n, sum, _ := sample(t, reg, "volume_operation_total_seconds", "operation_name=provision", "plugin_name=example.com/external"); n != 1 || sum < 3 {
		t.Errorf("volume_operation_total_seconds{provision,example.com/external} = count %d sum %v, want 1 observation of at least 3s", n, sum)
	}
}

// TestKubeMetricsDelete: a deletion whose Deleter fails once counts one
// delete error and two Deleter calls, and is timed until the volume is
// deleted; a volume no Deleter can delete becomes Failed without an error
// counted (as in Kubernetes); the deletion of a volume left to an external
// provisioner is timed under its class's provisioner until it deletes it.
func TestKubeMetricsDelete(t *testing.T) {
	t.Parallel()
	p := newPlugin()
	p.fail = 1
	e := newEnv(t,
		provClass("ext", "example.com/external", storagev1.VolumeBindingImmediate),
		releasedPV("pv1", v1.PersistentVolumeReclaimDelete, provisionedBy(diskProvisioner), pvFinalizers(FinalizerPVController)),
		releasedPV("pv2", v1.PersistentVolumeReclaimDelete, hostPath),
		releasedPV("pv3", v1.PersistentVolumeReclaimDelete, provisionedBy("example.com/external"), pvClass("ext")),
	)
	b, reg := e.kubeBinder(Config{Reclaim: &ReclaimConfig{Deleters: map[string]Deleter{diskProvisioner: p}}})
	e.run(b)
	e.eventually(b, func() bool { return !e.exists("pv1") && e.volume("pv2").Status.Phase == v1.VolumeFailed })

	if _, got, _ := sample(t, reg, "volume_operation_errors_total", "operation_name=delete", "plugin_name="+diskProvisioner); got != 1 {
		t.Errorf("volume_operation_errors_total{delete,%s} = %v, want 1", diskProvisioner, got)
	}
	if _, got, ok := sample(t, reg, "volume_operation_errors_total", "operation_name=delete", "plugin_name=N/A"); ok {
		t.Errorf("volume_operation_errors_total{delete,N/A} = %v for a volume without Deleter, want none", got)
	}
	for status, want := range map[string]uint64{"fail-unknown": 1, "success": 1} {
		n, _, _ := sample(t, reg, "storage_operation_duration_seconds", "migrated=false", "operation_name=volume_delete", "status="+status, "volume_plugin="+diskProvisioner)
		if n != want {
			t.Errorf("storage_operation_duration_seconds{volume_delete,%s} count = %d, want %d", status, n, want)
		}
	}
	if n, _, _ := sample(t, reg, "volume_operation_total_seconds", "operation_name=delete", "plugin_name="+diskProvisioner); n != 1 {
		t.Errorf("volume_operation_total_seconds{delete,%s} count = %d, want 1", diskProvisioner, n)
	}

	// The external provisioner deletes pv3.
	if err := e.srv.DeleteVolume(e.ctx, "pv3"); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := sample(t, reg, "volume_operation_total_seconds", "operation_name=delete", "plugin_name=example.com/external"); n != 1 {
		t.Errorf("volume_operation_total_seconds{delete,example.com/external} count = %d, want 1", n)
	}
}

// TestKubeMetricsRetroactive: each assignment of the default class to a
// claim without class counts in retroactive_storageclass_total, a failed
// one also in retroactive_storageclass_errors_total.
func TestKubeMetricsRetroactive(t *testing.T) {
	t.Parallel()
	def := newClass("standard", storagev1.VolumeBindingImmediate, true)
	e := newEnv(t, def, newPVC("claim1", "1Gi", pvcClass(nil)))
	e.srv.InjectFault(bindertest.Fault{Verb: bindertest.VerbUpdate, Kind: bindertest.KindClaim, Name: "claim1", Times: 1,
		Err: apierrors.NewInternalError(errors.New("etcd is away"))})
	b, reg := e.kubeBinder(Config{})
	e.run(b)
	e.eventually(b, func() bool { return ptr.Deref(e.claim("claim1").Spec.StorageClassName, "") == "standard" })
	const want = `
# HELP retroactive_storageclass_errors_total [ALPHA] Total number of failed retroactive StorageClass assignments to persistent volume claim
# TYPE retroactive_storageclass_errors_total counter
retroactive_storageclass_errors_total 1
# HELP retroactive_storageclass_total [ALPHA] Total number of retroactive StorageClass assignments to persistent volume claim
# TYPE retroactive_storageclass_total counter
retroactive_storageclass_total 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "retroactive_storageclass_total", "retroactive_storageclass_errors_total"); err != nil {
		t.Error(err)
	}
}

// TestKubeQueueMetrics: the Binder's queues report to both the
// volbind_binder_workqueue_* and the workqueue_* metrics, under
// kube-controller-manager's queue names "claims" and "volumes", with
// client-go's help texts and buckets.
func TestKubeQueueMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t, newPV("pv1", "1Gi"), newPVC("claim1", "1Gi"))
	own := prometheus.NewRegistry()
	kube := prometheus.NewRegistry()
	b := e.newBinder(Config{Registerer: own, KubeMetrics: &KubeMetricsConfig{Registerer: kube}})
	e.run(b)
	e.settle(b)
	for _, name := range []string{"claims", "volumes"} {
		_, kubeAdds, ok := sample(t, kube, "workqueue_adds_total", "name="+name)
		_, ownAdds, _ := sample(t, own, "volbind_binder_workqueue_adds_total", "name="+name)
		if !ok || kubeAdds < 1 || kubeAdds != ownAdds {
			t.Errorf("workqueue_adds_total{name=%q} = %v (exported %v), volbind_binder_workqueue_adds_total = %v; want equal and positive", name, kubeAdds, ok, ownAdds)
		}
		if _, _, ok := sample(t, kube, "workqueue_depth", "name="+name); !ok {
			t.Errorf("no workqueue_depth{name=%q}", name)
		}
	}
	mfs, err := kube.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "workqueue_queue_duration_seconds" {
			h := mf.GetMetric()[0].GetHistogram()
			if b := h.GetBucket(); len(b) != 10 || b[0].GetUpperBound() != 1e-8 || b[9].GetUpperBound() != 10 {
				t.Errorf("workqueue_queue_duration_seconds buckets = %v, want client-go's 1e-8 .. 10", b)
			}
			if mf.GetHelp() != "[BETA] How long in seconds an item stays in workqueue before being requested." {
				t.Errorf("help = %q", mf.GetHelp())
			}
		}
	}
}

// BenchmarkKubeCollector measures a scrape of the pv_collector_* gauges
// (half the volumes bound, claims over 100 namespaces and 4 classes).
func BenchmarkKubeCollector(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		s := newStore(clock.RealClock{}, pvindex.Options{})
		classes := []string{"gold", "silver", "bronze", ""}
		for i := range n {
			class := classes[i%len(classes)]
			pv := newPV(fmt.Sprintf("pv-%d", i), "1Gi", pvClass(class), hostPath)
			pvc := newPVC(fmt.Sprintf("pvc-%d", i), "1Gi", pvcClass(ptr.To(class)), func(pvc *v1.PersistentVolumeClaim) {
				pvc.Namespace = fmt.Sprintf("ns-%d", i%100)
			})
			if i%2 == 0 {
				pv.Status.Phase, pvc.Status.Phase = v1.VolumeBound, v1.ClaimBound
			}
			pv.ResourceVersion, pvc.ResourceVersion = "1", "1"
			if _, err := s.storeVolume(pv); err != nil {
				b.Fatal(err)
			}
			if _, err := s.storeClaim(pvc); err != nil {
				b.Fatal(err)
			}
		}
		reg := prometheus.NewRegistry()
		reg.MustRegister(pvCollector{s})
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := reg.Gather(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
