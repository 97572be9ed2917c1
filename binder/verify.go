package binder

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// An informer that relists reports the deletion of the object it last
// knew under a name. When an object was deleted, re-created and deleted
// again while the watch was down, that is the first object's deletion
// (often a DeletedFinalStateUnknown) — and the Binder may hold the second
// one, learned from a read or from its own writes, of which no event ever
// comes. The delete event cannot remove it (an event for one UID never
// touches another's state), so it marks the key instead, and the key's
// next sync reads it once: NotFound forgets the cached object as its own
// delete event would (releasing its volume or losing its claim), another
// object replaces it, and the same object is synced as it is. Chaos seed
// 354727 kept a deleted claim's volume Bound for ever without this.

// verifyClaim runs the verification read of a claim key marked by a
// delete event of another UID, under the key's lock. A failed read marks
// the key again and is returned, so that the sync is retried.
func (b *Binder) verifyClaim(ctx context.Context, key string) error {
	if !b.store.takeVerify(b.store.verifyClaims, key) {
		return nil
	}
	cached, ok := b.store.claim(key)
	if !ok {
		return nil
	}
	fresh, err := b.getClaim(ctx, cached.Namespace, cached.Name)
	if err != nil {
		b.store.markVerify(b.store.verifyClaims, key)
		return err
	}
	if fresh == nil || fresh.UID != cached.UID {
		b.claimNotFound(ctx, cached)
	}
	if fresh != nil {
		b.keepClaim(ctx, fresh)
	}
	return nil
}

// verifyVolume is verifyClaim for volumes.
func (b *Binder) verifyVolume(ctx context.Context, name string) error {
	if !b.store.takeVerify(b.store.verifyVolumes, name) {
		return nil
	}
	cached, ok := b.store.volume(name)
	if !ok {
		return nil
	}
	fresh, err := b.api.GetVolume(ctx, name)
	if apierrors.IsNotFound(err) {
		fresh, err = nil, nil
	}
	if err != nil {
		b.store.markVerify(b.store.verifyVolumes, name)
		return err
	}
	if fresh == nil || fresh.UID != cached.UID {
		b.volumeNotFound(ctx, cached)
	}
	if fresh != nil {
		b.keepVolume(ctx, fresh)
	}
	return nil
}
