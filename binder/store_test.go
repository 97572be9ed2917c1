package binder

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/volbind/volbind/internal/pvindex"
)

func withRV[T interface{ SetResourceVersion(string) }](obj T, rv string) T {
	obj.SetResourceVersion(rv)
	return obj
}

// TestStoreTombstones: the answer of a write that raced with a deletion
// must not bring the object back; a re-created object must get in.
func TestStoreTombstones(t *testing.T) {
	t.Parallel()
	s := newStore(testingclock.NewFakePassiveClock(time.Unix(0, 0)), pvindex.Options{})
	for _, step := range []struct {
		name       string
		do         func() (bool, error)
		wantStored bool
		wantCached bool
		wantIndex  bool
	}{
		{"add v5", func() (bool, error) { return s.storeVolume(withRV(newPV("pv1", "1Gi"), "5")) }, true, true, true},
		{"stale v4", func() (bool, error) { return s.storeVolume(withRV(newPV("pv1", "1Gi"), "4")) }, false, true, true},
		{"equal v5", func() (bool, error) { return s.storeVolume(withRV(newPV("pv1", "1Gi"), "5")) }, false, true, true},
		{"delete at v7", func() (bool, error) { s.deleteVolume(withRV(newPV("pv1", "1Gi"), "7")); return false, nil }, false, false, false},
		{"late write answer v6", func() (bool, error) { return s.storeVolume(withRV(newPV("pv1", "1Gi"), "6")) }, false, false, false},
		{"re-created v8", func() (bool, error) { return s.storeVolume(withRV(newPV("pv1", "1Gi"), "8")) }, true, true, true},
		{"bad version", func() (bool, error) {
			stored, err := s.storeVolume(withRV(newPV("pv1", "1Gi"), "x"))
			if err == nil {
				t.Errorf("storeVolume(rv x): no error")
			}
			return stored, nil
		}, false, true, true},
		{"malformed v9 leaves the index", func() (bool, error) { return s.storeVolume(withRV(newPV("pv1", "1Gi", pvNoCapacity), "9")) }, true, true, false},
	} {
		stored, err := step.do()
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		_, cached := s.volume("pv1")
		_, indexed := s.index.Get("pv1")
		if stored != step.wantStored || cached != step.wantCached || indexed != step.wantIndex {
			t.Errorf("%s: stored %v cached %v indexed %v, want %v %v %v", step.name, stored, cached, indexed,
				step.wantStored, step.wantCached, step.wantIndex)
		}
	}

	if ok, _ := s.storeClaim(withRV(newPVC("claim1", "1Gi"), "3")); !ok {
		t.Fatal("storeClaim v3 not stored")
	}
	s.deleteClaim(withRV(newPVC("claim1", "1Gi"), "2")) // the cached v3 is newer: tombstone at 3
	if ok, _ := s.storeClaim(withRV(newPVC("claim1", "1Gi"), "3")); ok {
		t.Error("claim v3 stored again after its deletion")
	}
	if ok, _ := s.storeClaim(withRV(newPVC("claim1", "1Gi"), "4")); !ok {
		t.Error("re-created claim v4 not stored")
	}
}

// newHandlerBinder returns a Binder that is not running, for tests that
// feed its handlers by hand, with its volume and claim handlers.
func newHandlerBinder(t *testing.T) (*Binder, toolscache.ResourceEventHandler, toolscache.ResourceEventHandler) {
	t.Helper()
	b, err := New(newEnv(t).srv, Config{})
	if err != nil {
		t.Fatal(err)
	}
	return b, b.VolumeHandler(), b.ClaimHandler()
}

