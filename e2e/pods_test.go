//go:build e2e && linux

package e2e

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volbind/volbind/binder"
)

// podUsing returns a pod of the fixture's namespace, not scheduled, whose
// volume uses the claim.
func (f *fixture) podUsing(name, claim string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
		Spec: v1.PodSpec{
			Containers: []v1.Container{{Name: "c", Image: "busybox"}},
			Volumes: []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
				PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}},
		},
	}
}

// TestWaitForPodScheduled: a claim of a WaitForFirstConsumer class that an
// unscheduled pod uses, directly or as a generic ephemeral volume (claim
// "<pod>-<volume>"), gets kube-controller-manager's Normal
// WaitForPodScheduled event naming the pod, from the pods the Binder's
// trimmed and indexed pod informer (NewForClientset) gets from the API
// server; the claims stay Pending.
func TestWaitForPodScheduled(t *testing.T) {
	f := newFixture(t)
	f.createClass(storagev1.VolumeBindingWaitForFirstConsumer)
	// The claim is synced again every second: its first sync may come
	// before the pod informer has the pod.
	startBinder(t, binder.Config{ResyncPeriod: time.Second})
	eph := f.podUsing("eph", "")
	eph.Spec.Volumes[0].VolumeSource = v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{
		VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{Spec: f.claim("template", 1).Spec}}}
	for _, pod := range []*v1.Pod{f.podUsing("user", "waits"), eph} {
		if _, err := f.cs.CoreV1().Pods(f.ns).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod %s: %v", pod.Name, err)
		}
		t.Cleanup(func() {
			if err := f.cs.CoreV1().Pods(f.ns).Delete(context.Background(), pod.Name, deleteNow()); err != nil {
				t.Errorf("delete pod %s: %v", pod.Name, err)
			}
		})
	}
	// The claim the ephemeral volume controller would create.
	f.create(f.claim("waits", 1), f.claim("eph-data", 1))
	f.waitEvent(f.ns, "waits", v1.EventTypeNormal, binder.ReasonWaitForPodScheduled, "waiting for pod user to be scheduled")
	f.waitEvent(f.ns, "eph-data", v1.EventTypeNormal, binder.ReasonWaitForPodScheduled, "waiting for pod eph to be scheduled")
	for _, name := range []string{"waits", "eph-data"} {
		if c := f.getClaim(name); c.Status.Phase != v1.ClaimPending || c.Spec.VolumeName != "" {
			t.Errorf("claim %s = %s to %q, want Pending without volume", name, c.Status.Phase, c.Spec.VolumeName)
		}
	}
}

// TestConflictRereadsRealServer: a Binder whose cache holds a stale claim
// (its watch has not delivered the claim's latest change) gets a 409
// Conflict from kube-apiserver for its status write, reads the claim back
// from the server and succeeds at the next sync, without an informer
// event in between.
func TestConflictRereadsRealServer(t *testing.T) {
	f := newFixture(t)
	claim := f.claim("stale", 1)
	claim.Spec.StorageClassName = new(string)
	f.create(claim)
	claim = f.getClaim("stale")
	pv := f.volume("stale", 1)
	pv.Spec.StorageClassName = ""
	pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: f.ns, Name: claim.Name, UID: claim.UID}
	f.create(pv)
	// The claim names the volume and is marked bound; its status is still
	// Pending, which the sync writes Bound.
	claim.Spec.VolumeName = pv.Name
	metav1.SetMetaDataAnnotation(&claim.ObjectMeta, "pv.kubernetes.io/bind-completed", "yes")
	claim, err := f.cs.CoreV1().PersistentVolumeClaims(f.ns).Update(t.Context(), claim, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update claim: %v", err)
	}

	// A Binder without informers: the test delivers the objects once, as
	// a watch that then stalls.
	b, err := binder.New(binder.NewClientsetAPI(newClient(t, 1000, 2000)), binder.Config{})
	if err != nil {
		t.Fatal(err)
	}
	b.VolumeHandler().OnAdd(f.getVolume(pv.Name), true)
	b.ClaimHandler().OnAdd(claim, true)
	changed := claim.DeepCopy()
	changed.Labels = map[string]string{"changed": "yes"}
	if _, err := f.cs.CoreV1().PersistentVolumeClaims(f.ns).Update(t.Context(), changed, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("change claim: %v", err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var errs []error
	for range 3 {
		errs = append(errs, b.SyncClaim(ctx, f.ns+"/stale"))
	}
	if !apierrors.IsConflict(errs[0]) || errs[1] != nil || errs[2] != nil {
		t.Errorf("sync errors = %v, want a Conflict from the API server and then success", errs)
	}
	got := f.getClaim("stale")
	if got.Status.Phase != v1.ClaimBound || got.Labels["changed"] != "yes" {
		t.Errorf("claim = %s with labels %v, want Bound with the change kept", got.Status.Phase, got.Labels)
	}
}
