package binder

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"

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
	setup := func(t *testing.T) (e *env, old, fresh *v1.PersistentVolumeClaim) {
		e = newEnv(t, newPV("pv1", "1Gi"), newPVC("claim1", "1Gi"))
		b := e.b
		t.Cleanup(e.srv.StallWatches(bindertest.KindClaim))
		old = e.claim("claim1")
		recreateClaim(e, newPVC("claim1", "1Gi", func(pvc *v1.PersistentVolumeClaim) { pvc.UID = "" }))
		fresh = e.claim("claim1")
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
		return e, old, fresh
	}
	t.Run("deleted unseen", func(t *testing.T) {
		t.Parallel()
		e, _, _ := setup(t)
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
		wantReleased(e, b, "pv1")
	})
	t.Run("event ends the reads", func(t *testing.T) {
		t.Parallel()
		e, _, fresh := setup(t)
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
	t.Run("event during the read ends the reads", func(t *testing.T) {
		t.Parallel()
		e, _, fresh := setup(t)
		e.fc.Step(DefaultResyncPeriod)
		current := e.claim("claim1")
		heldClaimRead(e, func() { e.b.ClaimHandler().OnUpdate(fresh, current) })
		e.fc.Step(DefaultResyncPeriod)
		if got := claimReads(e); got != 0 {
			t.Errorf("a resync period after a read during which an event of the claim came, the sync read it %d times, want 0", got)
		}
	})
	t.Run("delete during the read asks for another", func(t *testing.T) {
		t.Parallel()
		e, old, _ := setup(t)
		e.fc.Step(DefaultResyncPeriod)
		heldClaimRead(e, func() { e.b.ClaimHandler().OnDelete(old) })
		if got := claimReads(e); got != 1 {
			t.Errorf("right after a read during which a delete event of another UID came, the sync read the claim %d times, want 1", got)
		}
	})
}

// heldClaimRead runs a sync of claim1 whose verification read the server
// holds until during has run, and checks that it read the claim once.
func heldClaimRead(e *env, during func()) {
	e.t.Helper()
	const latency = time.Second
	e.srv.InjectFault(bindertest.Fault{Verb: bindertest.VerbGet, Kind: bindertest.KindClaim, Latency: latency, Times: 1})
	reads := e.srv.Stats().Reads[bindertest.KindClaim]
	done := make(chan error, 1)
	go func() { done <- e.b.SyncClaim(e.ctx, ns+"/claim1") }()
	if err := wait.PollUntilContextTimeout(e.ctx, time.Millisecond, wait.ForeverTestTimeout, true,
		func(context.Context) (bool, error) { return e.fc.HasWaiters(), nil }); err != nil {
		e.t.Fatalf("the sync never read the claim: %v", err)
	}
	during()
	e.fc.Step(latency)
	if err := <-done; err != nil {
		e.t.Fatal(err)
	}
	if got := e.srv.Stats().Reads[bindertest.KindClaim] - reads; got != 1 {
		e.t.Fatalf("the held sync read the claim %d times, want 1", got)
	}
}

// claimReads runs a sync of claim1 and returns how often it read the claim.
func claimReads(e *env) int64 {
	e.t.Helper()
	reads := e.srv.Stats().Reads[bindertest.KindClaim]
	if err := e.b.SyncClaim(e.ctx, ns+"/claim1"); err != nil {
		e.t.Fatal(err)
	}
	return e.srv.Stats().Reads[bindertest.KindClaim] - reads
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
	wantLost(e, b, "claim1")
}
