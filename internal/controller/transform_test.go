package controller

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/volbind/volbind/internal/dedup"
)

// TestCacheTransform checks that the controller's informer transform
// drops managedFields and makes equal capacities and labels of different
// objects one shared map, and passes tombstones through.
func TestCacheTransform(t *testing.T) {
	transform := cacheTransform(&dedup.Table{})
	decoded := func(name, size string) *v1.PersistentVolume {
		return &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"zone": "a"},
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
			Spec: v1.PersistentVolumeSpec{Capacity: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
		}
	}
	var out []*v1.PersistentVolume
	for _, pv := range []*v1.PersistentVolume{decoded("a", "1Gi"), decoded("b", "1Gi"), decoded("c", "2Gi")} {
		got, err := transform(pv)
		if err != nil {
			t.Fatalf("transform(%s) = %v", pv.Name, err)
		}
		out = append(out, got.(*v1.PersistentVolume))
	}
	ptr := func(m any) uintptr { return reflect.ValueOf(m).Pointer() }
	if out[0].ManagedFields != nil {
		t.Errorf("managedFields = %v, want none", out[0].ManagedFields)
	}
	if ptr(out[0].Labels) != ptr(out[2].Labels) || ptr(out[0].Spec.Capacity) != ptr(out[1].Spec.Capacity) {
		t.Errorf("equal labels or capacities of a, b and c are not shared")
	}
	if ptr(out[0].Spec.Capacity) == ptr(out[2].Spec.Capacity) {
		t.Errorf("1Gi and 2Gi share one capacity map")
	}
	tomb := toolscache.DeletedFinalStateUnknown{Key: "a", Obj: out[0]}
	if got, err := transform(tomb); err != nil || got != tomb {
		t.Errorf("transform(tombstone) = %v, %v; want it unchanged", got, err)
	}
}
