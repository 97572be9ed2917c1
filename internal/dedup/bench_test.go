package dedup

import (
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
