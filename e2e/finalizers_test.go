//go:build e2e && linux

package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/recycler"
)

// releaseFinalizers registers a cleanup, run after the Binder has stopped,
// that removes the finalizers of the test's volumes, so that the fixture's
// cleanup can delete every one of them.
func (f *fixture) releaseFinalizers() {
	f.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		list, err := f.cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{LabelSelector: testLabel + "=" + f.ns})
		if err != nil {
			f.t.Errorf("list volumes: %v", err)
			return
		}
		for i := range list.Items {
			pv := &list.Items[i]
			if len(pv.Finalizers) == 0 {
				continue
			}
			pv.Finalizers = nil
			if _, err := f.cs.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
				f.t.Errorf("remove the finalizers of %s: %v", pv.Name, err)
			}
		}
	})
}

// waitGone waits until the volume no longer exists.
func (f *fixture) waitGone(name string) {
	f.t.Helper()
	f.eventually(time.Minute, "volume "+name+" to disappear", func(ctx context.Context) (bool, error) {
		_, err := f.cs.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// volumeEvents returns the events about the (cluster-scoped) volume name
// with the given reason; the recorder puts them in namespace "default".
func (f *fixture) volumeEvents(ctx context.Context, name, reason string) ([]v1.Event, error) {
	return f.eventsIn(ctx, metav1.NamespaceDefault, name, reason)
}

// deleteClaim deletes a claim of the fixture's namespace.
func (f *fixture) deleteClaim(name string) {
	f.t.Helper()
	if err := f.cs.CoreV1().PersistentVolumeClaims(f.ns).Delete(f.t.Context(), name, deleteNow()); err != nil {
		f.t.Fatalf("delete claim %s: %v", name, err)
	}
}

// TestProvisionedVolumeFinalizer: a volume the Binder provisions with the
// Delete policy carries kubernetes.io/pv-controller, as kube-controller-
// manager's do; once its claim is deleted, the storage is deleted, the
// finalizer removed and the volume is gone from the API server.
func TestProvisionedVolumeFinalizer(t *testing.T) {
	f := newFixture(t)
	f.releaseFinalizers()
	f.createClass(storagev1.VolumeBindingImmediate)
	d := &fakeDeleter{}
	startBinder(t, binder.Config{
		Provisioning: &binder.ProvisioningConfig{Provisioners: map[string]binder.Provisioner{testProvisioner: &fakeProvisioner{ns: f.ns}}},
		Reclaim:      &binder.ReclaimConfig{Deleters: map[string]binder.Deleter{testProvisioner: d}},
	})
	f.create(f.claim("dynamic", 1))
	f.waitBound(1, time.Minute)
	name := binder.ProvisionedVolumeName(f.getClaim("dynamic"))
	if pv := f.getVolume(name); !slices.Equal(pv.Finalizers, []string{binder.FinalizerPVController}) {
		t.Fatalf("provisioned volume finalizers = %v, want [%s]", pv.Finalizers, binder.FinalizerPVController)
	}
	f.deleteClaim("dynamic")
	f.waitGone(name)
	if got := d.names(); !slices.Equal(got, []string{name}) {
		t.Errorf("Deleter deleted %q, want [%s]", got, name)
	}
}

// TestBoundVolumeDeletedByUser: a provisioned Delete volume that did not
// carry the finalizer (made by an older controller) gets it; when the
// user deletes it while it is bound, the API server keeps it (Terminating)
// and it stays Bound with its storage; once its claim is deleted it is
// reclaimed and disappears.
func TestBoundVolumeDeletedByUser(t *testing.T) {
	f := newFixture(t)
	f.releaseFinalizers()
	d := &fakeDeleter{}
	b := startBinder(t, binder.Config{Reclaim: &binder.ReclaimConfig{Deleters: map[string]binder.Deleter{testProvisioner: d}}})
	pv := f.volume("old", 1)
	pv.Spec.PersistentVolumeReclaimPolicy = v1.PersistentVolumeReclaimDelete
	pv.Annotations = map[string]string{"pv.kubernetes.io/provisioned-by": testProvisioner}
	f.createAvailable(pv)
	f.create(f.claim("old", 1))
	f.waitBound(1, time.Minute)
	f.eventually(time.Minute, "the finalizer on the volume", func(context.Context) (bool, error) {
		return slices.Contains(f.getVolume(pv.Name).Finalizers, binder.FinalizerPVController), nil
	})

	if err := f.cs.CoreV1().PersistentVolumes().Delete(t.Context(), pv.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete volume: %v", err)
	}
	f.eventually(time.Minute, "the volume to be Terminating", func(context.Context) (bool, error) {
		return f.getVolume(pv.Name).DeletionTimestamp != nil, nil
	})
	// The Binder has seen the volume Terminating and synced it.
	f.settle(b)
	if got := f.getVolume(pv.Name); got.Status.Phase != v1.VolumeBound || len(d.names()) != 0 {
		t.Fatalf("volume deleted while bound: phase %s, Deleter calls %v; want Bound and no call", got.Status.Phase, d.names())
	}

	f.deleteClaim("old")
	f.waitGone(pv.Name)
	if got := d.names(); !slices.Equal(got, []string{pv.Name}) {
		t.Errorf("Deleter deleted %q, want [%s]", got, pv.Name)
	}
}

// TestStaticCSIVolumeDeleteStaysReleased: a released static CSI volume
// with the Delete policy is left Released for the CSI external
// provisioner, without error message or VolumeFailedDelete event.
func TestStaticCSIVolumeDeleteStaysReleased(t *testing.T) {
	f := newFixture(t)
	b := startBinder(t, binder.Config{Reclaim: &binder.ReclaimConfig{Deleters: map[string]binder.Deleter{"kubernetes.io/host-path": &fakeDeleter{}}}})
	pv := f.volume("csi", 1)
	pv.Spec.PersistentVolumeReclaimPolicy = v1.PersistentVolumeReclaimDelete
	pv.Spec.HostPath = nil
	pv.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: "csi.e2e.volbind.io", VolumeHandle: f.ns + "-csi"}
	f.createAvailable(pv)
	f.create(f.claim("csi", 1))
	f.waitBound(1, time.Minute)
	f.deleteClaim("csi")
	f.eventually(time.Minute, "the volume to be Released", func(context.Context) (bool, error) {
		return f.getVolume(pv.Name).Status.Phase == v1.VolumeReleased, nil
	})
	f.settle(b)
	if got := f.getVolume(pv.Name); got.Status.Phase != v1.VolumeReleased || got.Status.Message != "" {
		t.Errorf("static CSI volume = %s %q, want Released without message", got.Status.Phase, got.Status.Message)
	}
	if evs, err := f.volumeEvents(t.Context(), pv.Name, binder.ReasonVolumeFailedDelete); err != nil || len(evs) != 0 {
		t.Errorf("VolumeFailedDelete events = %v (%v), want none", evs, err)
	}
}

// TestRecycleWaitsForPod: a Recycle volume whose deleted claim a pod still
// uses is not scrubbed: a Normal VolumeFailedRecycle event names the pod
// and the volume stays Released; once the pod is gone, the next resync
// recycles it (the test plays the kubelet for the recycler pod).
func TestRecycleWaitsForPod(t *testing.T) {
	f := newFixture(t)
	template := recycler.DefaultPodTemplate()
	template.Namespace = f.ns
	r, err := recycler.NewForClientset(newClient(t, 1000, 2000), recycler.Config{PodTemplate: template})
	if err != nil {
		t.Fatalf("recycler.NewForClientset: %v", err)
	}
	startBinder(t, binder.Config{Reclaim: &binder.ReclaimConfig{Recycler: r}, ResyncPeriod: time.Second})
	pv := f.volume("used", 1)
	pv.Spec.PersistentVolumeReclaimPolicy = v1.PersistentVolumeReclaimRecycle
	f.createAvailable(pv)
	f.create(f.claim("used", 1))
	f.waitBound(1, time.Minute)
	if _, err := f.cs.CoreV1().Pods(f.ns).Create(t.Context(), f.podUsing("user", "used"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	f.deleteClaim("used")

	want := "Volume is used by pods: " + f.ns + "/user"
	f.eventually(time.Minute, "a VolumeFailedRecycle event naming the pod", func(ctx context.Context) (bool, error) {
		evs, err := f.volumeEvents(ctx, pv.Name, binder.ReasonVolumeFailedRecycle)
		for _, ev := range evs {
			if ev.Type == v1.EventTypeNormal && ev.Message == want {
				return true, nil
			}
		}
		return false, err
	})
	podName := recycler.PodName(pv.Name)
	if _, err := f.cs.CoreV1().Pods(f.ns).Get(t.Context(), podName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("recycler pod while the claim's pod runs: err %v, want NotFound", err)
	}
	if got := f.getVolume(pv.Name); got.Status.Phase != v1.VolumeReleased || got.Spec.ClaimRef == nil {
		t.Fatalf("volume while used = %s with claimRef %v, want Released and still bound", got.Status.Phase, got.Spec.ClaimRef)
	}

	if err := f.cs.CoreV1().Pods(f.ns).Delete(t.Context(), "user", deleteNow()); err != nil {
		t.Fatalf("delete pod: %v", err)
	}
	f.completePod(f.waitPod(podName))
	f.eventually(time.Minute, "the recycled volume to be Available", func(context.Context) (bool, error) {
		got := f.getVolume(pv.Name)
		return got.Status.Phase == v1.VolumeAvailable && got.Spec.ClaimRef == nil, nil
	})
}
