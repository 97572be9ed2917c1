package binder

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2"

	"github.com/volbind/volbind/cache"
	"github.com/volbind/volbind/operations"
	"github.com/volbind/volbind/recycler"
)

// reclaimVolume applies the reclaim policy of a released volume, as
// Kubernetes' reclaimVolume. Retain (also assumed when the policy is empty,
// which the API server never stores) keeps the volume Released, untouched.
// Delete and Recycle start an operation (deleteVolumeOperation,
// recycleVolumeOperation) when Config.Reclaim is set, and otherwise leave
// the volume Released for another controller. A volume that migrated to a
// CSI driver is left to its external provisioner. An unknown policy makes
// the volume Failed with a VolumeUnknownReclaimPolicy event.
func (b *Binder) reclaimVolume(ctx context.Context, pv *v1.PersistentVolume) error {
	logger := klog.FromContext(ctx)
	if pv.Annotations[volume.AnnMigratedTo] != "" {
		return nil
	}
	name, uid := pv.Name, pv.UID
	switch policy := pv.Spec.PersistentVolumeReclaimPolicy; policy {
	case v1.PersistentVolumeReclaimRetain, "":
		logger.V(4).Info("Reclaim policy is Retain, nothing to do", "volumeName", name)
	case v1.PersistentVolumeReclaimRecycle, v1.PersistentVolumeReclaimDelete:
		if b.cfg.Reclaim == nil {
			logger.V(4).Info("Volume released; reclaim is not enabled in this binder", "volumeName", name, "reclaimPolicy", policy)
			return nil
		}
		if policy == v1.PersistentVolumeReclaimRecycle {
			b.scheduleOperation(ctx, operations.VolumeOpName(opRecycle, name, uid), func(ctx context.Context) error {
				return b.recycleVolumeOperation(ctx, name, uid)
			})
		} else {
			b.kube.opStarted(name, b.deletePluginName(pv), opDelete)
			b.scheduleOperation(ctx, operations.VolumeOpName(opDelete, name, uid), func(ctx context.Context) error {
				err := b.deleteVolumeOperation(ctx, name, uid)
				if countsAsError(ctx, err) {
					b.kube.opFailed(name)
				}
				return err
			})
		}
	default:
		_, err := b.updateVolumePhaseWithEvent(ctx, pv, v1.VolumeFailed, v1.EventTypeWarning, ReasonVolumeUnknownReclaimPolicy, msgUnknownReclaim)
		return err
	}
	return nil
}

// freshReleasedVolume reads the volume from the API and returns it when it
// is still the volume the operation was started for (same UID, same reclaim
// policy, not migrated) and still released. (nil, nil) means there is
// nothing to do (the volume is gone or changed); an error means a read
// failed and nothing is known: the operation fails and is retried.
func (b *Binder) freshReleasedVolume(ctx context.Context, name string, uid types.UID, policy v1.PersistentVolumeReclaimPolicy) (*v1.PersistentVolume, error) {
	logger := klog.FromContext(ctx)
	pv, err := b.api.GetVolume(ctx, name)
	switch {
	case apierrors.IsNotFound(err):
		logger.V(3).Info("Volume was deleted, skipping", "volumeName", name)
		b.forgetDeleted(uid)
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("binder: read volume %s: %w", name, err)
	}
	b.keepVolume(ctx, pv)
	switch {
	case pv.UID != uid:
		logger.V(3).Info("Volume was re-created, skipping", "volumeName", name)
		b.forgetDeleted(uid)
		return nil, nil
	case pv.Spec.PersistentVolumeReclaimPolicy != policy:
		logger.V(3).Info("Volume's reclaim policy changed, skipping", "volumeName", name, "reclaimPolicy", pv.Spec.PersistentVolumeReclaimPolicy)
		return nil, nil
	case pv.Annotations[volume.AnnMigratedTo] != "":
		return nil, nil
	}
	released, err := b.isVolumeReleased(ctx, pv)
	if err != nil {
		return nil, fmt.Errorf("binder: read claim of volume %s: %w", name, err)
	}
	if !released {
		logger.V(3).Info("Volume no longer needs reclaim, skipping", "volumeName", name)
		return nil, nil
	}
	return pv, nil
}

