package binder

import (
	"testing"
	"time"
)

// An object the Binder learned from its own write or read, before any
// event, is resynced like one learned from an event: the write tracks it,
// and the event of the same version that comes later (not newer, so only
// the informer's copy is swapped in) need not.
func TestObjectsLearnedFromWritesAreResynced(t *testing.T) {
	t.Parallel()
	e := newEnv(t, newPV("pv", "1Gi"), newPVC("claim", "5Gi"))
	// Not registered with the server: no event reaches this Binder but
	// the ones the test hands its handlers.
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
