package binder

import (
	"context"
	"time"

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
//
// The same object found may still be deleted unseen: a reordered watch
// that delivered its add before its predecessor's delete leaves the
// informer without the key (an informer deletes by key), and an informer
// drops the delete event of a key it does not hold. So the key is read
// again at its first sync a resync period later, and so on, until an event
// of the object shows that the informer holds it (chaos seed 611924).

// verifyClaim runs the verification read of a claim key marked by a
// delete event of another UID, under the key's lock. A failed read marks
// the key again and is returned, so that the sync is retried.
func (b *Binder) verifyClaim(ctx context.Context, key string) error {
	if !b.store.takeVerify(claimKey, key) {
		return nil
	}
	cached, ok := b.store.claim(key)
	if !ok {
		b.store.unmarkVerify(claimKey, key)
		return nil
	}
	fresh, err := b.getClaim(ctx, cached.Namespace, cached.Name)
	if err != nil {
		b.store.retryVerify(claimKey, key)
		return err
	}
	if fresh == nil || fresh.UID != cached.UID {
		b.claimNotFound(ctx, cached)
	} else {
		b.store.verifyAgain(claimKey, key, b.verifyPeriod())
	}
	if fresh != nil {
		b.keepClaim(ctx, fresh)
	}
	return nil
}

// verifyVolume is verifyClaim for volumes.
func (b *Binder) verifyVolume(ctx context.Context, name string) error {
	if !b.store.takeVerify(volumeKey, name) {
		return nil
	}
	cached, ok := b.store.volume(name)
	if !ok {
		b.store.unmarkVerify(volumeKey, name)
		return nil
	}
	fresh, err := b.api.GetVolume(ctx, name)
	if apierrors.IsNotFound(err) {
		fresh, err = nil, nil
	}
	if err != nil {
		b.store.retryVerify(volumeKey, name)
		return err
	}
	if fresh == nil || fresh.UID != cached.UID {
		b.volumeNotFound(ctx, cached)
	} else {
		b.store.verifyAgain(volumeKey, name, b.verifyPeriod())
	}
	if fresh != nil {
		b.keepVolume(ctx, fresh)
	}
	return nil
}

// verifyPeriod is how long after a verification read that found the cached
// object the next one is due: the resync period, so that the key's resyncs
// read it at most once per period.
func (b *Binder) verifyPeriod() time.Duration {
	if b.cfg.ResyncPeriod > 0 {
		return b.cfg.ResyncPeriod
	}
	return DefaultResyncPeriod
}
