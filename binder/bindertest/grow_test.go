package bindertest

import (
	"fmt"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestGrowOutlastsSeeds checks that seeds in chunks after Grow store into
// the map Grow made, instead of making a smaller one again for each chunk
// (which undid Grow before).
func TestGrowOutlastsSeeds(t *testing.T) {
	s := New()
	s.Grow(KindVolume, 10_000)
	made := reflect.ValueOf(s.objs[KindVolume]).UnsafePointer()
	for chunk := range 5 {
		objs := make([]runtime.Object, 2000)
		for i := range objs {
			objs[i] = &v1.PersistentVolume{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pv-%d-%d", chunk, i)},
				Spec: v1.PersistentVolumeSpec{
					Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
					AccessModes:            []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
					PersistentVolumeSource: v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/tmp/pv"}},
				},
			}
		}
		if err := s.Seed(t.Context(), objs...); err != nil {
			t.Fatal(err)
		}
		if reflect.ValueOf(s.objs[KindVolume]).UnsafePointer() != made {
			t.Fatalf("seed %d made the store's map again after Grow sized it", chunk)
		}
	}
	if n := len(s.Volumes()); n != 10_000 {
		t.Fatalf("%d volumes stored, want 10000", n)
	}
}
