package binder

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/cache"
)

// A volume whose claimRef names a claim by UID is that claim's before any
// search: the claim's sync completes (or rolls back) that binding before it
// looks for another volume or writes anything else for the claim (a
// default class, a provisioning, a Pending status), and no other claim
// sync may reserve it. The functions below implement that rule.

// errClaimedVolumeReserved is returned when a volume bound to the claim is
// reserved by another claim's sync, which chose it before its claimRef was
// seen; the claim is retried.
var errClaimedVolumeReserved = errors.New("binder: the volume bound to the claim is reserved by another claim's sync")

// ownVolume returns, reserved against other claim syncs and locked, the
// volume that is the claim's already: the volume of the claim's hold (see
// reservations) once it is known to point at the claim, or else a volume
// the cache shows bound to the claim's UID, a binding an earlier sync
// began. A hold whose volume
// the cache does not show bound to the claim is resolved by reading the
// volume; when that read fails the hold stays and the error is returned,
// so that nothing else is decided for the claim. It returns nil when no
// volume is the claim's; end the reservation of what it returns with
// bindReserved or endChoice.
func (b *Binder) ownVolume(ctx context.Context, claim *v1.PersistentVolumeClaim) (*v1.PersistentVolume, error) {
	// key serves lookups only, so that it can live on the stack (one
	// allocation fewer per binding); the rare paths that keep a key or
	// put it in an error build their own (claimKeyOf).
	key := cache.ClaimKey(claim.Namespace, claim.Name)
	name, held := b.reservations.takeHold(key, claim.UID)
	if name != "" && !held {
		b.releaseReservation(name) // the hold of a deleted claim of this name
		name = ""
	}
	if name == "" {
		if name = b.boundTo(claim); name == "" {
			return nil, nil
		}
		if !b.reservations.tryReserve(name) {
			// Another claim's sync chose it before its claimRef was
			// cached; that sync's write conflicts. Try again later.
			return nil, fmt.Errorf("%w: volume %q, bound to claim %q", errClaimedVolumeReserved, name, claimKeyOf(claim))
		}
	}
	b.volumeLocks.Lock(name)
	pv, ok := b.store.volume(name)
	if held && (!ok || !boundToUID(pv, claim)) {
		fresh, err := b.api.GetVolume(ctx, name)
		switch {
		case err == nil:
			b.keepVolume(ctx, fresh)
			pv, ok = b.store.volume(name)
		case apierrors.IsNotFound(err):
			ok = false
		default:
			b.volumeLocks.Unlock(name)
			b.reservations.hold(claimKeyOf(claim), claim.UID, name)
			return nil, fmt.Errorf("binder: read volume %q, which claim %q may be bound to: %w", name, claimKeyOf(claim), err)
		}
	}
	if !ok || !boundToUID(pv, claim) {
		b.endChoice(name)
		return nil, nil
	}
	return pv, nil
}

// boundTo returns the name of a cached volume bound to the claim's UID
// (the first by name), or "".
func (b *Binder) boundTo(claim *v1.PersistentVolumeClaim) string {
	for _, name := range b.store.index.ClaimedBy(claim.Namespace, claim.Name, "") {
		if pv, ok := b.store.volume(name); ok && boundToUID(pv, claim) {
			return name
		}
	}
	return ""
}

// boundToUID reports whether pv's claimRef names claim, UID included.
func boundToUID(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) bool {
	ref := pv.Spec.ClaimRef
	return ref != nil && ref.UID == claim.UID && ref.Name == claim.Name && ref.Namespace == claim.Namespace
}

// bindReserved binds claim to pv, a volume its sync reserved and locked
// (ownVolume, findAndLock), and ends the reservation and the lock. A
// volume bound to the claim's UID already must still satisfy the claim.
// When the Binder chose it by a search (chosenBySearch), all of its
// matching rules (fitsClaim) apply, and one that no longer does (the claim
// got a class, or the volume changed, since) has that binding rolled back;
// bound is false. A volume a user pre-bound or that was provisioned for
// the claim gets Kubernetes' rules for a pre-bound volume (fitsPrebound);
// one that fails them is left as it is, as Kubernetes' FindMatchingVolume
// skips it, and bound is false. When
// the write of the volume's claimRef fails in a way that may have been
// carried out, the reservation becomes the claim's hold, resolved by its
// next sync.
func (b *Binder) bindReserved(ctx context.Context, pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) (bound bool, err error) {
	name := pv.Name
	if boundToUID(pv, claim) {
		if !chosenBySearch(pv) {
			if ferr := fitsPrebound(pv, claim); ferr != nil {
				// As Kubernetes' FindMatchingVolume skips it: the claim
				// searches on, and the volume keeps its claimRef.
				klog.FromContext(ctx).V(4).Info("Volume pre-bound to claim does not fit it", "PVC", klog.KObj(claim), "volumeName", name, "reason", ferr)
				b.endChoice(name)
				return false, nil
			}
		} else if ferr := fitsClaim(pv, claim); ferr != nil {
			klog.FromContext(ctx).V(2).Info("Volume bound to claim no longer matches it, rolling back", "PVC", klog.KObj(claim), "volumeName", name, "reason", ferr)
			err := b.unbindVolume(ctx, pv)
			b.endChoice(name)
			return false, err
		}
	}
	err = b.bind(ctx, pv, claim)
	cur, ok := b.store.volume(name)
	hold := err != nil && mayHaveApplied(err) && (!ok || !boundToUID(cur, claim))
	if !hold {
		b.endChoice(name)
		return true, err
	}
	b.volumeLocks.Unlock(name)
	b.reservations.hold(cache.ClaimKey(claim.Namespace, claim.Name), claim.UID, name)
	return true, err
}

