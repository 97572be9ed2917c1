package dedup

import (
	"fmt"
	"maps"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestCopyNeverRetainsArgument: the Copy methods share equal values, and
// what they return is never the caller's value, so that the caller may
// modify it afterwards without changing what the Table shares.
func TestCopyNeverRetainsArgument(t *testing.T) {
	var tab Table
	first := map[string]string{"a": "1", "b": "2"}
	shared := tab.CopyStrings(first)
	if samePointer(shared, first) {
		t.Fatalf("CopyStrings returned its argument")
	}
	first["a"] = "changed"
	if shared["a"] != "1" {
		t.Errorf("CopyStrings' result changed with its argument: %v", shared)
	}
	if again := tab.CopyStrings(map[string]string{"b": "2", "a": "1"}); !samePointer(again, shared) {
		t.Errorf("CopyStrings of an equal map = a new map, want the shared one")
	}
	if other := tab.CopyStrings(map[string]string{"a": "1", "b": "3"}); samePointer(other, shared) || other["b"] != "3" {
		t.Errorf("CopyStrings of a different map = %v (shared %v), want its own copy", other, samePointer(other, shared))
	}

	big := make(map[string]string)
	for i := range maxInternedEntries + 1 {
		big[fmt.Sprint(i)] = "x"
	}
	if c := tab.CopyStrings(big); samePointer(c, big) || !maps.Equal(c, big) || samePointer(c, tab.CopyStrings(big)) {
		t.Errorf("CopyStrings of a map too large to share: want a new copy each time")
	}

	l := v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}
	rl := tab.CopyResources(l)
	if samePointer(rl, l) {
		t.Fatalf("CopyResources returned its argument")
	}
	l[v1.ResourceStorage] = resource.MustParse("2Gi")
	if q := rl[v1.ResourceStorage]; q.String() != "1Gi" {
		t.Errorf("CopyResources' result changed with its argument: %s", q.String())
	}
	if again := tab.CopyResources(v1.ResourceList{v1.ResourceStorage: resource.MustParse("1024Mi")}); !samePointer(again, rl) {
		t.Errorf("CopyResources of an equal quantity written differently = a new list, want the shared one")
	}

	modes := []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
	m := tab.CopyAccessModes(modes)
	if &m[0] == &modes[0] {
		t.Fatalf("CopyAccessModes returned its argument")
	}
	if again := tab.CopyAccessModes([]v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}); &again[0] != &m[0] {
		t.Errorf("CopyAccessModes of an equal list = a new list, want the shared one")
	}

	a := volume("1Gi", nil, "x").Spec.NodeAffinity
	na := tab.CopyNodeAffinity(a)
	if na == a {
		t.Fatalf("CopyNodeAffinity returned its argument")
	}
	a.Required.NodeSelectorTerms[0].MatchExpressions[0].Values[0] = "changed"
	if v := na.Required.NodeSelectorTerms[0].MatchExpressions[0].Values[0]; v != "x" {
		t.Errorf("CopyNodeAffinity's result changed with its argument: %q", v)
	}
	if again := tab.CopyNodeAffinity(volume("1Gi", nil, "x").Spec.NodeAffinity); again != na {
		t.Errorf("CopyNodeAffinity of an equal affinity = a new one, want the shared one")
	}

	for name, got := range map[string]bool{
		"CopyStrings(nil)":      tab.CopyStrings(nil) == nil,
		"CopyResources(nil)":    tab.CopyResources(nil) == nil,
		"CopyAccessModes(nil)":  tab.CopyAccessModes(nil) == nil,
		"CopyNodeAffinity(nil)": tab.CopyNodeAffinity(nil) == nil,
		"CopyStrings(empty)":    tab.CopyStrings(map[string]string{}) != nil,
	} {
		if !got {
			t.Errorf("%s: nil must stay nil and empty must stay non-nil", name)
		}
	}
}