// isVolumeReleased reports whether pv is bound to a claim that no longer
// exists (or was re-created with another UID) or that is bound to another
// volume, as Kubernetes' isVolumeReleased. Unlike Kubernetes, it asks the
// API server before it believes a claim is gone, because what follows
// destroys data.
func (b *Binder) isVolumeReleased(ctx context.Context, pv *v1.PersistentVolume) (bool, error) {
	ref := pv.Spec.ClaimRef
	if ref == nil || ref.UID == "" {
		return false, nil
	}
	claim, found := b.store.claim(cache.ClaimKey(ref.Namespace, ref.Name))
	if !found || claim.UID != ref.UID {
		c, err := b.getClaim(ctx, ref.Namespace, ref.Name)
		if err != nil {
			return false, err
		}
		claim = c
	}
	if claim == nil || claim.UID != ref.UID {
		return true, nil
	}
	return claim.Spec.VolumeName != "" && claim.Spec.VolumeName != pv.Name, nil
}

// deleteVolumeOperation deletes a released volume's storage with its
// Deleter, removes FinalizerPVController and deletes the volume, as
// Kubernetes' deleteVolumeOperation, also when the volume is already being
// deleted (its deletion waits for that finalizer). A Deleter failure makes
// the volume Failed (event VolumeFailedDelete) and is returned, so the
// operation backs off; so does a volume no Deleter and no external
// provisioner can delete. Unlike Kubernetes, it calls the Deleter at most
// once per volume UID: once the storage is deleted, later runs (after a
// failed read, write or delete of the object, or after a restart, see
// AnnOperation) only finish deleting the object.
func (b *Binder) deleteVolumeOperation(ctx context.Context, name string, uid types.UID) error {
	logger := klog.FromContext(ctx)
	logger.V(4).Info("Delete volume operation started", "volumeName", name)
	pv, err := b.freshReleasedVolume(ctx, name, uid, v1.PersistentVolumeReclaimDelete)
	if pv == nil || err != nil {
		return err
	}
	if b.storageDeleted(pv) {
		logger.V(3).Info("Volume's storage was deleted by an earlier run, deleting the volume", "volumeName", name)
		return b.deleteVolumeObject(ctx, pv)
	}
	plugin, d, err := b.findDeleter(ctx, pv)
	if err == nil && d == nil {
		logger.V(3).Info("External deleter for volume requested, ignoring", "volumeName", name)
		return nil
	}
	if err == nil {
		var marked *v1.PersistentVolume
		if marked, err = b.markOperation(ctx, pv, opDelete); marked == nil || err != nil {
			return err
		}
		pv = marked
		if err = b.fenced(ctx); err == nil {
			start := b.cfg.Clock.Now()
			err = d.Delete(ctx, pv)
			b.kube.pluginCall(plugin, kubeOpPluginDelete, start, err)
		}
	}
	if err != nil {
		return b.deletionFailed(ctx, pv, err)
	}
	b.deleted.Store(uid, struct{}{})
	logger.V(2).Info("Volume's storage deleted", "volumeName", name)
	return b.deleteVolumeObject(ctx, pv)
}