// chosenBySearch reports whether pv's claimRef was set by a Binder's
// search (bound-by-controller), not by a user's pre-binding or by the
// provisioning of pv for the claim: a provisioned volume is pre-bound at
// creation and, as in Kubernetes' FindMatchingVolume, binds under the
// pre-bound rules (a claim's selector, which provisioning ignores, does not
// apply to it).
func chosenBySearch(pv *v1.PersistentVolume) bool {
	return metav1.HasAnnotation(pv.ObjectMeta, volume.AnnBoundByController) &&
		!metav1.HasAnnotation(pv.ObjectMeta, volume.AnnDynamicallyProvisioned)
}

// endChoice unlocks a volume a claim sync reserved and locked and ends the
// reservation.
func (b *Binder) endChoice(name string) {
	b.volumeLocks.Unlock(name)
	b.releaseReservation(name)
}

// releaseHold ends the hold of the claim with key when it is of uid (any
// UID when uid is empty): the claim was deleted, or asks for a volume by
// name or completed a binding, so that the held volume is no longer its
// to finish.
func (b *Binder) releaseHold(key string, uid types.UID) {
	if name := b.reservations.dropHold(key, uid); name != "" {
		b.releaseReservation(name)
	}
}

// fitsClaim says why a volume the Binder bound to the claim no longer
// satisfies it (Kubernetes' checks of a requested volume, plus the claim's
// selector), or returns nil. A volume a user pre-bound is not checked: as
// in Kubernetes, its claim takes it whatever its class and labels.
func fitsClaim(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) error {
	if err := checkVolumeSatisfyClaim(pv, claim); err != nil {
		return err
	}
	if claim.Spec.Selector == nil {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(claim.Spec.Selector)
	if err != nil {
		return fmt.Errorf("invalid selector: %w", err)
	}
	if !sel.Matches(labels.Set(pv.Labels)) {
		return errors.New("the volume's labels do not match the claim's selector")
	}
	return nil
}

// fitsPrebound says why a volume a user pre-bound to the claim cannot be
// bound to it, with the checks Kubernetes' FindMatchingVolume makes of a
// pre-bound volume (not its class, selector or phase), or returns nil. The
// PV controller looks for it only among the volumes whose access modes
// include the claim's, so those are checked too.
func fitsPrebound(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) error {
	requested := claim.Spec.Resources.Requests[v1.ResourceStorage]
	capacity := pv.Spec.Capacity[v1.ResourceStorage]
	switch {
	case pv.DeletionTimestamp != nil:
		return fmt.Errorf("the volume is marked for deletion %q", pv.Name)
	case capacity.Cmp(requested) < 0:
		return errors.New("requested PV is too small")
	case volume.CheckVolumeModeMismatches(&claim.Spec, &pv.Spec):
		return errors.New("incompatible volumeMode")
	case ptr.Deref(claim.Spec.VolumeAttributesClassName, "") != ptr.Deref(pv.Spec.VolumeAttributesClassName, ""):
		return errors.New("volumeAttributesClassName does not match")
	case !volume.CheckAccessModes(claim, pv):
		return errors.New("incompatible accessMode")
	}
	return nil
}

// mayHaveApplied reports whether a write that failed with err may still
// have been carried out (a timeout, a lost connection, an internal error):
// every error but the answers the API server gives before it changes
// anything, and a refusal of the Fence.
func mayHaveApplied(err error) bool {
	switch {
	case errors.Is(err, ErrFenced), apierrors.IsConflict(err), apierrors.IsNotFound(err), apierrors.IsInvalid(err),
		apierrors.IsAlreadyExists(err), apierrors.IsForbidden(err), apierrors.IsUnauthorized(err),
		apierrors.IsBadRequest(err), apierrors.IsTooManyRequests(err), apierrors.IsGone(err):
		return false
	}
	return true
}
