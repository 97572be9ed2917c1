package binder

import (
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/component-helpers/storage/volume"

	"github.com/volbind/volbind/cache"
)

// VolumeHandler returns the event handler of PersistentVolumes: register it
// on an informer or call it from your own watch. Add and update events keep
// the object (shared with the caller; never mutated) when it is newer than
// the cached one and queue it; delete events forget it and queue the claim
// it was bound to. An event never removes or shadows another object of
// the same name (another UID): the delete event of a volume that was
// re-created, arriving after the Binder learned the new one from a read or
// a write, leaves the new one and its own events alone, and has the
// volume's next sync read it to learn whether the new one still exists (a
// relist reports only the first deletion of a name that was re-created and
// deleted again unseen), and again once per resync period until an event
// of the new one comes. Objects of other types are
// ignored.
func (b *Binder) VolumeHandler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    b.volumeChanged,
		UpdateFunc: func(_, obj any) { b.volumeChanged(obj) },
		DeleteFunc: b.volumeDeleted,
	}
}

// ClaimHandler returns the event handler of PersistentVolumeClaims; see
// VolumeHandler. A deleted claim queues the volume it was bound to.
func (b *Binder) ClaimHandler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    b.claimChanged,
		UpdateFunc: func(_, obj any) { b.claimChanged(obj) },
		DeleteFunc: b.claimDeleted,
	}
}

// ClassHandler returns the event handler of StorageClasses. Any change of a
// class queues the claims that are not bound yet, whose binding may depend
// on the class (binding mode, default class).
func (b *Binder) ClassHandler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    b.classChanged,
		UpdateFunc: func(_, obj any) { b.classChanged(obj) },
		DeleteFunc: b.classDeleted,
	}
}

// unwrapDeleted returns the object of a DeletedFinalStateUnknown.
func unwrapDeleted(obj any) any {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		return d.Obj
	}
	return obj
}

func (b *Binder) volumeChanged(obj any) {
	pv, ok := obj.(*v1.PersistentVolume)
	if !ok || pv == nil {
		return
	}
	stored, err := b.store.storeVolume(pv)
	if err != nil {
		b.ignoreEvent("persistentvolumes", pv, err)
		return
	}
	b.store.trackedVolume(pv)
	if !stored {
		// Not newer than the cached version. When that is the answer
		// to the Binder's own write (which tracked and queued the
		// object if it was new), the event's copy, shared with the
		// informer, replaces it. A version learned from a read is
		// queued by its own event, as if the read had not happened.
		if b.store.shareVolume(pv) {
			b.work.add(volumeWork(pv.Name))
		}
		return
	}
	if b.own.event(ownVolume(pv), pv.ResourceVersion) {
		return // the update in flight settles it
	}
	b.work.add(volumeWork(pv.Name))
}

func (b *Binder) volumeDeleted(obj any) {
	pv, ok := unwrapDeleted(obj).(*v1.PersistentVolume)
	if !ok || pv == nil {
		return
	}
	b.forgetDeleted(pv.UID)
	cached, gone := b.store.deleteVolume(pv)
	b.kube.opDone(pv.Name)
	if gone {
		// Unless a volume re-created under the name is held: its
		// hold is its own.
		b.avail.volumeGone(pv.Name)
	} else {
		b.work.add(volumeWork(pv.Name)) // its verification read
	}
	ref := pv.Spec.ClaimRef
	if ref == nil && cached != nil {
		ref = cached.Spec.ClaimRef
	}
	if ref != nil {
		// Sync the claim now rather than at its next resync, so that it
		// becomes Lost without delay.
		b.work.add(claimWork(cache.ClaimKey(ref.Namespace, ref.Name)))
	}
}

func (b *Binder) claimChanged(obj any) {
	pvc, ok := obj.(*v1.PersistentVolumeClaim)
	if !ok || pvc == nil {
		return
	}
	// key serves the cache's lookups and does not escape (on the stack
	// when short): most of a claim's events, those of the Binder's own
	// writes, queue nothing, and the queue's key is built when it is.
	key := cache.ClaimKey(pvc.Namespace, pvc.Name)
	stored, err := b.store.storeClaimKey(key, pvc)
	if err != nil {
		b.ignoreEvent("persistentvolumeclaims", pvc, err)
		return
	}
	b.store.trackedClaim(key, pvc)
	if !stored {
		if b.store.shareClaim(key, pvc) {
			b.work.add(claimWork(claimKeyOf(pvc)))
		}
		return
	}
	if b.own.event(ownClaim(pvc), pvc.ResourceVersion) {
		return // the update in flight settles it
	}
	b.work.add(claimWork(claimKeyOf(pvc)))
}

// claimKeyOf returns pvc's cache and queue key ("namespace/name"), a new
// string to keep.
func claimKeyOf(pvc *v1.PersistentVolumeClaim) string {
	return cache.ClaimKey(pvc.Namespace, pvc.Name)
}

func (b *Binder) claimDeleted(obj any) {
	pvc, ok := unwrapDeleted(obj).(*v1.PersistentVolumeClaim)
	if !ok || pvc == nil {
		return
	}
	cached, gone := b.store.deleteClaim(pvc)
	key := cache.ClaimKey(pvc.Namespace, pvc.Name)
	b.releaseHold(key, pvc.UID)
	if gone {
		b.kube.opForget(key)
		b.avail.claimGone(key)
	} else {
		b.work.add(claimWork(key)) // its verification read
	}
	name := pvc.Spec.VolumeName
	if name == "" && cached != nil {
		name = cached.Spec.VolumeName
	}
	if name != "" {
		// Sync the volume now, so that it is released without delay.
		b.work.add(volumeWork(name))
	}
}

func (b *Binder) classChanged(obj any) {
	sc, ok := obj.(*storagev1.StorageClass)
	if !ok || sc == nil {
		return
	}
	b.classes.store(sc)
	b.enqueueUnboundClaims()
}

func (b *Binder) classDeleted(obj any) {
	sc, ok := unwrapDeleted(obj).(*storagev1.StorageClass)
	if !ok || sc == nil {
		return
	}
	b.classes.delete(sc.Name)
	b.enqueueUnboundClaims()
}

// enqueueUnboundClaims queues every claim that has not completed binding.
func (b *Binder) enqueueUnboundClaims() {
	if !b.work.running() {
		return
	}
	for _, pvc := range b.store.claims.List() {
		if !metav1.HasAnnotation(pvc.ObjectMeta, volume.AnnBindCompleted) {
			b.work.add(claimWork(cache.ClaimKey(pvc.Namespace, pvc.Name)))
		}
	}
}
