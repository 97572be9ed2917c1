package binder

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// ErrFenced is matched (errors.Is) by the error of every call the Binder
// did not make because its Config.Fence refused.
var ErrFenced = errors.New("binder: fenced")

// Fence tells a Binder whether it may still act: it is consulted right
// before every call that creates or destroys something outside the Binder
// (Provisioner.Provision, Deleter.Delete, VolumeRecycler.Recycle) and
// before every API write (create, update, status update, delete). A
// leader-elected controller refuses once its Lease is no longer its own or
// is about to expire, so that a replica that lost leadership stops before
// the next leader starts. Allow must be fast and safe for concurrent use.
type Fence interface {
	// Allow returns nil when the Binder may act now, or an error saying
	// why not. It must not block for long: it runs on the sync path.
	Allow(ctx context.Context) error
}

// FenceFunc adapts a function to a Fence.
type FenceFunc func(ctx context.Context) error

// Allow calls f.
func (f FenceFunc) Allow(ctx context.Context) error { return f(ctx) }

// fenced asks the Config's Fence whether the Binder may act; nil without a
// Fence. Its error wraps ErrFenced.
func (b *Binder) fenced(ctx context.Context) error {
	return checkFence(ctx, b.cfg.Fence)
}

func checkFence(ctx context.Context, f Fence) error {
	if f == nil {
		return nil
	}
	err := f.Allow(ctx)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrFenced):
		return err
	}
	return fmt.Errorf("%w: %w", ErrFenced, err)
}

// fencedAPI consults the Fence before every write of the API it wraps;
// reads pass through.
type fencedAPI struct {
	API
	fence Fence
}

var _ API = (*fencedAPI)(nil)

func (a *fencedAPI) CreateVolume(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	if err := checkFence(ctx, a.fence); err != nil {
		return nil, err
	}
	return a.API.CreateVolume(ctx, pv)
}

func (a *fencedAPI) UpdateVolume(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	if err := checkFence(ctx, a.fence); err != nil {
		return nil, err
	}
	return a.API.UpdateVolume(ctx, pv)
}

func (a *fencedAPI) UpdateVolumeStatus(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	if err := checkFence(ctx, a.fence); err != nil {
		return nil, err
	}
	return a.API.UpdateVolumeStatus(ctx, pv)
}

func (a *fencedAPI) DeleteVolume(ctx context.Context, name string) error {
	if err := checkFence(ctx, a.fence); err != nil {
		return err
	}
	return a.API.DeleteVolume(ctx, name)
}

func (a *fencedAPI) UpdateClaim(ctx context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	if err := checkFence(ctx, a.fence); err != nil {
		return nil, err
	}
	return a.API.UpdateClaim(ctx, pvc)
}

func (a *fencedAPI) UpdateClaimStatus(ctx context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	if err := checkFence(ctx, a.fence); err != nil {
		return nil, err
	}
	return a.API.UpdateClaimStatus(ctx, pvc)
}
