package binder

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// runUnregistered runs, on a server holding volume pv and claim claim, a
// Binder that is not registered with the server (no event reaches it but
// the ones a test hands its handlers), and returns both objects as stored.
func runUnregistered(t *testing.T) (*env, *Binder, *v1.PersistentVolume, *v1.PersistentVolumeClaim) {
	t.Helper()
	e := newEnv(t, newPV("pv", "1Gi"), newPVC("claim", "5Gi"))
	b, err := New(newResultCheck(t, e.srv), Config{Clock: e.fc, ResyncPeriod: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	e.run(b)
	pv, err := e.srv.GetVolume(e.ctx, "pv")
	if err != nil {
		t.Fatal(err)
	}
	pvc, err := e.srv.GetClaim(e.ctx, ns, "claim")
	if err != nil {
		t.Fatal(err)
	}
	return e, b, pv, pvc
}

// An object the Binder learned from its own write or read, before any
// event, is resynced like one learned from an event: the write tracks it,
// and the event of the same version that comes later (not newer, so only
// the informer's copy is swapped in) need not.
func TestObjectsLearnedFromWritesAreResynced(t *testing.T) {
	t.Parallel()
	e, b, pv, pvc := runUnregistered(t)
	b.keepVolume(e.ctx, pv)
	b.keepClaim(e.ctx, pvc)
	b.VolumeHandler().OnAdd(pv, false)
	b.ClaimHandler().OnAdd(pvc, false)
	e.settle(b)

	rs := b.work.run.Load()
	if got := rs.volumeResync.Offset("pv"); got < 0 {
		t.Error("volume pv, learned from a read, is not in the volume resync")
	}
	if got := rs.claimResync.Offset(ns + "/claim"); got < 0 {
		t.Error("claim default/claim, learned from a read, is not in the claim resync")
	}
}

// An object is registered for resync when the cache first holds it, and
// stays registered through its updates (the events no longer look the
// name up in the resync); its deletion unregisters it, its re-creation
// registers it again. An object re-created under the name and cached by
// a worker while the deletion was handled stays registered.
func TestEventsRegisterResyncOnce(t *testing.T) {
	t.Parallel()
	e, b, pv, pvc := runUnregistered(t)
	rs := b.work.run.Load()
	registered := func(step string, wantPV, wantClaim bool) {
		t.Helper()
		if got := rs.volumeResync.Offset("pv") >= 0; got != wantPV {
			t.Errorf("%s: volume pv registered = %v, want %v", step, got, wantPV)
		}
		if got := rs.claimResync.Offset(ns+"/claim") >= 0; got != wantClaim {
			t.Errorf("%s: claim registered = %v, want %v", step, got, wantClaim)
		}
	}
	registered("before any event", false, false)
	b.VolumeHandler().OnAdd(pv, false)
	b.ClaimHandler().OnAdd(pvc, false)
	registered("added", true, true)

	pv2 := pv.DeepCopy()
	pv2.Labels = map[string]string{"updated": "yes"}
	pv2, err := e.srv.UpdateVolume(e.ctx, pv2)
	if err != nil {
		t.Fatal(err)
	}
	pvc2 := pvc.DeepCopy()
	pvc2.Labels = map[string]string{"updated": "yes"}
	if pvc2, err = e.srv.UpdateClaim(e.ctx, pvc2); err != nil {
		t.Fatal(err)
	}
	b.VolumeHandler().OnUpdate(pv, pv2)
	b.ClaimHandler().OnUpdate(pvc, pvc2)
	registered("updated", true, true)

	if err := e.srv.DeleteVolume(e.ctx, "pv"); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.DeleteClaim(e.ctx, ns, "claim"); err != nil {
		t.Fatal(err)
	}
	b.VolumeHandler().OnDelete(pv2)
	b.ClaimHandler().OnDelete(pvc2)
	registered("deleted", false, false)

	pv3, err := e.srv.CreateVolume(e.ctx, newPV("pv", "1Gi"))
	if err != nil {
		t.Fatal(err)
	}
	pvc3, err := e.srv.CreateClaim(e.ctx, newPVC("claim", "5Gi"))
	if err != nil {
		t.Fatal(err)
	}
	b.VolumeHandler().OnAdd(pv3, false)
	b.ClaimHandler().OnAdd(pvc3, false)
	registered("re-created", true, true)

	// A worker caches the re-created objects (keepVolume registers them
	// while the old names still are) just before the handler of the old
	// deletion unregisters the names.
	b.forgetVolume("pv")
	b.forgetClaim(ns + "/claim")
	registered("deletion handled after a worker cached the re-created objects", true, true)
	e.settle(b)
}
