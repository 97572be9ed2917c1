package dedup

import (
	"fmt"
	"reflect"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func samePointer(a, b any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func volume(size string, labels map[string]string, values ...string) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: v1.PersistentVolumeSpec{
			Capacity:    v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: values}},
			}}}},
		},
	}
}

// TestShareKeepsContentsApart checks that Share shares equal parts and
// never two parts that differ, also when the strings of one could be
// joined into the other's.
func TestShareKeepsContentsApart(t *testing.T) {
	var tab Table
	a := volume("1Gi", map[string]string{"a": "b"}, "x", "y")
	b := volume("1Gi", map[string]string{"a": "b"}, "x", "y")
	c := volume("2Gi", map[string]string{"a": "b\x00"}, "x\x00y")
	d := volume("1Gi", map[string]string{"a\x00b": ""}, "xy")
	for _, pv := range []*v1.PersistentVolume{a, b, c, d} {
		tab.Share(pv, All)
	}
	if !samePointer(a.Spec.Capacity, b.Spec.Capacity) || !samePointer(a.Labels, b.Labels) ||
		a.Spec.NodeAffinity != b.Spec.NodeAffinity || !samePointer(a.Spec.AccessModes, d.Spec.AccessModes) {
		t.Errorf("equal volumes a and b share capacity %v, labels %v, affinity %v; want all shared",
			samePointer(a.Spec.Capacity, b.Spec.Capacity), samePointer(a.Labels, b.Labels), a.Spec.NodeAffinity == b.Spec.NodeAffinity)
	}
	for name, pv := range map[string]*v1.PersistentVolume{"c": c, "d": d} {
		if samePointer(a.Labels, pv.Labels) || a.Spec.NodeAffinity == pv.Spec.NodeAffinity {
			t.Errorf("volume %s shares labels (%v) or node affinity (%v) with a; they differ", name, pv.Labels, pv.Spec.NodeAffinity.Required.NodeSelectorTerms)
		}
	}
	if samePointer(a.Spec.Capacity, c.Spec.Capacity) {
		t.Errorf("1Gi and 2Gi share one capacity map")
	}
	if q := c.Spec.Capacity[v1.ResourceStorage]; q.String() != "2Gi" {
		t.Errorf("c's capacity = %s, want 2Gi", q.String())
	}
}

// TestShareParts checks that Share leaves the parts it was not asked to
// look at as they are.
func TestShareParts(t *testing.T) {
	var tab Table
	first := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"k": "v"}},
		Status:     v1.PersistentVolumeClaimStatus{Capacity: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
	}
	tab.Share(first, All)
	meta := first.DeepCopy()
	tab.Share(meta, MetaSpec)
	if !samePointer(meta.Annotations, first.Annotations) || samePointer(meta.Status.Capacity, first.Status.Capacity) {
		t.Errorf("Share(MetaSpec): annotations shared %v, status capacity shared %v; want true, false",
			samePointer(meta.Annotations, first.Annotations), samePointer(meta.Status.Capacity, first.Status.Capacity))
	}
	status := first.DeepCopy()
	tab.Share(status, Status)
	if samePointer(status.Annotations, first.Annotations) || !samePointer(status.Status.Capacity, first.Status.Capacity) {
		t.Errorf("Share(Status): annotations shared %v, status capacity shared %v; want false, true",
			samePointer(status.Annotations, first.Annotations), samePointer(status.Status.Capacity, first.Status.Capacity))
	}
}

// TestShareConcurrent runs Share from several goroutines, as informers'
// transforms do; run with -race.
func TestShareConcurrent(t *testing.T) {
	var tab Table
	var wg sync.WaitGroup
	out := make([]*v1.PersistentVolume, 8)
	for i := range out {
		wg.Go(func() {
			pv := volume(fmt.Sprintf("%dGi", 1+i%2), map[string]string{"zone": "a"}, "a")
			tab.Share(pv, All)
			out[i] = pv
		})
	}
	wg.Wait()
	for i, pv := range out {
		if !samePointer(pv.Labels, out[0].Labels) || !samePointer(pv.Spec.Capacity, out[i%2].Spec.Capacity) {
			t.Errorf("volume %d does not share the labels of volume 0 or the capacity of volume %d", i, i%2)
		}
	}
}

// TestShareAgainWritesNothing checks that Share of an object whose parts
// are shared already does not write them (an informer may hand a cached
// object, which others read, to its transform again); run with -race.
func TestShareAgainWritesNothing(t *testing.T) {
	var tab Table
	pv := volume("1Gi", map[string]string{"zone": "a"}, "a")
	tab.Share(pv, All)
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 100 {
			_ = len(pv.Labels) + len(pv.Spec.Capacity) + len(pv.Spec.AccessModes)
			_ = pv.Spec.NodeAffinity.Required
		}
	})
	for range 100 {
		tab.Share(pv, All)
	}
	wg.Wait()
}

// TestSharePointers: equal class names and volume modes of volumes and
// claims end up behind one pointer each, different ones do not.
func TestSharePointers(t *testing.T) {
	var tab Table
	mode := func(m v1.PersistentVolumeMode) *v1.PersistentVolumeMode { return &m }
	str := func(s string) *string { return &s }
	claim := func(class string, m v1.PersistentVolumeMode) *v1.PersistentVolumeClaim {
		return &v1.PersistentVolumeClaim{Spec: v1.PersistentVolumeClaimSpec{StorageClassName: str(class), VolumeMode: mode(m),
			VolumeAttributesClassName: str("vac")}}
	}
	a, b, c := claim("gold", v1.PersistentVolumeFilesystem), claim("gold", v1.PersistentVolumeFilesystem), claim("silver", v1.PersistentVolumeBlock)
	pv := &v1.PersistentVolume{Spec: v1.PersistentVolumeSpec{VolumeMode: mode(v1.PersistentVolumeFilesystem), VolumeAttributesClassName: str("vac")}}
	for _, o := range []runtime.Object{a, b, c, pv} {
		tab.Share(o, All)
	}
	if a.Spec.StorageClassName != b.Spec.StorageClassName || a.Spec.VolumeMode != b.Spec.VolumeMode ||
		a.Spec.VolumeMode != pv.Spec.VolumeMode || a.Spec.VolumeAttributesClassName != pv.Spec.VolumeAttributesClassName {
		t.Errorf("equal class names and volume modes are not shared")
	}
	if a.Spec.StorageClassName == c.Spec.StorageClassName || a.Spec.VolumeMode == c.Spec.VolumeMode ||
		*c.Spec.StorageClassName != "silver" || *c.Spec.VolumeMode != v1.PersistentVolumeBlock {
		t.Errorf("different class names or volume modes share a pointer: %s %s", *c.Spec.StorageClassName, *c.Spec.VolumeMode)
	}
}
