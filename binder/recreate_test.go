package binder

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/volbind/volbind/binder/bindertest"
)

// TestRecreatedWhileWatchIsSlow: a claim (or a volume) is deleted and
// re-created under the same name while its watch is slow but in order.
// The Binder's write on the old object conflicts and its re-read caches
// the new one; then the old object's delete event and the new one's create
// event arrive. The delete event of the old UID must neither remove the
// new object nor block its own event: the new object is synced (the claim
// is bound, the volume made Available).
func TestRecreatedWhileWatchIsSlow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		kind bindertest.Kind
		objs []*v1.PersistentVolume
		// old is seeded; recreate deletes it and creates the new object,
		// returning its UID.
		old       *v1.PersistentVolumeClaim
		oldPV     *v1.PersistentVolume
		recreate  func(e *env) types.UID
		cachedUID func(b *Binder) types.UID
		check     func(t *testing.T, e *env, uid types.UID)
	}{{
		name: "claim",
		kind: bindertest.KindClaim,
		objs: []*v1.PersistentVolume{newPV("pv2", "5Gi")},
		// Nothing matches 100Gi: its sync clears the stale status.
		old: newPVC("claim1", "100Gi", pvcStaleStatus),
		recreate: func(e *env) types.UID {
			if err := e.srv.DeleteClaim(e.ctx, ns, "claim1"); err != nil {
				e.t.Fatal(err)
			}
			pvc, err := e.srv.CreateClaim(e.ctx, newPVC("claim1", "5Gi", func(pvc *v1.PersistentVolumeClaim) { pvc.UID = "" }))
			if err != nil {
				e.t.Fatal(err)
			}
			return pvc.UID
		},
		cachedUID: func(b *Binder) types.UID {
			if pvc, ok := b.store.claim(ns + "/claim1"); ok {
				return pvc.UID
			}
			return ""
		},
		check: func(t *testing.T, e *env, uid types.UID) {
			pvc := e.claim("claim1")
			if pvc.UID != uid || pvc.Status.Phase != v1.ClaimBound || pvc.Spec.VolumeName != "pv2" {
				t.Errorf("re-created claim %s is %s with volume %q, want claim %s Bound to pv2", pvc.UID, pvc.Status.Phase, pvc.Spec.VolumeName, uid)
			}
		},
	}, {
		name:  "volume",
		kind:  bindertest.KindVolume,
		oldPV: newPV("pv1", "5Gi", pvPhase(v1.VolumePending)),
		recreate: func(e *env) types.UID {
			if err := e.srv.DeleteVolume(e.ctx, "pv1"); err != nil {
				e.t.Fatal(err)
			}
			pv, err := e.srv.CreateVolume(e.ctx, newPV("pv1", "5Gi", func(pv *v1.PersistentVolume) { pv.UID = "" }, pvPhase(v1.VolumePending)))
			if err != nil {
				e.t.Fatal(err)
			}
			return pv.UID
		},
		cachedUID: func(b *Binder) types.UID {
			if pv, ok := b.store.volume("pv1"); ok {
				return pv.UID
			}
			return ""
		},
		check: func(t *testing.T, e *env, uid types.UID) {
			pv := e.volume("pv1")
			if pv.UID != uid || pv.Status.Phase != v1.VolumeAvailable {
				t.Errorf("re-created volume %s is %s, want volume %s Available", pv.UID, pv.Status.Phase, uid)
			}
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var seed []runtime.Object
			for _, pv := range tc.objs {
				seed = append(seed, pv)
			}
			if tc.old != nil {
				seed = append(seed, tc.old)
			}
			if tc.oldPV != nil {
				seed = append(seed, tc.oldPV)
			}
			e := newEnv(t, seed...)
			b := e.b // registered, not running: it knows the old object
			resume := e.srv.StallWatches(tc.kind)
			uid := tc.recreate(e)
			e.run(b)
			// The sync of the old object conflicts and reads the new one.
			if err := wait.PollUntilContextTimeout(e.ctx, time.Millisecond, wait.ForeverTestTimeout, true,
				func(context.Context) (bool, error) { return tc.cachedUID(b) == uid, nil }); err != nil {
				t.Fatalf("the Binder never read the re-created object: %v", err)
			}
			if e.srv.Stats().Conflicts == 0 {
				t.Fatal("no write conflicted: the test must make the Binder read the new object after a conflict")
			}
			resume() // the old object's delete event, then the new one's create
			e.settle(b)
			tc.check(t, e, uid)
		})
	}
}

