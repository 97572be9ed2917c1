package binder

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/volbind/volbind/binder/bindertest"
)

// TestReorderedDeleteIsVerifiedAgain: a claim is deleted and re-created
// under its name, and a reordered watch delivers the new claim's add event
// before the old claim's delete. An informer then holds no object under
// the name (it deletes by key), so it drops the new claim's own delete
// event when it comes. The verification read that the old UID's delete
// event asks for finds the new claim, which the Binder has bound; the
// claim is then deleted and its event never arrives. The Binder must read
// the key again at a resync period and forget the claim, so that its
// volume is released (chaos seed 611924: the volume stayed Bound to a
// deleted claim). An event of the new claim shows that the informer holds
// it again and ends the reads.
func TestReorderedDeleteIsVerifiedAgain(t *testing.T) {
	t.Parallel()
	// setup binds the re-created claim after the reordered events and
	// returns the env with the claim watch stalled from the re-creation on.
	setup := func(t *testing.T) (*env, *v1.PersistentVolumeClaim) {
		e := newEnv(t, newPV("pv1", "1Gi"), newPVC("claim1", "1Gi"))
		b := e.b
		t.Cleanup(e.srv.StallWatches(bindertest.KindClaim))
		old := e.claim("claim1")
		recreateClaim(e, newPVC("claim1", "1Gi", func(pvc *v1.PersistentVolumeClaim) { pvc.UID = "" }))
		fresh := e.claim("claim1")
		b.ClaimHandler().OnAdd(fresh, false) // the reordered watch: add first
		syncUntil(e, func() error { return b.SyncClaim(e.ctx, ns+"/claim1") }, func() bool {
			pvc, ok := b.store.claim(ns + "/claim1")
			return ok && pvc.UID == fresh.UID && pvc.Status.Phase == v1.ClaimBound
		})
		b.ClaimHandler().OnDelete(old) // then the old claim's delete
		reads := e.srv.Stats().Reads[bindertest.KindClaim]
		if err := b.SyncClaim(e.ctx, ns+"/claim1"); err != nil {
			t.Fatal(err)
		}
		if got := e.srv.Stats().Reads[bindertest.KindClaim] - reads; got != 1 {
			t.Fatalf("the sync after the old claim's delete event read the claim %d times, want 1", got)
		}
		if pvc, ok := b.store.claim(ns + "/claim1"); !ok || pvc.UID != fresh.UID {
			t.Fatal("the verification read lost the re-created claim, which the server holds")
		}
		return e, fresh
	}
	t.Run("deleted unseen", func(t *testing.T) {
		t.Parallel()
		e, _ := setup(t)
		b := e.b
		if err := e.srv.DeleteClaim(e.ctx, ns, "claim1"); err != nil {
			t.Fatal(err)
		}
		if err := b.SyncClaim(e.ctx, ns+"/claim1"); err != nil {
			t.Fatal(err)
		}
		if _, ok := b.store.claim(ns + "/claim1"); !ok {
			t.Fatal("a sync before the resync period read the claim again")
		}
		e.fc.Step(DefaultResyncPeriod)
		if err := b.SyncClaim(e.ctx, ns+"/claim1"); err != nil {
			t.Fatal(err)
		}
		if _, ok := b.store.claim(ns + "/claim1"); ok {
			t.Fatal("the deleted claim is still cached a resync period after the verification read")
		}
		if err := b.SyncVolume(e.ctx, "pv1"); err != nil {
			t.Fatal(err)
		}
		if pv := e.volume("pv1"); pv.Status.Phase != v1.VolumeReleased {
			t.Errorf("pv1 is %s, want Released: its claim is gone", pv.Status.Phase)
		}
	})
	t.Run("event ends the reads", func(t *testing.T) {
		t.Parallel()
		e, fresh := setup(t)
		b := e.b
		b.ClaimHandler().OnUpdate(fresh, e.claim("claim1"))
		e.fc.Step(DefaultResyncPeriod)
		reads := e.srv.Stats().Reads[bindertest.KindClaim]
		if err := b.SyncClaim(e.ctx, ns+"/claim1"); err != nil {
			t.Fatal(err)
		}
		if got := e.srv.Stats().Reads[bindertest.KindClaim] - reads; got != 0 {
			t.Errorf("the sync after an event of the claim read it %d times, want 0: the informer holds it", got)
		}
	})
}

// TestReorderedVolumeDeleteIsVerifiedAgain is
// TestReorderedDeleteIsVerifiedAgain for a volume: the re-created volume,
// bound by the Binder after the reordered events and then deleted unseen,
// is forgotten a resync period after the verification read found it, and
// its claim becomes Lost.
func TestReorderedVolumeDeleteIsVerifiedAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t, newPV("pv1", "1Gi"), newPVC("claim1", "1Gi"))
	b := e.b
	t.Cleanup(e.srv.StallWatches(bindertest.KindVolume))
	old := e.volume("pv1")
	if err := e.srv.DeleteVolume(e.ctx, "pv1"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.srv.CreateVolume(e.ctx, newPV("pv1", "1Gi", func(pv *v1.PersistentVolume) { pv.UID = "" })); err != nil {
		t.Fatal(err)
	}
	fresh := e.volume("pv1")
	b.VolumeHandler().OnAdd(fresh, false) // the reordered watch: add first
	syncUntil(e, func() error {
		_ = b.SyncVolume(e.ctx, "pv1")
		return b.SyncClaim(e.ctx, ns+"/claim1")
	}, func() bool {
		pv, ok := b.store.volume("pv1")
		return ok && pv.UID == fresh.UID && pv.Status.Phase == v1.VolumeBound
	})
	b.VolumeHandler().OnDelete(old) // then the old volume's delete
	reads := e.srv.Stats().Reads[bindertest.KindVolume]
	if err := b.SyncVolume(e.ctx, "pv1"); err != nil {
		t.Fatal(err)
	}
	if got := e.srv.Stats().Reads[bindertest.KindVolume] - reads; got != 1 {
		t.Fatalf("the sync after the old volume's delete event read the volume %d times, want 1", got)
	}
	if err := e.srv.DeleteVolume(e.ctx, "pv1"); err != nil {
		t.Fatal(err)
	}
	if err := b.SyncVolume(e.ctx, "pv1"); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.store.volume("pv1"); !ok {
		t.Fatal("a sync before the resync period read the volume again")
	}
	e.fc.Step(DefaultResyncPeriod)
	if err := b.SyncVolume(e.ctx, "pv1"); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.store.volume("pv1"); ok {
		t.Fatal("the deleted volume is still cached a resync period after the verification read")
	}
	if err := b.SyncClaim(e.ctx, ns+"/claim1"); err != nil {
		t.Fatal(err)
	}
	if pvc := e.claim("claim1"); pvc.Status.Phase != v1.ClaimLost {
		t.Errorf("claim1 is %s, want Lost: its volume is gone", pvc.Status.Phase)
	}
}
