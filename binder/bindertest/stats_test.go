package bindertest_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/volbind/volbind/binder/bindertest"
)

func TestStats(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t)
	if err := s.Seed(ctx, newClass("gold")); err != nil {
		t.Fatalf("Seed = %v", err)
	}
	pv := mustCreateVolume(t, s, newVolume("pv1", "1Gi"))
	stale := pv.DeepCopy()
	pv.Status.Phase = v1.VolumeAvailable
	if _, err := s.UpdateVolumeStatus(ctx, pv); err != nil {
		t.Fatalf("UpdateVolumeStatus = %v", err)
	}
	stale.Labels = map[string]string{"a": "b"}
	if _, err := s.UpdateVolume(ctx, stale); err == nil {
		t.Fatalf("stale UpdateVolume succeeded")
	}
	if _, err := s.GetVolume(ctx, "pv1"); err != nil {
		t.Fatalf("GetVolume = %v", err)
	}
	c := mustCreateClaim(t, s, newClaim("ns", "c1", "1Gi"))
	if _, err := s.UpdateClaim(ctx, c); err != nil { // no-op: still a request
		t.Fatalf("UpdateClaim = %v", err)
	}
	if err := s.DeleteClaim(ctx, "ns", "c1"); err != nil {
		t.Fatalf("DeleteClaim = %v", err)
	}
	_ = s.List(bindertest.KindVolume) // not counted

	want := bindertest.Stats{
		Writes: map[bindertest.Kind]map[bindertest.Verb]int64{
			bindertest.KindVolume: {bindertest.VerbCreate: 1, bindertest.VerbUpdateStatus: 1, bindertest.VerbUpdate: 1},
			bindertest.KindClaim:  {bindertest.VerbCreate: 1, bindertest.VerbUpdate: 1, bindertest.VerbDelete: 1},
		},
		Reads:     map[bindertest.Kind]int64{bindertest.KindVolume: 1},
		Conflicts: 1,
	}
	got := s.Stats()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Stats() (-want +got):\n%s", diff)
	}
	if got.TotalWrites() != 6 {
		t.Errorf("TotalWrites() = %d, want 6", got.TotalWrites())
	}
	s.ResetStats()
	if diff := cmp.Diff(bindertest.Stats{Writes: map[bindertest.Kind]map[bindertest.Verb]int64{}, Reads: map[bindertest.Kind]int64{}}, s.Stats()); diff != "" {
		t.Errorf("Stats() after ResetStats (-want +got):\n%s", diff)
	}
}
