//go:build e2e && linux

package e2e

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volbind/volbind/binder"
)

// TestWaitForFirstConsumer checks a claim of a WaitForFirstConsumer class:
// the Binder leaves it Pending with a WaitForFirstConsumer event and binds
// no volume to it, until the scheduler's part is done as kube-scheduler's
// volume binder does it (the selected-node annotation on the claim and the
// chosen volume pre-bound with a claimRef); then the Binder completes that
// binding and leaves the other volume alone.
func TestWaitForFirstConsumer(t *testing.T) {
	f := newFixture(t)
	mode := storagev1.VolumeBindingWaitForFirstConsumer
	sc := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: f.class},
		Provisioner:       "kubernetes.io/no-provisioner",
		VolumeBindingMode: &mode,
	}
	if _, err := f.cs.StorageV1().StorageClasses().Create(t.Context(), sc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create StorageClass: %v", err)
	}
	t.Cleanup(func() {
		if err := f.cs.StorageV1().StorageClasses().Delete(context.Background(), f.class, deleteNow()); err != nil {
			t.Errorf("delete StorageClass: %v", err)
		}
	})
	startBinder(t, binder.Config{})
	f.create(f.volume("node-a", 1), f.volume("node-b", 1))
	f.create(f.claim("waits", 1))

	f.eventually(time.Minute, "a WaitForFirstConsumer event on claim waits", func(ctx context.Context) (bool, error) {
		evs, err := f.events(ctx, "waits", binder.ReasonWaitForFirstConsumer)
		return len(evs) > 0, err
	})
	f.eventually(time.Minute, "both volumes Available", func(ctx context.Context) (bool, error) {
		return f.getVolume(f.ns+"-node-a").Status.Phase == v1.VolumeAvailable &&
			f.getVolume(f.ns+"-node-b").Status.Phase == v1.VolumeAvailable, nil
	})
	if c := f.getClaim("waits"); c.Status.Phase != v1.ClaimPending || c.Spec.VolumeName != "" {
		t.Fatalf("WaitForFirstConsumer claim before scheduling: phase %s, volume %q; want Pending, none", c.Status.Phase, c.Spec.VolumeName)
	}

	// The scheduler's volume binder: annotate the claim with the chosen
	// node, pre-bind the volume that fits that node.
	claim := f.getClaim("waits")
	metav1.SetMetaDataAnnotation(&claim.ObjectMeta, "volume.kubernetes.io/selected-node", "node-b")
	if _, err := f.cs.CoreV1().PersistentVolumeClaims(f.ns).Update(t.Context(), claim, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("annotate claim: %v", err)
	}
	pv := f.getVolume(f.ns + "-node-b")
	pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: f.ns, Name: claim.Name, UID: claim.UID}
	metav1.SetMetaDataAnnotation(&pv.ObjectMeta, "pv.kubernetes.io/bound-by-controller", "yes")
	if _, err := f.cs.CoreV1().PersistentVolumes().Update(t.Context(), pv, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("pre-bind volume: %v", err)
	}

	f.waitBound(1, time.Minute)
	if got := f.checkBindings()["waits"]; got != f.ns+"-node-b" {
		t.Errorf("claim waits Bound to %q, want %q", got, f.ns+"-node-b")
	}
	if other := f.getVolume(f.ns + "-node-a"); other.Status.Phase != v1.VolumeAvailable || other.Spec.ClaimRef != nil {
		t.Errorf("volume node-a: phase %s, claimRef %+v; want Available, unclaimed", other.Status.Phase, other.Spec.ClaimRef)
	}
}
