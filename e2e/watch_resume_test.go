//go:build e2e && linux

package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/volbind/volbind/binder/bindertest"
)

// volumeAPI is what TestResumedWatchSelectorMatchesKubeAPIServer asks of
// kube-apiserver and of the in-memory API alike.
type volumeAPI struct {
	create func(context.Context, *v1.PersistentVolume) (*v1.PersistentVolume, error)
	update func(context.Context, *v1.PersistentVolume) (*v1.PersistentVolume, error)
	watch  func(context.Context, metav1.ListOptions) (watch.Interface, error)
}

func kubeVolumes(cs kubernetes.Interface) volumeAPI {
	pvs := cs.CoreV1().PersistentVolumes()
	return volumeAPI{
		create: func(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
			return pvs.Create(ctx, pv, metav1.CreateOptions{})
		},
		update: func(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
			return pvs.Update(ctx, pv, metav1.UpdateOptions{})
		},
		watch: pvs.Watch,
	}
}

func memoryVolumes(srv *bindertest.Server) volumeAPI {
	return volumeAPI{
		create: srv.CreateVolume,
		update: srv.UpdateVolume,
		watch: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return srv.Watch(ctx, bindertest.KindVolume, opts)
		},
	}
}

// TestResumedWatchSelectorMatchesKubeAPIServer checks that a watch with a
// label selector resumed from a resourceVersion before a volume's updates
// reports them as kube-apiserver does: the update that makes the volume
// match as ADDED, one that keeps it matching as MODIFIED, the one that
// makes it stop as DELETED. The in-memory API's history keeps only the
// labels of the version before each update, which is what that decision
// reads.
func TestResumedWatchSelectorMatchesKubeAPIServer(t *testing.T) {
	cs := newClient(t, 2000, 4000)
	base := "e2e-resume-" + utilrand.String(5)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := cs.CoreV1().PersistentVolumes().Delete(ctx, base, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete volume %s: %v", base, err)
		}
	})
	real := resumedWatchEvents(t, kubeVolumes(cs), base)
	mem := resumedWatchEvents(t, memoryVolumes(bindertest.New()), base)
	want := []string{"ADDED", "MODIFIED", "DELETED"}
	if !slices.Equal(real, want) {
		t.Fatalf("kube-apiserver sent %q, want %q", real, want)
	}
	if !slices.Equal(mem, real) {
		t.Errorf("in-memory API sent %q, kube-apiserver %q", mem, real)
	}
}

// resumedWatchEvents creates a volume named name, changes its labels
// three times and returns the types of the events that a watch of
// "tier=fast" volumes, resumed from the volume's first version, receives.
func resumedWatchEvents(t *testing.T, api volumeAPI, name string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	pv, err := api.create(ctx, &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{testLabel: name}},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			// A class of its own, so that no claim of a test running
			// alongside binds it.
			StorageClassName: name,
			PersistentVolumeSource: v1.PersistentVolumeSource{
				CSI: &v1.CSIPersistentVolumeSource{Driver: "csi.example.com", VolumeHandle: name},
			},
		},
	})
	if err != nil {
		t.Fatalf("create volume %s: %v", name, err)
	}
	from := pv.ResourceVersion
	for _, extra := range []map[string]string{{"tier": "fast"}, {"tier": "fast", "x": "y"}, {"tier": "slow"}} {
		next := pv.DeepCopy()
		next.Labels = map[string]string{testLabel: name}
		maps.Copy(next.Labels, extra)
		if pv, err = api.update(ctx, next); err != nil {
			t.Fatalf("update volume %s: %v", name, err)
		}
	}
	w, err := api.watch(ctx, metav1.ListOptions{
		LabelSelector:   fmt.Sprintf("%s=%s,tier=fast", testLabel, name),
		ResourceVersion: from,
	})
	if err != nil {
		t.Fatalf("watch from %s: %v", from, err)
	}
	defer w.Stop()
	var types []string
	for len(types) < 3 {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed after %q", types)
			}
			types = append(types, string(ev.Type))
		case <-ctx.Done():
			t.Fatalf("watch sent %q, then nothing for a minute", types)
		}
	}
	return types
}
