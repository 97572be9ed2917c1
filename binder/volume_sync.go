package binder

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2"

	"github.com/volbind/volbind/cache"
)

// syncVolume decides what to do with a volume: Kubernetes' syncVolume. The
// volume is the cached version; it is never mutated.
func (b *Binder) syncVolume(ctx context.Context, pv *v1.PersistentVolume) error {
	logger := klog.FromContext(ctx)
	if v := logger.V(4); v.Enabled() {
		v.Info("Synchronizing PersistentVolume", "volumeName", pv.Name, "phase", pv.Status.Phase)
	}
	pv, err := b.annealVolume(ctx, pv)
	if err != nil {
		// Nothing was written: the next sync tries again.
		return err
	}
	held := b.holdAvailable(ctx, pv)
	ref := pv.Spec.ClaimRef
	if ref == nil || ref.UID == "" {
		// Unused, or pre-bound to a claim whose sync will bind it.
		if held {
			return nil
		}
		_, err := b.updateVolumePhase(ctx, pv, v1.VolumeAvailable, "")
		return err
	}
	claim, err := b.claimOf(ctx, pv)
	if err != nil {
		return err
	}
	key := cache.ClaimKey(ref.Namespace, ref.Name)
	switch {
	case claim == nil:
		// The claim was deleted (or re-created with another UID).
		return b.releaseVolume(ctx, pv)
	case claim.Spec.VolumeName == "":
		if volume.CheckVolumeModeMismatches(&claim.Spec, &pv.Spec) {
			// The claim's sync would never pick this volume.
			b.warn(pv, ReasonVolumeMismatch, fmt.Sprintf("Cannot bind PersistentVolume to requested PersistentVolumeClaim %q due to incompatible volumeMode.", claim.Name))
			b.warn(claim, ReasonVolumeMismatch, fmt.Sprintf("Cannot bind PersistentVolume %q to requested PersistentVolumeClaim due to incompatible volumeMode.", pv.Name))
			return nil
		}
		// The binding is not complete (the controller wrote the volume but
		// not the claim yet, or a user unbound the claim): the claim's sync
		// fixes it, so queue it now.
		if v := logger.V(4); v.Enabled() {
			v.Info("Synchronizing PersistentVolume, volume not bound yet, waiting for syncClaim to fix it", "volumeName", pv.Name, "PVC", klog.KRef(ref.Namespace, ref.Name))
		}
		b.work.add(claimWork(key))
		return nil
	case claim.Spec.VolumeName == pv.Name:
		_, err := b.updateVolumePhase(ctx, pv, v1.VolumeBound, "")
		return err
	case metav1.HasAnnotation(pv.ObjectMeta, volume.AnnDynamicallyProvisioned) &&
		pv.Spec.PersistentVolumeReclaimPolicy == v1.PersistentVolumeReclaimDelete:
		// Provisioned for this claim, which got bound elsewhere: not needed.
		return b.releaseVolume(ctx, pv)
	default:
		// The claim is bound to another volume. A binding the controller
		// made is rolled back; a user's pre-binding keeps its claimRef
		// without UID.
		logger.V(4).Info("Synchronizing PersistentVolume, claim is bound to another volume, unbinding", "volumeName", pv.Name, "PVC", klog.KRef(ref.Namespace, ref.Name))
		return b.unbindVolume(ctx, pv)
	}
}

// claimOf returns the claim the volume's claimRef names, or nil when it
// does not exist or has another UID. Before treating a claim as gone it
// asks the API server, as Kubernetes does, so that a volume is never
// released because the cache has not seen its claim yet.
func (b *Binder) claimOf(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolumeClaim, error) {
	ref := pv.Spec.ClaimRef
	claim, found := b.store.claim(cache.ClaimKey(ref.Namespace, ref.Name))
	if !found && pv.Status.Phase != v1.VolumeReleased && pv.Status.Phase != v1.VolumeFailed {
		c, err := b.getClaim(ctx, ref.Namespace, ref.Name)
		if err != nil {
			return nil, err
		}
		claim, found = c, c != nil
	}
	if !found {
		return nil, nil
	}
	if claim.UID != ref.UID {
		// The cache may hold an older claim of the same name: check.
		c, err := b.getClaim(ctx, ref.Namespace, ref.Name)
		if err != nil {
			return nil, err
		}
		if c == nil || c.UID != ref.UID {
			return nil, nil
		}
		claim = c
	}
	return claim, nil
}

// getClaim reads a claim from the API; NotFound is (nil, nil).
func (b *Binder) getClaim(ctx context.Context, namespace, name string) (*v1.PersistentVolumeClaim, error) {
	c, err := b.api.GetClaim(ctx, namespace, name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return c, nil
}

// releaseVolume marks a volume whose claim is gone Released (keeping a
// Failed phase, so that users see what went wrong) and reclaims it.
func (b *Binder) releaseVolume(ctx context.Context, pv *v1.PersistentVolume) error {
	if pv.Status.Phase != v1.VolumeReleased && pv.Status.Phase != v1.VolumeFailed {
		klog.FromContext(ctx).V(2).Info("Volume is released and reclaim policy will be executed", "volumeName", pv.Name,
			"reclaimPolicy", pv.Spec.PersistentVolumeReclaimPolicy)
		out, err := b.updateVolumePhase(ctx, pv, v1.VolumeReleased, "")
		if err != nil {
			return err
		}
		pv = out
	}
	return b.reclaimVolume(ctx, pv)
}
