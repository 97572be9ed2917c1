package volumebinding

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/component-base/metrics"
	intreemetrics "k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumebinding/metrics"

	"github.com/volbind/volbind/binder/scheduling"
)

// nopAPI is a scheduling.API that is never called.
type nopAPI struct{}

func (nopAPI) UpdateVolume(context.Context, *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	panic("unexpected UpdateVolume")
}

func (nopAPI) UpdateClaim(context.Context, *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	panic("unexpected UpdateClaim")
}

// TestMetricsReplaceInTree registers binder/scheduling's metrics on a
// registry that already holds the in-tree plugin's collectors, as
// kube-scheduler's does, and scrapes ours.
func TestMetricsReplaceInTree(t *testing.T) {
	kr := metrics.NewKubeRegistry()
	kr.MustRegister(intreemetrics.VolumeBindingRequestSchedulerBinderCache, intreemetrics.VolumeSchedulingStageFailed)
	classes := informers.NewSharedInformerFactory(fake.NewClientset(), 0).Storage().V1().StorageClasses().Lister()
	if _, err := scheduling.New(nopAPI{}, classes, scheduling.Config{Registerer: kr.Registerer()}); err == nil {
		t.Fatal("registering beside the in-tree collectors succeeded; the replacing registerer is no longer needed")
	}
	b, err := scheduling.New(nopAPI{}, classes, scheduling.Config{Registerer: newReplacingRegisterer(kr.Registerer())})
	if err != nil {
		t.Fatal(err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	if _, _, err := b.Find(t.Context(), pod, node); err != nil {
		t.Fatal(err)
	}
	b.Revert(pod, nil) // counts a cache "delete"
	families, err := kr.Gather()
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			switch {
			case m.GetCounter() != nil:
				got[f.GetName()] += m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				got[f.GetName()] += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	for _, name := range []string{"scheduler_volume_binder_cache_requests_total", "scheduler_volume_scheduling_duration_seconds"} {
		if got[name] != 1 {
			t.Errorf("%s = %v, want 1 (scraped %v)", name, got[name], got)
		}
	}
}
