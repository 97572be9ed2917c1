package bindertest_test

import (
	"context"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// samePointer reports whether two maps or slices share their storage.
func samePointer(a, b any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// TestStoredVersionsShareEqualMaps checks that the Server stores one copy
// of equal capacities, annotations and access modes, that maps differing
// in their wire form stay apart, and that what a client
// reads back is what it wrote.
func TestStoredVersionsShareEqualMaps(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t)
	a, b, c := newVolume("pv-a", "1Gi"), newVolume("pv-b", "1Gi"), newVolume("pv-c", "2Gi")
	for _, pv := range []*v1.PersistentVolume{a, b, c} {
		pv.Annotations = map[string]string{"example.com/tier": "fast"}
	}
	c.Annotations["example.com/tier"] = "slow"
	a.Spec.NodeAffinity, b.Spec.NodeAffinity, c.Spec.NodeAffinity = zoneAffinity("zone-a"), zoneAffinity("zone-a"), zoneAffinity("zone-b")
	if err := s.Seed(ctx, a, b, c, newClaim("ns", "c1", "1Gi"), newClaim("ns", "c2", "1Gi")); err != nil {
		t.Fatalf("Seed = %v", err)
	}
	vols := s.SharedVolumes()
	if !samePointer(vols[0].Spec.Capacity, vols[1].Spec.Capacity) || !samePointer(vols[0].Annotations, vols[1].Annotations) ||
		!samePointer(vols[0].Spec.AccessModes, vols[2].Spec.AccessModes) {
		t.Errorf("pv-a and pv-b do not share their equal capacity, annotations and access modes")
	}
	if vols[0].Spec.NodeAffinity != vols[1].Spec.NodeAffinity || vols[0].Spec.NodeAffinity == vols[2].Spec.NodeAffinity {
		t.Errorf("node affinities: pv-a and pv-b (zone-a) share %v, pv-a and pv-c (zone-b) share %v; want true, false",
			vols[0].Spec.NodeAffinity == vols[1].Spec.NodeAffinity, vols[0].Spec.NodeAffinity == vols[2].Spec.NodeAffinity)
	}
	if got := vols[2].Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values; len(got) != 1 || got[0] != "zone-b" {
		t.Errorf("pv-c's zone = %q, want zone-b", got)
	}
	if samePointer(vols[0].Spec.Capacity, vols[2].Spec.Capacity) || samePointer(vols[0].Annotations, vols[2].Annotations) {
		t.Errorf("pv-a and pv-c share a capacity (1Gi, 2Gi) or annotations (fast, slow) that differ")
	}
	claims := s.SharedClaims()
	if !samePointer(claims[0].Spec.Resources.Requests, claims[1].Spec.Resources.Requests) {
		t.Errorf("c1 and c2 do not share their equal requests")
	}

	// An update stores the new version's maps shared too, and each
	// object reads back as written.
	pv, err := s.GetVolume(ctx, "pv-c")
	if err != nil {
		t.Fatalf("GetVolume = %v", err)
	}
	pv.Annotations["example.com/tier"] = "fast"
	if _, err := s.UpdateVolume(ctx, pv); err != nil {
		t.Fatalf("UpdateVolume = %v", err)
	}
	vols = s.SharedVolumes()
	if !samePointer(vols[0].Annotations, vols[2].Annotations) {
		t.Errorf("pv-c updated to pv-a's annotations does not share them")
	}
	for _, tc := range []struct{ name, size, tier string }{{"pv-a", "1Gi", "fast"}, {"pv-b", "1Gi", "fast"}, {"pv-c", "2Gi", "fast"}} {
		got, err := s.GetVolume(ctx, tc.name)
		if err != nil {
			t.Fatalf("GetVolume(%q) = %v", tc.name, err)
		}
		size := got.Spec.Capacity[v1.ResourceStorage]
		if size.String() != tc.size || got.Annotations["example.com/tier"] != tc.tier {
			t.Errorf("GetVolume(%q) = capacity %s, tier %q; want %s, %q", tc.name, size.String(), got.Annotations["example.com/tier"], tc.size, tc.tier)
		}
		// The copy a client gets is its own: changing it changes no
		// other object.
		got.Annotations["example.com/tier"] = "changed"
		delete(got.Spec.Capacity, v1.ResourceStorage)
	}
	if got := s.SharedVolumes()[1]; got.Annotations["example.com/tier"] != "fast" || len(got.Spec.Capacity) != 1 {
		t.Errorf("pv-b's tier = %q, capacity %v after clients changed their copies, want fast and 1Gi", got.Annotations["example.com/tier"], got.Spec.Capacity)
	}
}

func zoneAffinity(zone string) *v1.VolumeNodeAffinity {
	return &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{zone}}},
	}}}}
}
