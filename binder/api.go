package binder

import (
	"context"

	v1 "k8s.io/api/core/v1"
)

// VolumeAPI is the set of PersistentVolume calls the Binder makes. Errors are
// k8s.io/apimachinery/pkg/api/errors values (NotFound, Conflict,
// AlreadyExists). Returned objects are owned by the Binder afterwards and
// are never mutated by it. Objects passed in share maps and slices with the
// Binder's caches: implementations must neither modify nor retain them
// (serialize or deep-copy them, as client-go and bindertest do).
type VolumeAPI interface {
	// CreateVolume creates pv and returns the stored object.
	CreateVolume(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error)
	// UpdateVolume writes pv's metadata and spec (not its status). A stale
	// resourceVersion fails with a Conflict error.
	UpdateVolume(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error)
	// UpdateVolumeStatus writes pv's status subresource only.
	UpdateVolumeStatus(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error)
	// DeleteVolume deletes the volume with the given name.
	DeleteVolume(ctx context.Context, name string) error
	// GetVolume reads the volume from the API (not from a cache).
	GetVolume(ctx context.Context, name string) (*v1.PersistentVolume, error)
}

// ClaimAPI is the set of PersistentVolumeClaim calls the Binder makes.
// Errors are k8s.io/apimachinery/pkg/api/errors values.
type ClaimAPI interface {
	// UpdateClaim writes pvc's metadata and spec (not its status). A stale
	// resourceVersion fails with a Conflict error.
	UpdateClaim(ctx context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error)
	// UpdateClaimStatus writes pvc's status subresource only.
	UpdateClaimStatus(ctx context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error)
	// GetClaim reads the claim from the API (not from a cache).
	GetClaim(ctx context.Context, namespace, name string) (*v1.PersistentVolumeClaim, error)
}

// API is everything the Binder needs from the API server. Users implement it
// on top of their own client, or use ClientsetAPI for a client-go
// kubernetes.Interface; binder/bindertest provides an in-memory
// implementation for tests.
type API interface {
	VolumeAPI
	ClaimAPI
}
