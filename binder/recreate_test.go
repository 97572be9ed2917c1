package binder

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

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
