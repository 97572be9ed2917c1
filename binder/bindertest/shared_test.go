package bindertest_test

import (
	"context"
	"testing"

	"github.com/volbind/volbind/binder/bindertest"

	v1 "k8s.io/api/core/v1"
)

// TestSharedListsAreStoredVersions checks that SharedVolumes and
// SharedClaims return the stored versions themselves, sorted, and that a
// later write stores a new version instead of changing the one returned.
func TestSharedListsAreStoredVersions(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t)
	if err := s.Seed(ctx, newVolume("pv-b", "1Gi"), newVolume("pv-a", "2Gi"), newClaim("ns", "c2", "1Gi"), newClaim("ns", "c1", "1Gi")); err != nil {
		t.Fatalf("Seed = %v", err)
	}
	vols, claims := s.SharedVolumes(), s.SharedClaims()
	if got := names(vols); len(got) != 2 || got[0] != "pv-a" || got[1] != "pv-b" {
		t.Fatalf("SharedVolumes() = %v, want pv-a, pv-b", got)
	}
	if got := names(claims); len(got) != 2 || got[0] != "c1" || got[1] != "c2" {
		t.Fatalf("SharedClaims() = %v, want c1, c2", got)
	}
	if again := s.SharedVolumes(); again[0] != vols[0] {
		t.Errorf("SharedVolumes() returned a new object for pv-a; want the stored version")
	}
	if again := s.SharedClaims(); again[1] != claims[1] {
		t.Errorf("SharedClaims() returned a new object for c2; want the stored version")
	}

	pv := vols[0].DeepCopy()
	pv.Status.Phase = v1.VolumeAvailable
	if _, err := s.UpdateVolumeStatus(ctx, pv); err != nil {
		t.Fatalf("UpdateVolumeStatus = %v", err)
	}
	if vols[0].Status.Phase == v1.VolumeAvailable {
		t.Errorf("a status update changed the version SharedVolumes returned")
	}
	if got := s.SharedVolumes()[0]; got == vols[0] || got.Status.Phase != v1.VolumeAvailable {
		t.Errorf("SharedVolumes() after the update = %s (same object %v), want the new Available version", got.Status.Phase, got == vols[0])
	}
}

// TestSharedResults checks that with Config.SharedResults the writes and
// reads return the stored version itself (what SharedVolumes and handlers
// see), and that without it they return copies the caller owns.
func TestSharedResults(t *testing.T) {
	ctx := context.Background()
	for _, shared := range []bool{false, true} {
		s, _ := newServerWith(t, bindertest.Config{SharedResults: shared})
		created := mustCreateVolume(t, s, newVolume("pv-1", "1Gi"))
		pv := created.DeepCopy()
		pv.Status.Phase = v1.VolumeAvailable
		updated, err := s.UpdateVolumeStatus(ctx, pv)
		if err != nil {
			t.Fatalf("shared=%v: UpdateVolumeStatus = %v", shared, err)
		}
		got, err := s.GetVolume(ctx, "pv-1")
		if err != nil {
			t.Fatalf("shared=%v: GetVolume = %v", shared, err)
		}
		stored := s.SharedVolumes()[0]
		for _, r := range []struct {
			request string
			obj     *v1.PersistentVolume
		}{{"UpdateVolumeStatus", updated}, {"GetVolume", got}} {
			if (r.obj == stored) != shared {
				t.Errorf("shared=%v: %s returned the stored version: %v, want %v", shared, r.request, r.obj == stored, shared)
			}
		}
		if pv == updated {
			t.Errorf("shared=%v: UpdateVolumeStatus returned its argument", shared)
		}
		if !shared {
			got.Labels = map[string]string{"changed": "by the caller"}
			if s.SharedVolumes()[0].Labels["changed"] != "" {
				t.Errorf("a change of GetVolume's result reached the stored version")
			}
		}
	}
}

// TestAdoptSeeds checks that with Config.AdoptSeeds Seed stores the objects
// it is given (with its resourceVersion and defaults set in them), and that
// without it it stores copies and leaves the objects as they were.
func TestAdoptSeeds(t *testing.T) {
	ctx := context.Background()
	for _, adopt := range []bool{false, true} {
		s, _ := newServerWith(t, bindertest.Config{AdoptSeeds: adopt})
		pv := newVolume("pv-1", "1Gi")
		if err := s.Seed(ctx, pv); err != nil {
			t.Fatalf("adopt=%v: Seed = %v", adopt, err)
		}
		stored := s.SharedVolumes()[0]
		if (stored == pv) != adopt {
			t.Errorf("adopt=%v: the stored version is the seeded object: %v, want %v", adopt, stored == pv, adopt)
		}
		if stored.ResourceVersion == "" || stored.Status.Phase != v1.VolumePending {
			t.Errorf("adopt=%v: stored version has resourceVersion %q and phase %q, want one and Pending", adopt, stored.ResourceVersion, stored.Status.Phase)
		}
		if !adopt && (pv.ResourceVersion != "" || pv.Status.Phase != "") {
			t.Errorf("Seed without AdoptSeeds changed its argument: resourceVersion %q, phase %q", pv.ResourceVersion, pv.Status.Phase)
		}
	}
}
