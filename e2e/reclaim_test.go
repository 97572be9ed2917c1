//go:build e2e && linux

package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/recycler"
)

// fakeDeleter is a binder.Deleter that records the volumes it deleted.
type fakeDeleter struct {
	// mu guards deleted.
	mu      sync.Mutex
	deleted []string
}

var _ binder.Deleter = (*fakeDeleter)(nil)

func (d *fakeDeleter) Delete(_ context.Context, pv *v1.PersistentVolume) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.deleted = append(d.deleted, pv.Name)
	return nil
}

func (d *fakeDeleter) names() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.deleted)
}

// bindAndRelease creates a volume with the given reclaim policy (changed
// by opts) and a claim, waits until they are bound, deletes the claim and
// returns the volume as last read.
func (f *fixture) bindAndRelease(name string, policy v1.PersistentVolumeReclaimPolicy, opts ...func(*v1.PersistentVolume)) *v1.PersistentVolume {
	f.t.Helper()
	pv := f.volume(name, 1)
	pv.Spec.PersistentVolumeReclaimPolicy = policy
	for _, o := range opts {
		o(pv)
	}
	f.createAvailable(pv)
	f.create(f.claim(name, 1))
	f.waitBound(1, time.Minute)
	bound := f.getVolume(pv.Name)
	if err := f.cs.CoreV1().PersistentVolumeClaims(f.ns).Delete(f.t.Context(), name, deleteNow()); err != nil {
		f.t.Fatalf("delete claim %s: %v", name, err)
	}
	return bound
}

// waitPod waits until the pod name exists in the fixture's namespace and
// returns it.
func (f *fixture) waitPod(name string) *v1.Pod {
	f.t.Helper()
	var pod *v1.Pod
	f.eventually(time.Minute, "pod "+name, func(ctx context.Context) (bool, error) {
		var err error
		pod, err = f.cs.CoreV1().Pods(f.ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	return pod
}

// completePod plays the kubelet: it marks the pod Succeeded.
func (f *fixture) completePod(pod *v1.Pod) {
	f.t.Helper()
	pod = pod.DeepCopy()
	pod.Status.Phase = v1.PodSucceeded
	if _, err := f.cs.CoreV1().Pods(pod.Namespace).UpdateStatus(f.t.Context(), pod, metav1.UpdateOptions{}); err != nil {
		f.t.Fatalf("complete pod %s: %v", pod.Name, err)
	}
}

// TestReclaimDelete deletes the claim of a bound volume with the Delete
// policy: the Binder calls the Deleter registered for the volume's plugin
// and deletes the volume object.
func TestReclaimDelete(t *testing.T) {
	f := newFixture(t)
	d := &fakeDeleter{}
	startBinder(t, binder.Config{Reclaim: &binder.ReclaimConfig{Deleters: map[string]binder.Deleter{"kubernetes.io/host-path": d}}})
	pv := f.bindAndRelease("doomed", v1.PersistentVolumeReclaimDelete)
	f.waitGone(pv.Name)
	if got := d.names(); !slices.Equal(got, []string{pv.Name}) {
		t.Errorf("Deleter deleted %q, want [%s]", got, pv.Name)
	}
}

// TestReclaimRecycle deletes the claim of a bound volume with the Recycle
// policy: the Binder marks the volume with its volbind.io/operation
// annotation (op recycle) and creates the recycler pod; the test plays the
// kubelet and marks the pod Succeeded; the volume becomes Available again,
// without claimRef and without the mark, and the pod is deleted.
func TestReclaimRecycle(t *testing.T) {
	f := newFixture(t)
	template := recycler.DefaultPodTemplate()
	template.Namespace = f.ns
	r, err := recycler.NewForClientset(newClient(t, 1000, 2000), recycler.Config{PodTemplate: template})
	if err != nil {
		t.Fatalf("recycler.NewForClientset: %v", err)
	}
	startBinder(t, binder.Config{Reclaim: &binder.ReclaimConfig{Recycler: r}})
	pv := f.bindAndRelease("scrubbed", v1.PersistentVolumeReclaimRecycle)

	podName := recycler.PodName(pv.Name)
	pod := f.waitPod(podName)
	// The operation mark was written before the recycler was called.
	var mark struct {
		Op    string    `json:"op"`
		Owner string    `json:"owner"`
		Start time.Time `json:"start"`
	}
	raw := f.getVolume(pv.Name).Annotations[binder.AnnOperation]
	if err := json.Unmarshal([]byte(raw), &mark); err != nil || mark.Op != "recycle" || mark.Owner == "" || mark.Start.IsZero() {
		t.Errorf("annotation %s while recycling = %q (%v), want op recycle with an owner and a start time", binder.AnnOperation, raw, err)
	}
	if got := pod.Annotations[recycler.AnnVolume]; got != pv.Name {
		t.Errorf("recycler pod annotation %s = %q, want %q", recycler.AnnVolume, got, pv.Name)
	}
	if len(pod.Spec.Volumes) == 0 || pod.Spec.Volumes[0].HostPath == nil || pod.Spec.Volumes[0].HostPath.Path != pv.Spec.HostPath.Path {
		t.Errorf("recycler pod volumes = %+v, want the volume's host path %s first", pod.Spec.Volumes, pv.Spec.HostPath.Path)
	}
	f.completePod(pod)

	f.eventually(time.Minute, "the recycled volume to be Available", func(ctx context.Context) (bool, error) {
		got := f.getVolume(pv.Name)
		return got.Status.Phase == v1.VolumeAvailable && got.Spec.ClaimRef == nil, nil
	})
	if got := f.getVolume(pv.Name).Annotations; got[binder.AnnOperation] != "" {
		t.Errorf("recycled volume keeps the operation mark: annotations %v", got)
	}
	f.eventually(time.Minute, "the recycler pod to be deleted", func(ctx context.Context) (bool, error) {
		_, err := f.cs.CoreV1().Pods(f.ns).Get(ctx, podName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}
