package binder

import (
	"context"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"

	"github.com/volbind/volbind/cache"
)

// Resource names for metrics and logs.
const (
	resourceVolumes = "persistentvolumes"
	resourceClaims  = "persistentvolumeclaims"
)

// isConflict reports whether err is an API Conflict.
func isConflict(err error) bool { return apierrors.IsConflict(err) }

// The four writers below call the API and, on success only, keep the
// server's answer in the caches, so that the event of the write finds
// nothing left to do and a failed write leaves the caches unchanged. The
// events that arrive before the answer are settled by ownWrites.

func (b *Binder) writeVolume(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	u := b.beginUpdate(ownVolume(pv), pv.ResourceVersion)
	defer u.abandon()
	out, err := b.api.UpdateVolume(ctx, pv)
	return b.wroteVolume(ctx, &u, pv, out, err, "update")
}

func (b *Binder) writeVolumeStatus(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	u := b.beginUpdate(ownVolume(pv), pv.ResourceVersion)
	defer u.abandon()
	out, err := b.api.UpdateVolumeStatus(ctx, pv)
	return b.wroteVolume(ctx, &u, pv, out, err, "update_status")
}

func (b *Binder) writeClaim(ctx context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	u := b.beginUpdate(ownClaim(pvc), pvc.ResourceVersion)
	defer u.abandon()
	out, err := b.api.UpdateClaim(ctx, pvc)
	return b.wroteClaim(ctx, &u, pvc, out, err, "update")
}

func (b *Binder) writeClaimStatus(ctx context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	u := b.beginUpdate(ownClaim(pvc), pvc.ResourceVersion)
	defer u.abandon()
	out, err := b.api.UpdateClaimStatus(ctx, pvc)
	return b.wroteClaim(ctx, &u, pvc, out, err, "update_status")
}

// wroteVolume ends the update u of pv (verb for the metrics), which
// answered out or err: it keeps the answer, settles the events that came
// meanwhile, and handles a failure.
func (b *Binder) wroteVolume(ctx context.Context, u *ownUpdate, pv, out *v1.PersistentVolume, err error, verb string) (*v1.PersistentVolume, error) {
	if err != nil {
		u.settle(false, nil)
		b.volumeWriteFailed(ctx, pv, err)
		return nil, err
	}
	b.metrics.wrote(resourceVolumes, verb)
	b.checkAnswer(resourceVolumes, u.sent, out)
	b.keepWrittenVolume(ctx, out)
	u.settle(true, out)
	return out, nil
}

// wroteClaim is wroteVolume for claims.
func (b *Binder) wroteClaim(ctx context.Context, u *ownUpdate, pvc, out *v1.PersistentVolumeClaim, err error, verb string) (*v1.PersistentVolumeClaim, error) {
	if err != nil {
		u.settle(false, nil)
		b.claimWriteFailed(ctx, pvc, err)
		return nil, err
	}
	b.metrics.wrote(resourceClaims, verb)
	b.checkAnswer(resourceClaims, u.sent, out)
	b.keepWrittenClaim(ctx, out)
	u.settle(true, out)
	return out, nil
}

// volumeWriteFailed counts a conflict and then reads the volume once, so
// that the next attempt starts from the server's version rather than
// resending the stale cached one (while watches are down, a stale write
// would otherwise conflict at every retry). A failed read is only logged.
// A volume the server no longer has is forgotten (see volumeNotFound).
func (b *Binder) volumeWriteFailed(ctx context.Context, pv *v1.PersistentVolume, err error) {
	name := pv.Name
	if apierrors.IsNotFound(err) {
		b.volumeNotFound(ctx, pv)
		return
	}
	if !isConflict(err) {
		return
	}
	b.metrics.conflict(resourceVolumes)
	fresh, rerr := b.api.GetVolume(ctx, name)
	if rerr != nil {
		klog.FromContext(ctx).V(4).Info("Cannot re-read volume after a conflict", "volumeName", name, "err", rerr)
		return
	}
	b.keepVolume(ctx, fresh)
}