// deletionFailed reports the failure err of the deletion of pv's storage
// (or of the removal of its finalizer) and returns it: a Normal
// VolumeDelete event for ErrDeletedVolumeInUse, otherwise the volume
// becomes Failed with a VolumeFailedDelete event. A refusal of the Fence
// or a cancelled operation is only returned.
func (b *Binder) deletionFailed(ctx context.Context, pv *v1.PersistentVolume, err error) error {
	if ctx.Err() != nil || errors.Is(err, ErrFenced) {
		return err
	}
	logger := klog.FromContext(ctx)
	logger.V(3).Info("Deletion of volume failed", "volumeName", pv.Name, "err", err)
	if errors.Is(err, ErrDeletedVolumeInUse) {
		b.event(pv, v1.EventTypeNormal, ReasonVolumeDelete, err.Error())
	} else if _, uerr := b.updateVolumePhaseWithEvent(ctx, pv, v1.VolumeFailed, v1.EventTypeWarning, ReasonVolumeFailedDelete, err.Error()); uerr != nil {
		logger.V(4).Info("Failed to mark volume as failed", "volumeName", pv.Name, "err", uerr)
	}
	return err
}

var _ VolumeRecycler = (*recycler.Recycler)(nil)

// errNoRecycler is the recycle failure when no VolumeRecycler is set.
var errNoRecycler = errors.New("binder: no recycler configured")

// recycleVolumeOperation scrubs a released volume with the recycler and
// makes it Available again, as Kubernetes' recycleVolumeOperation. A
// failure makes the volume Failed (event VolumeFailedRecycle) and is
// returned, so the operation backs off. While pods still use the volume's
// deleted claim (Config.Pods), it only records a Normal VolumeFailedRecycle
// event naming them; the next sync tries again. Unlike Kubernetes, a run
// after one that scrubbed the volume but could not make it Available only
// makes it Available: the storage is scrubbed once per release.
func (b *Binder) recycleVolumeOperation(ctx context.Context, name string, uid types.UID) error {
	logger := klog.FromContext(ctx)
	logger.V(4).Info("Recycle volume operation started", "volumeName", name)
	pv, err := b.freshReleasedVolume(ctx, name, uid, v1.PersistentVolumeReclaimRecycle)
	if pv == nil && err == nil {
		b.scrubbed.Delete(uid)
	}
	if pv == nil || err != nil || b.recycleWaitsForPods(ctx, pv) {
		return err
	}
	release := pv.Spec.ClaimRef.UID
	if done, _ := b.scrubbed.Load(uid); done != release {
		if pv, err = b.scrub(ctx, pv); pv == nil || err != nil {
			// nil, nil: another instance's fresh mark; it scrubs.
			return err
		}
		b.scrubbed.Store(uid, release)
	} else {
		logger.V(3).Info("Volume was scrubbed by an earlier run, making it available", "volumeName", name)
	}
	if err := b.unbindRecycled(ctx, pv); err != nil {
		logger.V(3).Info("Failed to make recycled volume available, will try again", "volumeName", name, "err", err)
		return err
	}
	b.scrubbed.Delete(uid)
	return nil
}

// scrub marks the released volume pv (AnnOperation), scrubs it with the
// recycler and returns the marked version, or nil when another instance's
// fresh mark is on it (that instance scrubs it). A failure makes the volume
// Failed with a VolumeFailedRecycle event; a refusal of the Fence or a
// cancelled operation does not.
func (b *Binder) scrub(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	logger := klog.FromContext(ctx)
	err := errNoRecycler
	if r := b.cfg.Reclaim.Recycler; r != nil {
		var marked *v1.PersistentVolume
		if marked, err = b.markOperation(ctx, pv, opRecycle); marked == nil || err != nil {
			return nil, err
		}
		pv = marked
		if err = b.fenced(ctx); err == nil {
			err = r.Recycle(ctx, pv)
		}
	}
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, ErrFenced) {
			return nil, err
		}
		msg := "Recycle failed: " + err.Error()
		if errors.Is(err, errNoRecycler) || errors.Is(err, recycler.ErrUnsupportedVolume) {
			msg = msgNoRecycler
		}
		logger.V(3).Info("Recycling volume failed", "volumeName", pv.Name, "err", err)
		if _, uerr := b.updateVolumePhaseWithEvent(ctx, pv, v1.VolumeFailed, v1.EventTypeWarning, ReasonVolumeFailedRecycle, msg); uerr != nil {
			logger.V(4).Info("Failed to mark volume as failed", "volumeName", pv.Name, "err", uerr)
		}
		return nil, err
	}
	logger.V(2).Info("Volume recycled", "volumeName", pv.Name)
	b.event(pv, v1.EventTypeNormal, ReasonVolumeRecycled, msgRecycled)
	return pv, nil
}

