package binder

import (
	"context"
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/cache"
	"github.com/volbind/volbind/internal/pvindex"
)

// maxMatchAttempts bounds how often a claim sync searches again because the
// volume it chose changed before it could lock it.
const maxMatchAttempts = 5

// errVolumeChurn is returned when the chosen volume kept changing; the
// claim is retried later.
var errVolumeChurn = errors.New("binder: the chosen volume kept changing")

// syncClaim decides what to do with a claim: Kubernetes' syncClaim. The
// claim is the cached version; it is never mutated.
func (b *Binder) syncClaim(ctx context.Context, claim *v1.PersistentVolumeClaim) error {
	if v := klog.FromContext(ctx).V(4); v.Enabled() {
		v.Info("Synchronizing PersistentVolumeClaim", "PVC", klog.KObj(claim),
			"phase", claim.Status.Phase, "volumeName", claim.Spec.VolumeName)
	}
	claim, err := b.annealClaimMigration(ctx, claim)
	if err != nil {
		return err
	}
	bindCompleted := metav1.HasAnnotation(claim.ObjectMeta, volume.AnnBindCompleted)
	if (bindCompleted || claim.Spec.VolumeName != "") && b.reservations.holds.Load() > 0 {
		// The claim no longer searches: a volume it held is not its
		// to finish (syncVolume rolls back a binding it does not use).
		b.releaseHold(cache.ClaimKey(claim.Namespace, claim.Name), "")
	}
	if !bindCompleted {
		return b.syncUnboundClaim(ctx, claim)
	}
	return b.syncBoundClaim(ctx, claim)
}

// syncUnboundClaim handles a claim that has not completed binding.
func (b *Binder) syncUnboundClaim(ctx context.Context, claim *v1.PersistentVolumeClaim) error {
	if claim.Spec.VolumeName == "" {
		return b.syncUnrequestedClaim(ctx, claim)
	}
	return b.syncRequestedClaim(ctx, claim)
}

// bindTimed is bindReserved, and ends the claim's timed operation (as
// Kubernetes' RecordMetric after bind) when the binding completed or failed.
func (b *Binder) bindTimed(ctx context.Context, pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) (bool, error) {
	bound, err := b.bindReserved(ctx, pv, claim)
	if b.kube != nil && (bound || err != nil) { // no key to build without kube metrics
		b.kube.opEnded(ctx, cache.ClaimKey(claim.Namespace, claim.Name), err)
	}
	return bound, err
}

// syncUnrequestedClaim handles an unbound claim that did not ask for a
// volume: bind it to the best match, or leave it Pending.
func (b *Binder) syncUnrequestedClaim(ctx context.Context, claim *v1.PersistentVolumeClaim) error {
	logger := klog.FromContext(ctx)
	delay, err := b.classes.delayBinding(claim)
	if err != nil {
		return err
	}
	// A volume that points at the claim already is its own first.
	pv, err := b.ownVolume(ctx, claim)
	if err != nil {
		return err
	}
	if pv != nil {
		if bound, err := b.bindTimed(ctx, pv, claim); bound || err != nil {
			return err
		}
	}
	if b.provisioning(claim) {
		// Its storage is being provisioned: the volume the operation
		// saves, pre-bound to the claim's UID, is the claim's first (see
		// ownVolume): saving it, or failing, queues the claim. A volume
		// bound meanwhile (one that became Available, or was pre-bound by
		// name) would leave the provisioned one unneeded: Kubernetes then
		// unbinds it, and a Retain class's storage stays behind as an
		// Available volume nobody asked for (chaos seed 348284).
		logger.V(4).Info("Synchronizing unbound PersistentVolumeClaim, waiting for its provisioning", "PVC", klog.KObj(claim))
		return nil
	}
	pv, err = b.findAndLock(claim, pvindex.FindOptions{DelayBinding: delay})
	if err != nil {
		logger.V(2).Info("Error finding PV for claim", "PVC", klog.KObj(claim), "err", err)
		return fmt.Errorf("binder: error finding PV for claim %q: %w", cache.ClaimKey(claim.Namespace, claim.Name), err)
	}
	if pv != nil {
		if v := logger.V(4); v.Enabled() {
			v.Info("Synchronizing unbound PersistentVolumeClaim, volume found", "PVC", klog.KObj(claim), "volumeName", pv.Name)
		}
		bound, err := b.bindTimed(ctx, pv, claim)
		if !bound && err == nil {
			// A binding to this claim appeared after ownVolume
			// looked, and was rolled back: search again.
			err = errVolumeChurn
		}
		return err
	}

	logger.V(4).Info("Synchronizing unbound PersistentVolumeClaim, no volume found", "PVC", klog.KObj(claim))
	if !delay {
		b.avail.claimUnmatched(cache.ClaimKey(claim.Namespace, claim.Name), claim)
	}
	updated, err := b.assignDefaultStorageClass(ctx, claim)
	if err != nil {
		return fmt.Errorf("binder: can't update PersistentVolumeClaim[%q]: %w", cache.ClaimKey(claim.Namespace, claim.Name), err)
	}
	if updated {
		// Sync it again with its new class. (Kubernetes waits for the
		// update's event, which the Binder finds cached already.)
		b.work.add(claimWork(cache.ClaimKey(claim.Namespace, claim.Name)))
		return nil
	}
	switch {
	case delay && !volume.IsDelayBindingProvisioning(claim):
		if err := b.waitForConsumerEvent(claim); err != nil {
			return err
		}
	case volume.GetPersistentVolumeClaimClass(claim) != "":
		return b.provisionClaim(ctx, claim)
	default:
		b.event(claim, v1.EventTypeNormal, ReasonFailedBinding, msgNoClass)
	}
	_, err = b.updateClaimStatus(ctx, claim, v1.ClaimPending, nil)
	return err
}