// TestGoneVolumeIsForgotten: the Binder's cache holds a volume the API
// server no longer has, and its delete event never comes (a relist that
// reported only the deletion of an older volume of that name). A claim
// that chooses it gets NotFound for its write; the Binder forgets the
// volume, and the claim's next sync binds it to another one.
func TestGoneVolumeIsForgotten(t *testing.T) {
	t.Parallel()
	e := newEnv(t, newPV("pv1", "1Gi"), newPV("pv2", "5Gi"), newPVC("claim1", "1Gi"))
	b := e.b
	resume := e.srv.StallWatches(bindertest.KindVolume)
	defer resume()
	if err := e.srv.DeleteVolume(e.ctx, "pv1"); err != nil {
		t.Fatal(err)
	}
	if err := b.SyncClaim(e.ctx, ns+"/claim1"); err == nil {
		t.Fatal("first sync succeeded, want the NotFound answer to the write of pv1, which the cache still holds")
	}
	if _, ok := b.store.volume("pv1"); ok {
		t.Error("pv1 is still cached after the server answered NotFound")
	}
	if err := b.SyncClaim(e.ctx, ns+"/claim1"); err != nil {
		t.Fatalf("second sync: %v", err)
	}
	if pvc := e.claim("claim1"); pvc.Status.Phase != v1.ClaimBound || pvc.Spec.VolumeName != "pv2" {
		t.Errorf("claim1 is %s with volume %q, want Bound to pv2", pvc.Status.Phase, pvc.Spec.VolumeName)
	}
}

