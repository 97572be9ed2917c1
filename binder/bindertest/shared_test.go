package bindertest_test

import (
	"context"
	"testing"

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
