package binder

import (
	"context"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// ClientsetAPI is the API of a client-go kubernetes.Interface: every call
// goes to the API server (through cs), never to an informer cache. Errors are
// returned as client-go returns them, so apierrors.IsConflict, IsNotFound and
// IsAlreadyExists work on them; a nil object gets a BadRequest error instead
// of a panic. A ClientsetAPI is safe for concurrent use as
// long as cs is.
type ClientsetAPI struct {
	cs kubernetes.Interface
}

var _ API = (*ClientsetAPI)(nil)

// NewClientsetAPI returns an API that calls cs.CoreV1(). It keeps cs and
// starts no goroutines.
func NewClientsetAPI(cs kubernetes.Interface) *ClientsetAPI {
	return &ClientsetAPI{cs: cs}
}

// CreateVolume creates pv and returns the stored object. It blocks for one
// API round trip.
func (a *ClientsetAPI) CreateVolume(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	if pv == nil {
		return nil, nilObject("create", "volume")
	}
	return a.cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
}

// UpdateVolume writes pv's metadata and spec; the API server ignores the
// status. A stale resourceVersion fails with a Conflict error.
func (a *ClientsetAPI) UpdateVolume(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	if pv == nil {
		return nil, nilObject("update", "volume")
	}
	return a.cs.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{})
}

// UpdateVolumeStatus writes pv's status subresource. A stale resourceVersion
// fails with a Conflict error.
func (a *ClientsetAPI) UpdateVolumeStatus(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	if pv == nil {
		return nil, nilObject("update status of", "volume")
	}
	return a.cs.CoreV1().PersistentVolumes().UpdateStatus(ctx, pv, metav1.UpdateOptions{})
}

// DeleteVolume deletes the volume with the given name.
func (a *ClientsetAPI) DeleteVolume(ctx context.Context, name string) error {
	return a.cs.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{})
}

// GetVolume reads the volume from the API server. The result is owned by the
// caller.
func (a *ClientsetAPI) GetVolume(ctx context.Context, name string) (*v1.PersistentVolume, error) {
	return a.cs.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
}

// UpdateClaim writes pvc's metadata and spec; the API server ignores the
// status. A stale resourceVersion fails with a Conflict error.
func (a *ClientsetAPI) UpdateClaim(ctx context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	if pvc == nil {
		return nil, nilObject("update", "claim")
	}
	return a.cs.CoreV1().PersistentVolumeClaims(pvc.Namespace).Update(ctx, pvc, metav1.UpdateOptions{})
}

// UpdateClaimStatus writes pvc's status subresource. A stale resourceVersion
// fails with a Conflict error.
func (a *ClientsetAPI) UpdateClaimStatus(ctx context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	if pvc == nil {
		return nil, nilObject("update status of", "claim")
	}
	return a.cs.CoreV1().PersistentVolumeClaims(pvc.Namespace).UpdateStatus(ctx, pvc, metav1.UpdateOptions{})
}

// GetClaim reads the claim from the API server. The result is owned by the
// caller.
func (a *ClientsetAPI) GetClaim(ctx context.Context, namespace, name string) (*v1.PersistentVolumeClaim, error) {
	return a.cs.CoreV1().PersistentVolumeClaims(namespace).Get(ctx, name, metav1.GetOptions{})
}

// nilObject is the error for a nil object handed to a write.
func nilObject(verb, kind string) error {
	return apierrors.NewBadRequest("cannot " + verb + " a nil " + kind)
}
