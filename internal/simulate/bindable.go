package simulate

import (
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/internal/manifest"

	v1 "k8s.io/api/core/v1"
)

// bindableClaims counts the claims of objs that the run may bind, for the
// progress line: claims not Bound yet whose class (if any) exists and that
// either name an existing volume or ask for no more than the largest
// volume of their class. It is an upper bound: access modes, selectors
// and competing claims may still leave some Pending.
func bindableClaims(objs *manifest.Objects) int {
	classes := make(map[string]bool, len(objs.Classes))
	for _, sc := range objs.Classes {
		classes[sc.Name] = true
	}
	largest := make(map[string]resource.Quantity)
	names := make(map[string]bool, len(objs.Volumes))
	for _, pv := range objs.Volumes {
		names[pv.Name] = true
		class := volume.GetPersistentVolumeClass(pv)
		q, ok := pv.Spec.Capacity[v1.ResourceStorage]
		if cur, seen := largest[class]; ok && (!seen || q.Cmp(cur) > 0) {
			largest[class] = q
		}
	}
	n := 0
	for _, pvc := range objs.Claims {
		if pvc.Status.Phase == v1.ClaimBound {
			continue
		}
		class := volume.GetPersistentVolumeClaimClass(pvc)
		if class != "" && !classes[class] {
			continue
		}
		if pvc.Spec.VolumeName != "" {
			if names[pvc.Spec.VolumeName] {
				n++
			}
			continue
		}
		req := pvc.Spec.Resources.Requests[v1.ResourceStorage]
		if max, ok := largest[class]; ok && req.Cmp(max) <= 0 {
			n++
		}
	}
	return n
}
