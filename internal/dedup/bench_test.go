package dedup

import (
	"maps"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// BenchmarkShare: Share of claims that carry their own copies of common
// parts (two labels, two annotations, one request, access modes; status
// with capacity and modes), as an informer's transform sees them. Every
// Share builds the keys of all those parts, whether or not it writes.
func BenchmarkShare(b *testing.B) {
	const n = 1024
	pvcs := make([]*v1.PersistentVolumeClaim, n)
	for i := range pvcs {
		pvc := &v1.PersistentVolumeClaim{}
		pvc.Labels = map[string]string{"app": "web", "tier": "data"}
		pvc.Annotations = map[string]string{
			"pv.kubernetes.io/bind-completed":      "yes",
			"pv.kubernetes.io/bound-by-controller": "yes",
		}
		pvc.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
		pvc.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Gi")}
		pvc.Status.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
		pvc.Status.Capacity = v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Gi")}
		pvcs[i] = pvc
	}
	var tab Table
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		tab.Share(pvcs[i%n], All)
		i++
	}
}

// BenchmarkCopy: the Copy methods on what an in-memory API server's
// clients send. arg=shared is a value the Table returned before, as a
// client sends back what its API shared with it (a binder's claim status
// takes the bound volume's capacity and access modes); arg=equal is the
// client's own equal copy.
func BenchmarkCopy(b *testing.B) {
	var tab Table
	capacity := v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Gi")}
	modes := []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
	annotations := map[string]string{
		"pv.kubernetes.io/bind-completed":      "yes",
		"pv.kubernetes.io/bound-by-controller": "yes",
	}
	shared := map[string]func(){
		"resources": func() { capacity = tab.CopyResources(capacity) },
		"modes":     func() { modes = tab.CopyAccessModes(modes) },
		"strings":   func() { annotations = tab.CopyStrings(annotations) },
	}
	for _, kind := range []string{"resources", "modes", "strings"} {
		share := shared[kind]
		b.Run("kind="+kind+"/arg=shared", func(b *testing.B) {
			share()
			b.ReportAllocs()
			for b.Loop() {
				share()
			}
		})
	}
	b.Run("kind=resources/arg=equal", func(b *testing.B) {
		own := capacity.DeepCopy()
		b.ReportAllocs()
		for b.Loop() {
			tab.CopyResources(own)
		}
	})
	b.Run("kind=strings/arg=equal", func(b *testing.B) {
		own := maps.Clone(annotations)
		b.ReportAllocs()
		for b.Loop() {
			tab.CopyStrings(own)
		}
	})
}