// recycleWaitsForPods reports whether pods that have not terminated still
// use the released volume's claim, as Kubernetes' isVolumeUsed, and then
// records a Normal VolumeFailedRecycle event naming them. A claim of that
// name in the cache is another claim (the volume is released), whose pods
// do not use this volume: the volume is recycled then. An error of
// Config.Pods is logged and postpones the recycling too.
func (b *Binder) recycleWaitsForPods(ctx context.Context, pv *v1.PersistentVolume) bool {
	logger := klog.FromContext(ctx)
	ref := pv.Spec.ClaimRef
	pods, err := b.activePodsUsing(ref.Namespace, ref.Name)
	if err != nil {
		logger.V(3).Info("Can't recycle volume", "volumeName", pv.Name, "err", err)
		return true
	}
	if len(pods) == 0 {
		return false
	}
	if _, cached := b.store.claim(cache.ClaimKey(ref.Namespace, ref.Name)); cached {
		return false
	}
	msg := "Volume is used by pods: " + strings.Join(pods, ",")
	logger.V(3).Info("Can't recycle volume", "volumeName", pv.Name, "msg", msg)
	b.event(pv, v1.EventTypeNormal, ReasonVolumeFailedRecycle, msg)
	return true
}

// recycledUnbindAttempts bounds the attempts to make a scrubbed volume
// Available before the operation fails (and the volume may be scrubbed
// again at a later sync).
const recycledUnbindAttempts = 5

// unbindRecycled makes a scrubbed volume Available again, starting from pv,
// the version read before the scrub: a read that fails now must not make
// the operation look done while the volume stays Released (the next sync
// would scrub it again). A write that raced with the scrub conflicts; the
// volume is then read again, and a failed write or read is retried a few
// times on the Binder's clock. The volume's lock is held during each
// attempt (never during the pause between two), so that the sync caused by
// the first write does not race with the second.
func (b *Binder) unbindRecycled(ctx context.Context, pv *v1.PersistentVolume) error {
	name, uid := pv.Name, pv.UID
	cur := pv
	var err error
	delay := 10 * time.Millisecond
	for attempt := range recycledUnbindAttempts {
		if attempt > 0 {
			// Never wait with the volume's lock held: a sync of the
			// volume (and so Run's return) would wait for the pause.
			if werr := b.sleep(ctx, delay); werr != nil {
				return errors.Join(err, werr)
			}
			delay *= 2
		}
		var done bool
		if cur, done, err = b.unbindRecycledOnce(ctx, name, uid, cur); done || err == nil {
			return err
		}
	}
	return err
}

// unbindRecycledOnce makes one attempt of unbindRecycled under the volume's
// lock, starting from cur, or from a fresh read when cur is nil. It reports
// done when the volume needs nothing more (it is no longer a released
// Recycle volume of uid), and returns nil as the next starting point after
// a failure.
func (b *Binder) unbindRecycledOnce(ctx context.Context, name string, uid types.UID, cur *v1.PersistentVolume) (*v1.PersistentVolume, bool, error) {
	b.volumeLocks.Lock(name)
	defer b.volumeLocks.Unlock(name)
	if cur == nil {
		var err error
		if cur, err = b.freshReleasedVolume(ctx, name, uid, v1.PersistentVolumeReclaimRecycle); err != nil || cur == nil {
			return nil, cur == nil && err == nil, err
		}
	}
	if err := b.unbindVolume(ctx, cur); err != nil {
		return nil, false, err
	}
	return cur, true, nil
}

// sleep waits d on the Binder's clock, or until ctx is done.
func (b *Binder) sleep(ctx context.Context, d time.Duration) error {
	t := b.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}
