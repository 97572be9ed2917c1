package bindertest

import (
	"fmt"
	"reflect"
	"testing"
	"unsafe"

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
	made := reflect.ValueOf(s.objs[KindVolume].byNS[""]).UnsafePointer()
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
		if reflect.ValueOf(s.objs[KindVolume].byNS[""]).UnsafePointer() != made {
			t.Fatalf("seed %d made the store's map again after Grow sized it", chunk)
		}
	}
	if n := len(s.Volumes()); n != 10_000 {
		t.Fatalf("%d volumes stored, want 10000", n)
	}
}

// TestGrowSpreadsOverNamespaces checks that Grow's room for a namespaced
// kind goes to the namespaces of the next seed in its proportions: seeds
// in chunks then store into the maps that seed made, one per namespace.
func TestGrowSpreadsOverNamespaces(t *testing.T) {
	s := New()
	s.Grow(KindClaim, 20_000)
	namespaces := []string{"ns-0", "ns-1", "ns-2", "ns-3"}
	made := map[string]unsafe.Pointer{}
	for chunk := range 5 {
		objs := make([]runtime.Object, 4000)
		for i := range objs {
			objs[i] = &v1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{Namespace: namespaces[i%len(namespaces)], Name: fmt.Sprintf("claim-%d-%d", chunk, i)},
				Spec: v1.PersistentVolumeClaimSpec{
					AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
					Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}
		}
		if err := s.Seed(t.Context(), objs...); err != nil {
			t.Fatal(err)
		}
		for _, ns := range namespaces {
			m := reflect.ValueOf(s.objs[KindClaim].byNS[ns]).UnsafePointer()
			if chunk == 0 {
				made[ns] = m
			} else if m != made[ns] {
				t.Fatalf("seed %d made namespace %s's map again after the first seed sized it", chunk, ns)
			}
		}
	}
	if got := s.objs[KindClaim].reserved["ns-0"]; got != 5000 {
		t.Fatalf("namespace ns-0 reserved for %d claims, want 5000 (a quarter of the room)", got)
	}
	if n := len(s.Claims()); n != 20_000 {
		t.Fatalf("%d claims stored, want 20000", n)
	}
}

// TestSeedReservesClusterScopedAsOne checks that a seed of a cluster-scoped
// kind reserves room for all its objects in the one map they are stored
// in, those given a stray namespace included (the server clears it).
func TestSeedReservesClusterScopedAsOne(t *testing.T) {
	s := New()
	objs := make([]runtime.Object, 1500)
	for i := range objs {
		pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pv-%d", i)}}
		if i%2 == 0 {
			pv.Namespace = "stray"
		}
		objs[i] = pv
	}
	if err := s.SeedInvalid(t.Context(), objs...); err != nil {
		t.Fatal(err)
	}
	if got := s.objs[KindVolume].reserved[""]; got != len(objs) {
		t.Fatalf("room reserved for %d volumes, want %d", got, len(objs))
	}
}