// findAndLock finds the best volume for the claim, reserves it against
// other claim workers and locks it. It returns the volume's current
// version (end its reservation with bindReserved or endChoice), or nil
// when nothing matches. The search runs without any lock shared by claim
// workers: it excludes a snapshot of the reservations, and a volume
// reserved meanwhile, or changed before its lock was taken, is searched
// for again.
func (b *Binder) findAndLock(claim *v1.PersistentVolumeClaim, opts pvindex.FindOptions) (*v1.PersistentVolume, error) {
	for range maxMatchAttempts {
		excluded, freed := b.reservations.snapshot()
		opts.Exclude = excluded
		m, err := b.store.index.Find(claim, opts)
		pv := m.Volume()
		missed := err == nil && pv == nil && b.reservations.miss(cache.ClaimKey(claim.Namespace, claim.Name), excluded, freed)
		b.reservations.recycle(excluded)
		switch {
		case err != nil:
			return nil, err
		case missed:
			return nil, nil
		case pv == nil:
			continue // a reserved volume was freed meanwhile
		}
		name := pv.Name
		if !b.reservations.tryReserve(name) {
			continue // another claim worker chose it meanwhile
		}
		b.volumeLocks.Lock(name)
		// The store keeps the index and its cache of volumes in step, so
		// the index tells whether the cached version is still the one
		// found, without looking the name up.
		if cur, ok := b.store.index.Current(m); ok {
			return cur, nil
		}
		// A volume sync changed it while we waited for its lock.
		b.endChoice(name)
	}
	return nil, errVolumeChurn
}

// releaseReservation ends a claim sync's reservation of the named volume
// and queues the claims it may have kept from a volume (see
// reservations.release).
func (b *Binder) releaseReservation(name string) {
	cur, ok := b.store.volume(name)
	for _, key := range b.reservations.release(name, ok && cur.Spec.ClaimRef == nil) {
		b.work.add(claimWork(key))
	}
}

// syncRequestedClaim handles an unbound claim that asked for a volume by
// name (spec.volumeName).
func (b *Binder) syncRequestedClaim(ctx context.Context, claim *v1.PersistentVolumeClaim) error {
	logger := klog.FromContext(ctx)
	name := claim.Spec.VolumeName
	b.volumeLocks.Lock(name)
	defer b.volumeLocks.Unlock(name)
	pv, found := b.store.volume(name)
	if !found {
		logger.V(4).Info("Synchronizing unbound PersistentVolumeClaim, volume requested and not found, will try again next time", "PVC", klog.KObj(claim), "volumeName", name)
		_, err := b.updateClaimStatus(ctx, claim, v1.ClaimPending, nil)
		return err
	}
	if err := validateVolume(pv); err != nil {
		b.warn(claim, ReasonVolumeMismatch, fmt.Sprintf("Cannot bind to requested volume %q: %s", name, err))
		_, err := b.updateClaimStatus(ctx, claim, v1.ClaimPending, nil)
		return err
	}
	switch {
	case pv.Spec.ClaimRef == nil:
		if err := checkVolumeSatisfyClaim(pv, claim); err != nil {
			logger.V(4).Info("Can't bind the claim to volume", "PVC", klog.KObj(claim), "volumeName", name, "err", err)
			b.warn(claim, ReasonVolumeMismatch, fmt.Sprintf("Cannot bind to requested volume %q: %s", name, err))
			_, err := b.updateClaimStatus(ctx, claim, v1.ClaimPending, nil)
			return err
		}
		return b.bind(ctx, pv, claim)
	case volume.IsVolumeBoundToClaim(pv, claim):
		// The volume is pre-bound or bound to this claim: finish the binding.
		return b.bind(ctx, pv, claim)
	case !metav1.HasAnnotation(claim.ObjectMeta, volume.AnnBoundByController):
		// The user asked for a volume bound to someone else: retry later.
		b.warn(claim, ReasonFailedBinding, fmt.Sprintf("volume %q already bound to a different claim.", name))
		_, err := b.updateClaimStatus(ctx, claim, v1.ClaimPending, nil)
		return err
	default:
		// Someone removed bind-completed from a claim the controller bound.
		b.warn(claim, ReasonFailedBinding, fmt.Sprintf("volume %q already bound to a different claim.", name))
		ref := pv.Spec.ClaimRef
		return fmt.Errorf("binder: invalid binding of claim %q to volume %q: volume already claimed by %q",
			cache.ClaimKey(claim.Namespace, claim.Name), name, cache.ClaimKey(ref.Namespace, ref.Name))
	}
}