// TestRecreatedAndDeletedUnseen: an object is deleted, re-created under
// its name and deleted again while its watch is down. The Binder learned
// the second object from a read and bound it with its own writes; no event
// of it ever comes, and the informer's relist reports only the first
// object's deletion (a DeletedFinalStateUnknown of the old UID). That
// event must not remove the second object, but the Binder must not keep it
// for ever either: the key's next sync reads it, gets NotFound, and
// forgets it, so that the volume of a deleted claim is released and the
// claim of a deleted volume is lost (chaos seed 354727: a volume stayed
// Bound to a claim that no longer existed).
func TestRecreatedAndDeletedUnseen(t *testing.T) {
	t.Parallel()
	t.Run("claim", func(t *testing.T) {
		t.Parallel()
		// The old claim's stale status makes its sync write, conflict with
		// the re-created claim and read it.
		e := newEnv(t, newPV("pv1", "1Gi"), newPVC("claim1", "100Gi", pvcStaleStatus))
		b := e.b
		resume := e.srv.StallWatches(bindertest.KindClaim)
		defer resume()
		old := e.claim("claim1")
		recreateClaim(e, newPVC("claim1", "1Gi", func(pvc *v1.PersistentVolumeClaim) { pvc.UID = "" }))
		syncUntil(e, func() error { return b.SyncClaim(e.ctx, ns+"/claim1") }, func() bool {
			pvc, ok := b.store.claim(ns + "/claim1")
			return ok && pvc.UID != old.UID && pvc.Spec.VolumeName == "pv1" && pvc.Status.Phase == v1.ClaimBound
		})
		if err := e.srv.DeleteClaim(e.ctx, ns, "claim1"); err != nil {
			t.Fatal(err)
		}
		b.ClaimHandler().OnDelete(toolscache.DeletedFinalStateUnknown{Key: ns + "/claim1", Obj: old})
		if _, ok := b.store.claim(ns + "/claim1"); !ok {
			t.Fatal("the old claim's delete event removed the re-created claim from the cache")
		}
		syncUntil(e, func() error { return b.SyncClaim(e.ctx, ns+"/claim1") }, func() bool {
			_, ok := b.store.claim(ns + "/claim1")
			return !ok
		})
		wantReleased(e, b, "pv1")
	})
	t.Run("volume", func(t *testing.T) {
		t.Parallel()
		// The old volume's Pending phase makes its sync write, conflict
		// with the re-created volume and read it.
		e := newEnv(t, newPV("pv1", "1Gi", pvPhase(v1.VolumePending)),
			newPVC("claim1", "1Gi", pvcBound("pv1")))
		b := e.b
		resume := e.srv.StallWatches(bindertest.KindVolume)
		defer resume()
		old := e.volume("pv1")
		if err := e.srv.DeleteVolume(e.ctx, "pv1"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.srv.CreateVolume(e.ctx, newPV("pv1", "1Gi", func(pv *v1.PersistentVolume) { pv.UID = "" },
			boundTo("claim1", "uid-claim1"))); err != nil {
			t.Fatal(err)
		}
		syncUntil(e, func() error { return b.SyncVolume(e.ctx, "pv1") }, func() bool {
			pv, ok := b.store.volume("pv1")
			return ok && pv.UID != old.UID && pv.Status.Phase == v1.VolumeBound
		})
		if err := e.srv.DeleteVolume(e.ctx, "pv1"); err != nil {
			t.Fatal(err)
		}
		b.VolumeHandler().OnDelete(toolscache.DeletedFinalStateUnknown{Key: "pv1", Obj: old})
		if _, ok := b.store.volume("pv1"); !ok {
			t.Fatal("the old volume's delete event removed the re-created volume from the cache")
		}
		syncUntil(e, func() error { return b.SyncVolume(e.ctx, "pv1") }, func() bool {
			_, ok := b.store.volume("pv1")
			return !ok
		})
		wantLost(e, b, "claim1")
	})
}

// recreateClaim deletes claim1 on the server and creates pvc in its place.
func recreateClaim(e *env, pvc *v1.PersistentVolumeClaim) {
	e.t.Helper()
	if err := e.srv.DeleteClaim(e.ctx, ns, pvc.Name); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.srv.CreateClaim(e.ctx, pvc); err != nil {
		e.t.Fatal(err)
	}
}

// syncUntil runs sync (whose errors are the retries the test expects: a
// conflict, a NotFound) until done holds, at most 10 times.
func syncUntil(e *env, sync func() error, done func() bool) {
	e.t.Helper()
	for range 10 {
		if done() {
			return
		}
		_ = sync()
	}
	if !done() {
		e.t.Fatal("the syncs never reached the state the test needs")
	}
}

// wantReleased syncs the volume and checks that it is Released: its claim
// is gone.
func wantReleased(e *env, b *Binder, name string) {
	e.t.Helper()
	if err := b.SyncVolume(e.ctx, name); err != nil {
		e.t.Fatal(err)
	}
	if pv := e.volume(name); pv.Status.Phase != v1.VolumeReleased {
		e.t.Errorf("%s is %s, want Released: its claim is gone", name, pv.Status.Phase)
	}
}

// wantLost syncs the claim and checks that it is Lost: its volume is gone.
func wantLost(e *env, b *Binder, name string) {
	e.t.Helper()
	if err := b.SyncClaim(e.ctx, ns+"/"+name); err != nil {
		e.t.Fatal(err)
	}
	if pvc := e.claim(name); pvc.Status.Phase != v1.ClaimLost {
		e.t.Errorf("%s is %s, want Lost: its volume is gone", name, pvc.Status.Phase)
	}
}