// TestHandlers: handlers ignore foreign objects, unwrap
// DeletedFinalStateUnknown and keep only newer versions.
// TestStoreTombstonesExpire: the tombstones of deletions older than
// tombstoneTTL are dropped as new deletions come, in every stripe, while
// recent ones keep blocking stale versions. A stripe sweeps once its
// tombstones reach twice the count of its last sweep, so four times as
// many new deletions as old ones make every stripe sweep (its share of the
// new ones exceeds its share of the old ones far beyond the hash's spread).
func TestStoreTombstonesExpire(t *testing.T) {
	t.Parallel()
	clk := testingclock.NewFakePassiveClock(time.Unix(0, 0))
	s := newStore(clk, pvindex.Options{})
	const n = 4096
	for i := range n {
		s.deleteVolume(withRV(newPV(fmt.Sprintf("old-%d", i), "1Gi"), "5"))
	}
	clk.SetTime(clk.Now().Add(tombstoneTTL + time.Second))
	for i := range 4 * n {
		s.deleteVolume(withRV(newPV(fmt.Sprintf("new-%d", i), "1Gi"), "9"))
	}
	old, recent := 0, 0
	for i := range s.stripes {
		for k := range s.stripes[i].Value.volumes.tombs {
			if strings.HasPrefix(k, "old-") {
				old++
			} else {
				recent++
			}
		}
	}
	if recent != 4*n {
		t.Errorf("%d recent tombstones kept, want %d", recent, 4*n)
	}
	if old != 0 {
		t.Errorf("%d of %d expired tombstones kept, want none", old, n)
	}
	if stored, err := s.storeVolume(withRV(newPV("new-7", "1Gi"), "8")); stored || err != nil {
		t.Errorf("a version older than a recent deletion: stored %v, %v; want refused", stored, err)
	}
}

func TestHandlers(t *testing.T) {
	t.Parallel()
	b, vh, ch := newHandlerBinder(t)
	var nilPV *v1.PersistentVolume
	for _, obj := range []runtime.Object{nilPV, newPVC("x", "1Gi"), &v1.Pod{}} {
		vh.OnAdd(obj, false)
		vh.OnDelete(obj)
	}
	ch.OnAdd(newPV("x", "1Gi"), false)
	if b.store.volumes.Len() != 0 || b.store.claims.Len() != 0 {
		t.Fatalf("foreign objects cached")
	}
	vh.OnAdd(withRV(newPV("pv1", "1Gi"), "10"), true)
	vh.OnUpdate(nil, withRV(newPV("pv1", "2Gi"), "9"))
	if pv, _ := b.store.volume("pv1"); pv.ResourceVersion != "10" {
		t.Errorf("cached version %s, want 10", pv.ResourceVersion)
	}
	vh.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "pv1", Obj: withRV(newPV("pv1", "1Gi"), "10")})
	if _, ok := b.store.volume("pv1"); ok {
		t.Errorf("volume still cached after DeletedFinalStateUnknown")
	}
	ch.OnAdd(withRV(newPVC("claim1", "1Gi"), "3"), true)
	ch.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "default/claim1", Obj: withRV(newPVC("claim1", "1Gi"), "3")})
	if _, ok := b.store.claim("default/claim1"); ok {
		t.Errorf("claim still cached after DeletedFinalStateUnknown")
	}
}

// TestHandlersShareWrittenVersion: once the event of the Binder's own write
// arrives, the caches hold the informer's copy of that version, not the
// write's answer (one object per version in memory); an answer that comes
// after its event does not replace the informer's copy, and an event of
// another version shares nothing.
func TestHandlersShareWrittenVersion(t *testing.T) {
	t.Parallel()
	b, vh, ch := newHandlerBinder(t)
	ctx := t.Context()

	answer, event := withRV(newPV("pv1", "1Gi"), "10"), withRV(newPV("pv1", "1Gi"), "10")
	b.keepVolume(ctx, answer)
	vh.OnUpdate(nil, event)
	if got, _ := b.store.volume("pv1"); got != event {
		t.Errorf("cached volume after its event = the write's answer (%v), want the informer's copy", got == answer)
	}
	if got, _ := b.store.index.Get("pv1"); got != event {
		t.Errorf("indexed volume after its event = the write's answer (%v), want the informer's copy", got == answer)
	}
	b.keepVolume(ctx, withRV(newPV("pv1", "1Gi"), "10")) // a late answer of the same version
	if got, _ := b.store.volume("pv1"); got != event {
		t.Errorf("a late answer of the cached version replaced the informer's copy")
	}
	newer := withRV(newPV("pv1", "1Gi"), "12")
	b.keepVolume(ctx, newer)
	vh.OnUpdate(nil, withRV(newPV("pv1", "1Gi"), "11")) // a stale event
	if got, _ := b.store.volume("pv1"); got != newer {
		t.Errorf("a stale event replaced the newer answer")
	}

	claimAnswer, claimEvent := withRV(newPVC("claim1", "1Gi"), "3"), withRV(newPVC("claim1", "1Gi"), "3")
	b.keepClaim(ctx, claimAnswer)
	ch.OnUpdate(nil, claimEvent)
	if got, _ := b.store.claim("default/claim1"); got != claimEvent {
		t.Errorf("cached claim after its event = the write's answer (%v), want the informer's copy", got == claimAnswer)
	}
}