// syncBoundClaim handles a claim that completed binding once: it keeps it
// bound, or marks it Lost when its volume is gone or bound elsewhere.
func (b *Binder) syncBoundClaim(ctx context.Context, claim *v1.PersistentVolumeClaim) error {
	if claim.Spec.VolumeName == "" {
		_, err := b.updateClaimStatusWithEvent(ctx, claim, v1.ClaimLost, nil, v1.EventTypeWarning, ReasonClaimLost, msgLostReference)
		return err
	}
	name := claim.Spec.VolumeName
	b.volumeLocks.Lock(name)
	defer b.volumeLocks.Unlock(name)
	pv, found := b.store.volume(name)
	switch {
	case !found:
		_, err := b.updateClaimStatusWithEvent(ctx, claim, v1.ClaimLost, nil, v1.EventTypeWarning, ReasonClaimLost, msgLostVolume)
		return err
	case pv.Spec.ClaimRef == nil, pv.Spec.ClaimRef.UID == claim.UID:
		// The volume came unbound (or its update is not seen yet), or all
		// is well: bind writes only what differs, usually nothing.
		return b.bind(ctx, pv, claim)
	default:
		_, err := b.updateClaimStatusWithEvent(ctx, claim, v1.ClaimLost, nil, v1.EventTypeWarning, ReasonClaimMisbound, msgMisbound)
		return err
	}
}

// checkVolumeSatisfyClaim says why a requested, unclaimed volume cannot be
// bound to the claim, with Kubernetes' messages.
func checkVolumeSatisfyClaim(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) error {
	requested := claim.Spec.Resources.Requests[v1.ResourceStorage]
	if pv.DeletionTimestamp != nil {
		return fmt.Errorf("the volume is marked for deletion %q", pv.Name)
	}
	capacity := pv.Spec.Capacity[v1.ResourceStorage]
	if capacity.Value() < requested.Value() {
		return errors.New("requested PV is too small")
	}
	if volume.GetPersistentVolumeClass(pv) != volume.GetPersistentVolumeClaimClass(claim) {
		return errors.New("storageClassName does not match")
	}
	if ptr.Deref(claim.Spec.VolumeAttributesClassName, "") != ptr.Deref(pv.Spec.VolumeAttributesClassName, "") {
		return errors.New("volumeAttributesClassName does not match")
	}
	if volume.CheckVolumeModeMismatches(&claim.Spec, &pv.Spec) {
		return errors.New("incompatible volumeMode")
	}
	if !volume.CheckAccessModes(claim, pv) {
		return errors.New("incompatible accessMode")
	}
	return nil
}

// assignDefaultStorageClass gives a claim without class the default class
// (Kubernetes' retroactive default StorageClass assignment) and reports
// whether it wrote the claim.
func (b *Binder) assignDefaultStorageClass(ctx context.Context, claim *v1.PersistentVolumeClaim) (bool, error) {
	if volume.PersistentVolumeClaimHasClass(claim) {
		return false, nil
	}
	sc := b.classes.defaultClass()
	if sc == nil {
		return false, nil
	}
	clone := claim.DeepCopy()
	clone.Spec.StorageClassName = ptr.To(sc.Name)
	_, err := b.writeClaim(ctx, clone)
	b.kube.retroactiveAssigned(err)
	if err != nil {
		return false, err
	}
	klog.FromContext(ctx).V(4).Info("Assigned default StorageClass to PersistentVolumeClaim", "PVC", klog.KObj(claim), "storageClassName", sc.Name)
	return true, nil
}

// waitForConsumerEvent records why a claim of a WaitForFirstConsumer class
// waits, as Kubernetes' emitEventForUnboundDelayBindingClaim: the pods that
// use it and wait to be scheduled (WaitForPodScheduled), or, when there are
// none (or Config.Pods is nil), its first consumer (WaitForFirstConsumer).
func (b *Binder) waitForConsumerEvent(claim *v1.PersistentVolumeClaim) error {
	pods, err := b.unscheduledPodsUsing(claim.Namespace, claim.Name)
	if err != nil {
		return err
	}
	switch len(pods) {
	case 0:
		b.event(claim, v1.EventTypeNormal, ReasonWaitForFirstConsumer, msgWaitForConsumer)
	case 1:
		b.event(claim, v1.EventTypeNormal, ReasonWaitForPodScheduled, fmt.Sprintf("waiting for pod %s to be scheduled", pods[0]))
	default:
		b.event(claim, v1.EventTypeNormal, ReasonWaitForPodScheduled, fmt.Sprintf("waiting for pods %s to be scheduled", strings.Join(pods, ",")))
	}
	return nil
}
