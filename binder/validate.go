package binder

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volbind/volbind/cache"
)

// knownAccessMode reports whether m is one of the four access modes.
func knownAccessMode(m v1.PersistentVolumeAccessMode) bool {
	switch m {
	case v1.ReadWriteOnce, v1.ReadOnlyMany, v1.ReadWriteMany, v1.ReadWriteOncePod:
		return true
	}
	return false
}

// validateVolume returns an *InvalidObjectError when the volume cannot take
// part in binding: no storage capacity, a negative one, or an unknown
// access mode. The API server's validation rejects such volumes; a Binder
// fed by another source must not trust that.
func validateVolume(pv *v1.PersistentVolume) error {
	q, ok := pv.Spec.Capacity[v1.ResourceStorage]
	switch {
	case !ok:
		return invalidVolume(pv, "no storage capacity")
	case q.Sign() < 0:
		return invalidVolume(pv, fmt.Sprintf("negative storage capacity %s", q.String()))
	}
	for _, m := range pv.Spec.AccessModes {
		if !knownAccessMode(m) {
			return invalidVolume(pv, fmt.Sprintf("unknown access mode %q", m))
		}
	}
	return nil
}

// validateClaim returns an *InvalidObjectError when the claim cannot be
// matched: a negative storage request, an unknown access mode or a label
// selector that does not parse. A claim without a request asks for zero
// bytes, as in Kubernetes.
func validateClaim(pvc *v1.PersistentVolumeClaim) error {
	if q, ok := pvc.Spec.Resources.Requests[v1.ResourceStorage]; ok && q.Sign() < 0 {
		return invalidClaim(pvc, fmt.Sprintf("negative storage request %s", q.String()))
	}
	for _, m := range pvc.Spec.AccessModes {
		if !knownAccessMode(m) {
			return invalidClaim(pvc, fmt.Sprintf("unknown access mode %q", m))
		}
	}
	if pvc.Spec.Selector != nil {
		if _, err := metav1.LabelSelectorAsSelector(pvc.Spec.Selector); err != nil {
			return invalidClaim(pvc, fmt.Sprintf("invalid label selector: %v", err))
		}
	}
	return nil
}

func invalidVolume(pv *v1.PersistentVolume, problem string) error {
	return &InvalidObjectError{Kind: "PersistentVolume", Key: pv.Name, Problem: problem}
}

func invalidClaim(pvc *v1.PersistentVolumeClaim, problem string) error {
	return &InvalidObjectError{Kind: "PersistentVolumeClaim", Key: cache.ClaimKey(pvc.Namespace, pvc.Name), Problem: problem}
}
