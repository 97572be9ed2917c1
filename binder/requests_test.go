package binder

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRequestsCopyAndReuse(t *testing.T) {
	var r requests
	pv1 := newPV("pv1", "1Gi", boundTo("claim1", "uid1"), pvAnn("a"))
	pv1.TypeMeta = metav1.TypeMeta{Kind: "PersistentVolume", APIVersion: "v1"}
	pv2 := newPV("pv2", "2Gi")
	orig1, orig2 := pv1.DeepCopy(), pv2.DeepCopy()

	req := r.volumes.copyOf(pv1)
	want := orig1.DeepCopy()
	want.TypeMeta = metav1.TypeMeta{}
	if !equality.Semantic.DeepEqual(req, want) {
		t.Fatalf("volume(pv1) = %+v, want pv1 without type metadata", req)
	}
	req.Status.Phase = v1.VolumeBound
	req.Spec.ClaimRef = nil
	if !equality.Semantic.DeepEqual(pv1, orig1) {
		t.Fatalf("changing the request changed pv1")
	}
	r.volumes.done(req, nil)
	if !equality.Semantic.DeepEqual(*req, v1.PersistentVolume{}) {
		t.Errorf("a request taken back still holds %+v; it must hold nothing", req)
	}
	// An object the pool hands out again, even one left holding another
	// volume, becomes an exact copy of pv2. sync.Pool may drop what it is
	// given (always under the race detector, now and then), so try until
	// the pool hands one back.
	reused := false
	for i := 0; i < 100 && !reused; i++ {
		var fresh requests
		dirty := pv1.DeepCopy()
		fresh.volumes.pool.Put(dirty)
		next := fresh.volumes.copyOf(pv2)
		reused = next == dirty
		if !equality.Semantic.DeepEqual(next, orig2) {
			t.Fatalf("volume(pv2) = %+v, want a copy of pv2", next)
		}
	}
	if !reused {
		t.Fatal("the pool handed back none of 100 objects: the reuse was not tested")
	}

	// An API that answered with the request itself keeps it.
	kept := r.volumes.copyOf(pv2)
	r.volumes.done(kept, kept)
	if !equality.Semantic.DeepEqual(kept, orig2) {
		t.Errorf("a request the API answered with was cleared: %+v", kept)
	}

	claim := newPVC("claim1", "1Gi", pvcAnn("b"))
	creq := r.claims.copyOf(claim)
	if !equality.Semantic.DeepEqual(creq, claim) {
		t.Fatalf("claim(claim1) = %+v, want a copy", creq)
	}
	r.claims.done(creq, nil)
	if !equality.Semantic.DeepEqual(*creq, v1.PersistentVolumeClaim{}) {
		t.Errorf("a claim request taken back still holds %+v", creq)
	}
}

// echoAPI answers every update with the object it was given (after the
// server stored it), as a test double might: the Binder's caches then
// hold the objects it sent, which it must not recycle.
type echoAPI struct{ API }

func (a echoAPI) UpdateVolume(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	out, err := a.API.UpdateVolume(ctx, pv)
	return echo(pv, out, err)
}

func (a echoAPI) UpdateVolumeStatus(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	out, err := a.API.UpdateVolumeStatus(ctx, pv)
	return echo(pv, out, err)
}

func (a echoAPI) UpdateClaim(ctx context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	out, err := a.API.UpdateClaim(ctx, pvc)
	return echo(pvc, out, err)
}

func (a echoAPI) UpdateClaimStatus(ctx context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	out, err := a.API.UpdateClaimStatus(ctx, pvc)
	return echo(pvc, out, err)
}

func echo[T interface {
	*v1.PersistentVolume | *v1.PersistentVolumeClaim
	metav1.Object
}](in, out T, err error) (T, error) {
	if err != nil {
		return nil, err
	}
	in.SetResourceVersion(out.GetResourceVersion())
	return in, nil
}

// TestRequestsAnsweredWithThemselves binds pairs on an API that answers
// with the objects it is sent, and checks that the Binder's caches keep
// them intact (a recycled request would be cleared, then overwritten by
// the next binding's).
func TestRequestsAnsweredWithThemselves(t *testing.T) {
	e := newEnv(t, newPV("pv1", "1Gi"), newPV("pv2", "2Gi"), newPVC("claim1", "1Gi"), newPVC("claim2", "2Gi"))
	b, err := New(echoAPI{e.srv}, Config{Clock: e.fc})
	if err != nil {
		t.Fatal(err)
	}
	e.register(b)
	for _, c := range []string{"claim1", "claim2"} {
		if err := b.SyncClaim(e.ctx, ns+"/"+c); err != nil {
			t.Fatalf("SyncClaim(%s): %v", c, err)
		}
	}
	for i, name := range []string{"pv1", "pv2"} {
		pv, ok := b.store.volume(name)
		claimName := []string{"claim1", "claim2"}[i]
		if !ok || pv.Name != name || pv.Status.Phase != v1.VolumeBound || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.Name != claimName {
			t.Errorf("cached volume %s = %+v, want it Bound to %s", name, pv, claimName)
		}
		claim, ok := b.store.claim(ns + "/" + claimName)
		if !ok || claim.Name != claimName || claim.Status.Phase != v1.ClaimBound || claim.Spec.VolumeName != name {
			t.Errorf("cached claim %s = %+v, want it Bound to %s", claimName, claim, name)
		}
	}
}