// claimWriteFailed is volumeWriteFailed for claims.
func (b *Binder) claimWriteFailed(ctx context.Context, pvc *v1.PersistentVolumeClaim, err error) {
	if apierrors.IsNotFound(err) {
		b.claimNotFound(ctx, pvc)
		return
	}
	if !isConflict(err) {
		return
	}
	b.metrics.conflict(resourceClaims)
	fresh, rerr := b.api.GetClaim(ctx, pvc.Namespace, pvc.Name)
	if rerr != nil {
		klog.FromContext(ctx).V(4).Info("Cannot re-read claim after a conflict", "PVC", klog.KObj(pvc), "err", rerr)
		return
	}
	b.keepClaim(ctx, fresh)
}

// keepVolume caches a volume the Binder read or created. No sync has seen
// that version: a volume new to the cache (its own create's answer, a read
// of an object no event has delivered yet) or of another UID than the
// cached one (re-created under its name) is tracked and queued like one
// from an event, so that it is synced once even when its informer event,
// carrying the same resourceVersion, is then dropped as not newer; a newer
// version of the cached volume is queued by its own event (see
// store.shareVolume) or by the retry of the sync that read it.
func (b *Binder) keepVolume(ctx context.Context, pv *v1.PersistentVolume) {
	prev, known := b.store.volume(pv.Name)
	stored, err := b.store.learnVolume(pv)
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Cannot cache volume", "volumeName", pv.Name, "err", err)
		return
	}
	if stored && (!known || prev.UID != pv.UID) {
		b.work.add(volumeWork(pv.Name))
	}
}

// keepWrittenVolume caches the answer to the Binder's update of a volume:
// the version a sync or an operation decided on, which needs no sync of
// its own (Config.Observer is told so).
func (b *Binder) keepWrittenVolume(ctx context.Context, pv *v1.PersistentVolume) {
	stored, err := b.store.storeVolume(pv)
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Cannot cache written volume", "volumeName", pv.Name, "err", err)
		return
	}
	if stored {
		b.observe(pv)
	}
}

// keepClaim is keepVolume for claims.
func (b *Binder) keepClaim(ctx context.Context, pvc *v1.PersistentVolumeClaim) {
	key := cache.ClaimKey(pvc.Namespace, pvc.Name)
	prev, known := b.store.claim(key)
	stored, err := b.store.learnClaim(pvc)
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Cannot cache claim", "PVC", klog.KObj(pvc), "err", err)
		return
	}
	if stored && (!known || prev.UID != pvc.UID) {
		b.work.add(claimWork(claimKeyOf(pvc)))
	}
}

// keepWrittenClaim is keepWrittenVolume for claims.
func (b *Binder) keepWrittenClaim(ctx context.Context, pvc *v1.PersistentVolumeClaim) {
	stored, err := b.store.storeClaim(pvc)
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Cannot cache written claim", "PVC", klog.KObj(pvc), "err", err)
		return
	}
	if stored {
		b.observe(pvc)
	}
}

// volumeNotFound handles the NotFound answer to a write of pv: the server
// has no volume of that name any more. When the cached volume is still
// pv's (same UID), it is forgotten as its delete event would forget it.
// The event may never come: when a volume was re-created and deleted again
// while an informer relisted, the informer reports only the deletion of
// the first one, which leaves the second, learned from a read, cached; a
// claim it pointed at then retried its write forever (chaos seed 201062).
func (b *Binder) volumeNotFound(ctx context.Context, pv *v1.PersistentVolume) {
	cached, ok := b.store.volume(pv.Name)
	if !ok || cached.UID != pv.UID {
		return
	}
	klog.FromContext(ctx).V(3).Info("Volume is gone from the API server, forgetting it", "volumeName", pv.Name)
	b.volumeDeleted(cached)
}

// claimNotFound is volumeNotFound for claims.
func (b *Binder) claimNotFound(ctx context.Context, pvc *v1.PersistentVolumeClaim) {
	cached, ok := b.store.claim(cache.ClaimKey(pvc.Namespace, pvc.Name))
	if !ok || cached.UID != pvc.UID {
		return
	}
	klog.FromContext(ctx).V(3).Info("Claim is gone from the API server, forgetting it", "PVC", klog.KObj(pvc))
	b.claimDeleted(cached)
}
