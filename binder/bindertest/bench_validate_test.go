package bindertest_test

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/binder/bindertest"
)

// BenchmarkValidate measures the validation of a create (Validate, which
// Create and Seed run) of the objects volbind simulate generates: a zonal
// CSI volume with topology labels and node affinity, and a claim of a
// storage class. Validate copies the object and applies the API's
// defaults first, as a create does.
func BenchmarkValidate(b *testing.B) {
	zone := "zone-a"
	for _, c := range []struct {
		kind string
		obj  runtime.Object
	}{
		{"volume", &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "pv-000042", Labels: map[string]string{v1.LabelTopologyZone: zone, v1.LabelTopologyRegion: "region-1"}},
			Spec: v1.PersistentVolumeSpec{
				Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Gi")},
				AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				StorageClassName:              "class-1",
				PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
				PersistentVolumeSource: v1.PersistentVolumeSource{
					CSI: &v1.CSIPersistentVolumeSource{Driver: "disk.csi.example.com", VolumeHandle: "vol-000042"},
				},
				NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
					MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{zone}}},
				}}}},
			},
		}},
		{"claim", &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "claim-000042", Namespace: "ns-07"},
			Spec: v1.PersistentVolumeClaimSpec{
				AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("8Gi")}},
				StorageClassName: ptr.To("class-1"),
			},
		}},
	} {
		b.Run("kind="+c.kind, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := bindertest.Validate(c.obj); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSharedVolumes lists a store of n volumes in name order without
// copying them, as volbind simulate's report does.
func BenchmarkSharedVolumes(b *testing.B) {
	benchmarkShared(b, "volumes", func(i, n int) runtime.Object {
		return newVolume(fmt.Sprintf("pv-%07d", (i*7919)%n), "1Gi")
	}, func(s *bindertest.Server) int { return len(s.SharedVolumes()) })
}

// BenchmarkSharedClaims lists a store of n claims spread over 20
// namespaces, as volbind simulate generates them, in key order
// ("namespace/name") without copying them, as its report does.
func BenchmarkSharedClaims(b *testing.B) {
	benchmarkShared(b, "claims", func(i, n int) runtime.Object {
		j := (i * 7919) % n
		return newClaim(fmt.Sprintf("ns-%02d", j%20), fmt.Sprintf("claim-%07d", j), "1Gi")
	}, func(s *bindertest.Server) int { return len(s.SharedClaims()) })
}

// benchmarkShared seeds n objects made by object (from the object's index
// and n) for each size and lists them with list, which returns how many it
// listed.
func benchmarkShared(b *testing.B, kind string, object func(i, n int) runtime.Object, list func(*bindertest.Server) int) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("%s=%d", kind, n), func(b *testing.B) {
			s, _ := newServer(b)
			objs := make([]runtime.Object, n)
			for i := range objs {
				objs[i] = object(i, n)
			}
			if err := s.Seed(b.Context(), objs...); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if got := list(s); got != n {
					b.Fatalf("%d %s listed, want %d", got, kind, n)
				}
			}
		})
	}
}
