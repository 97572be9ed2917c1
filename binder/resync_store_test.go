package binder

import (
	"slices"
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

// resyncKeys returns the keys the Binder's resyncs would add now, claims
// and volumes: what its caches hold, read a shard at a time.
func resyncKeys(b *Binder) (claims, volumes []string) {
	for i := range b.work.cfg.shards {
		claims = b.work.cfg.claimKeys(i, claims)
		volumes = b.work.cfg.volumeKeys(i, volumes)
	}
	return claims, volumes
}

// The resyncs keep no registry of their own: an object is resynced while
// the Binder's cache holds it, however it got there (an event, or a read
// or a write before any event), and no longer once its deletion is
// handled; a re-created one is resynced again.
func TestResyncWalksTheStore(t *testing.T) {
	t.Parallel()
	e, b, pv, pvc := runUnregistered(t)
	resynced := func(step string, want bool) {
		t.Helper()
		claims, volumes := resyncKeys(b)
		wantClaims, wantVolumes := []string{}, []string{}
		if want {
			wantClaims, wantVolumes = []string{ns + "/claim"}, []string{"pv"}
		}
		if !slices.Equal(claims, wantClaims) || !slices.Equal(volumes, wantVolumes) {
			t.Errorf("%s: resynced claims %q, volumes %q; want %q, %q", step, claims, volumes, wantClaims, wantVolumes)
		}
	}
	if rs := b.work.run.Load(); rs == nil || rs.claimResync == nil || rs.volumeResync == nil {
		t.Fatal("Run made no resyncs with a resync period of a minute")
	}
	if b.work.cfg.shards != minResyncPeriod {
		t.Errorf("the caches have %d shards; Config.ResyncPeriod's minimum says %d", b.work.cfg.shards, minResyncPeriod)
	}
	resynced("before any event", false)
	b.keepVolume(e.ctx, pv)
	b.keepClaim(e.ctx, pvc)
	resynced("learned from a read", true)
	b.VolumeHandler().OnAdd(pv, false)
	b.ClaimHandler().OnAdd(pvc, false)
	resynced("then added by events", true)

	if err := e.srv.DeleteVolume(e.ctx, "pv"); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.DeleteClaim(e.ctx, ns, "claim"); err != nil {
		t.Fatal(err)
	}
	b.VolumeHandler().OnDelete(pv)
	b.ClaimHandler().OnDelete(pvc)
	resynced("deleted", false)

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
	resynced("re-created", true)
	e.settle(b)
}
