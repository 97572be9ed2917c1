package binder

import (
	"context"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// storageDeleted reports whether pv's storage was deleted by a Deleter
// already: this Binder remembers it (Binder.deleted), or the volume's
// AnnOperation mark says so (another Binder, or this one before a
// restart). The Deleter is then never called again for pv's UID.
func (b *Binder) storageDeleted(pv *v1.PersistentVolume) bool {
	if _, ok := b.deleted.Load(pv.UID); ok {
		return true
	}
	return storageDeletedMark(pv)
}

// forgetDeleted forgets that the storage of the volume with uid was
// deleted, once that volume is gone.
func (b *Binder) forgetDeleted(uid types.UID) { b.deleted.Delete(uid) }

// deleteVolumeObject finishes the deletion of a volume whose storage is
// deleted: it removes FinalizerPVController (as Kubernetes'
// removeDeletionProtectionFinalizer) and deletes the object. The write that
// removes the finalizer also marks the storage deleted (AnnOperation), so
// that a Binder restarted before the object is gone does not call the
// Deleter again; a volume without the finalizer is marked so only when its
// deletion fails. A failure to remove the finalizer makes the volume Failed
// (event VolumeFailedDelete, Kubernetes' "persistent volume controller
// can't update finalizer") and is returned, as is a failed deletion; the
// operation's retry finishes the work without calling the Deleter.
func (b *Binder) deleteVolumeObject(ctx context.Context, pv *v1.PersistentVolume) error {
	logger := klog.FromContext(ctx)
	recorded := false
	if slices.Contains(pv.Finalizers, FinalizerPVController) {
		if err := b.recordStorageDeleted(ctx, pv); err != nil {
			return b.deletionFailed(ctx, pv, fmt.Errorf("persistent volume controller can't update finalizer: %w", err))
		}
		recorded = true
		logger.V(2).Info("PV in-tree protection finalizer removed from volume", "volumeName", pv.Name)
	}
	if err := b.api.DeleteVolume(ctx, pv.Name); err != nil && !apierrors.IsNotFound(err) {
		logger.V(3).Info("Failed to delete volume from the API, will retry", "volumeName", pv.Name, "err", err)
		if !recorded {
			if rerr := b.recordStorageDeleted(ctx, pv); rerr != nil {
				logger.V(3).Info("Cannot mark the volume's storage deleted", "volumeName", pv.Name, "err", rerr)
			}
		}
		return err
	}
	b.forgetDeleted(pv.UID)
	b.metrics.wrote(resourceVolumes, "delete")
	return nil
}

// recordStorageDeleted writes pv without FinalizerPVController and with a
// mark saying its storage is deleted (withDeletedMark), conditional on
// pv's resourceVersion, without reading it first: after a Conflict it
// writes the version read after the conflict, if that is still the same
// volume (a few attempts).
func (b *Binder) recordStorageDeleted(ctx context.Context, pv *v1.PersistentVolume) error {
	for attempt := 0; ; attempt++ {
		clone, err := b.withDeletedMark(pv)
		if clone == nil || err != nil {
			return err
		}
		_, err = b.writeVolume(ctx, clone)
		if !isConflict(err) || attempt == markAttempts-1 {
			return err
		}
		fresh, ok := b.store.volume(pv.Name)
		if !ok || fresh.UID != pv.UID || fresh.ResourceVersion == pv.ResourceVersion {
			return err // gone, re-created, or the read after the conflict failed
		}
		pv = fresh
	}
}
