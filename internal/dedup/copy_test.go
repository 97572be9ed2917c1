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

// TestCopyOfSharedValue: a value the Table returned, sent back, is
// returned as it is (an API sharing its answers gets them back from its
// clients); a shorter slice of a shared access-mode list is not that list.
func TestCopyOfSharedValue(t *testing.T) {
	var tab Table
	rl := tab.CopyResources(v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")})
	if got := tab.CopyResources(rl); !samePointer(got, rl) {
		t.Errorf("CopyResources of a shared list = a new list, want the shared one")
	}
	ann := tab.CopyStrings(map[string]string{"a": "1"})
	if got := tab.CopyStrings(ann); !samePointer(got, ann) {
		t.Errorf("CopyStrings of a shared map = a new map, want the shared one")
	}
	modes := tab.CopyAccessModes([]v1.PersistentVolumeAccessMode{v1.ReadWriteOnce, v1.ReadOnlyMany})
	if got := tab.CopyAccessModes(modes); &got[0] != &modes[0] || len(got) != 2 {
		t.Errorf("CopyAccessModes of a shared list = %v, want the shared one", got)
	}
	if got := tab.CopyAccessModes(modes[:1]); len(got) != 1 || got[0] != v1.ReadWriteOnce || &got[0] == &modes[0] {
		t.Errorf("CopyAccessModes of the first mode of a shared list = %v (the list's storage: %v), want a list of its own", got, &got[0] == &modes[0])
	}
}

// TestCopyStringsOfChangedMap: a caller that sends its own map again gets
// the shared map equal to what the map holds now, whatever it changed in
// between (CopyStrings remembers the maps it was sent last).
func TestCopyStringsOfChangedMap(t *testing.T) {
	var tab Table
	own := map[string]string{"a": "1", "b": "2"}
	first := tab.CopyStrings(own)
	if again := tab.CopyStrings(own); !samePointer(again, first) {
		t.Errorf("CopyStrings of the same unchanged map = a new map, want the shared one")
	}
	own["a"] = "changed"
	changed := tab.CopyStrings(own)
	if samePointer(changed, first) || !maps.Equal(changed, own) {
		t.Errorf("CopyStrings of the changed map = %v, want a map equal to %v", changed, own)
	}
	if first["a"] != "1" {
		t.Errorf("the shared map changed with the caller's: %v", first)
	}
	delete(own, "b")
	if got := tab.CopyStrings(own); !maps.Equal(got, own) {
		t.Errorf("CopyStrings after a delete = %v, want %v", got, own)
	}
	own["a"], own["b"] = "1", "2"
	if got := tab.CopyStrings(own); !samePointer(got, first) {
		t.Errorf("CopyStrings of the map changed back = %v, want the first shared map", got)
	}
}
