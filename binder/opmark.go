package binder

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// AnnOperation marks a released volume whose storage a Binder is deleting
// or recycling. Its value is JSON: {"op":"delete"|"recycle","owner":
// Config.Identity,"start":RFC 3339 time}, plus "done":true once a Deleter
// has deleted the storage. The Binder writes it with a conditional
// (resourceVersion-checked) update right before it calls the Deleter or
// the VolumeRecycler, and another Binder that finds a mark of another
// owner younger than its Config.OperationMarkTTL does not start the
// operation: two instances that overlap (a leader-election handover) never
// delete or scrub one volume at the same time. After the Deleter succeeded,
// the mark says "done" (in the write that removes FinalizerPVController, or,
// for a volume without it, when the volume object cannot be deleted at
// once), and no Binder calls a Deleter for that volume again: a restarted
// one only removes the finalizer and deletes the object. Deletion removes
// the mark with the volume; a recycled volume loses it when it is made
// Available. Kubernetes has no such mark: it relies on leader election
// alone, and calls the Deleter again after any failure that follows it; a
// negative Config.OperationMarkTTL turns the mark off (a Binder then
// remembers deleted storage only in memory).
const AnnOperation = "volbind.io/operation"

// DefaultOperationMarkTTL is the default Config.OperationMarkTTL.
const DefaultOperationMarkTTL = 5 * time.Minute

// operationMark is the value of AnnOperation.
type operationMark struct {
	Op    string    `json:"op"`
	Owner string    `json:"owner"`
	Start time.Time `json:"start"`
	// Done says that the operation's storage call (the Deleter's Delete)
	// succeeded.
	Done bool `json:"done,omitempty"`
}

// markOf returns the AnnOperation mark of pv and whether it has a readable
// one.
func markOf(pv *v1.PersistentVolume) (operationMark, bool) {
	raw, ok := pv.Annotations[AnnOperation]
	if !ok {
		return operationMark{}, false
	}
	var m operationMark
	if json.Unmarshal([]byte(raw), &m) != nil {
		return operationMark{}, false
	}
	return m, true
}

// storageDeletedMark reports whether pv's mark says a Deleter deleted its
// storage (whichever Binder wrote it).
func storageDeletedMark(pv *v1.PersistentVolume) bool {
	m, ok := markOf(pv)
	return ok && m.Op == opDelete && m.Done
}

// withDeletedMark returns a copy of pv whose mark says its storage was
// deleted (keeping the start of this Binder's mark) and that no longer has
// FinalizerPVController. It returns nil when pv says so already, or when
// marks are off and there is no finalizer to remove.
func (b *Binder) withDeletedMark(pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	hasFinalizer := slices.Contains(pv.Finalizers, FinalizerPVController)
	markIt := b.cfg.OperationMarkTTL >= 0 && !storageDeletedMark(pv)
	if !hasFinalizer && !markIt {
		return nil, nil
	}
	clone := shallowVolume(pv)
	if hasFinalizer {
		clone.Finalizers = withoutFinalizer(pv.Finalizers, FinalizerPVController)
	}
	if markIt {
		m, ok := markOf(pv)
		if !ok || m.Owner != b.cfg.Identity || m.Op != opDelete {
			m = operationMark{Op: opDelete, Owner: b.cfg.Identity, Start: b.cfg.Clock.Now().UTC().Truncate(time.Second)}
		}
		m.Done = true
		value, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		clone.Annotations = make(map[string]string, len(pv.Annotations)+1)
		maps.Copy(clone.Annotations, pv.Annotations)
		clone.Annotations[AnnOperation] = string(value)
	}
	return clone, nil
}

// markOperation writes this Binder's mark for op on pv, conditional on pv's
// resourceVersion, and returns the marked volume (pv itself when it bears
// this Binder's mark for op already, or when marks are off). It returns (nil, nil)
// when another owner's fresh mark is on pv: that instance runs the
// operation, and a sync after the mark has expired looks again. A
// Conflict means pv changed meanwhile: the version read after the
// conflict is marked instead, if it is still the same release (a few
// attempts); otherwise the operation fails and its retry reads again.
func (b *Binder) markOperation(ctx context.Context, pv *v1.PersistentVolume, op string) (*v1.PersistentVolume, error) {
	if b.cfg.OperationMarkTTL < 0 {
		return pv, nil
	}
	for attempt := 0; ; attempt++ {
		out, err := b.markOnce(ctx, pv, op)
		if !isConflict(err) || attempt == markAttempts-1 {
			return out, err
		}
		// The conflict has refreshed the cache: mark that version if it
		// is still the same release of the same volume.
		fresh, ok := b.store.volume(pv.Name)
		if !ok || !sameRelease(fresh, pv) {
			return nil, err
		}
		pv = fresh
	}
}

// markAttempts bounds markOperation's attempts after conflicts.
const markAttempts = 3

// sameRelease reports whether a and b are the same volume released by the
// same claim under the same reclaim policy.
func sameRelease(a, b *v1.PersistentVolume) bool {
	ra, rb := a.Spec.ClaimRef, b.Spec.ClaimRef
	return a.UID == b.UID && a.Spec.PersistentVolumeReclaimPolicy == b.Spec.PersistentVolumeReclaimPolicy &&
		ra != nil && rb != nil && ra.UID == rb.UID && a.DeletionTimestamp == nil &&
		(a.Status.Phase == v1.VolumeReleased || a.Status.Phase == v1.VolumeFailed)
}

// markOnce is one attempt of markOperation.
func (b *Binder) markOnce(ctx context.Context, pv *v1.PersistentVolume, op string) (*v1.PersistentVolume, error) {
	logger := klog.FromContext(ctx)
	now := b.cfg.Clock.Now()
	if raw, ok := pv.Annotations[AnnOperation]; ok {
		var m operationMark
		switch err := json.Unmarshal([]byte(raw), &m); {
		case err != nil:
			logger.V(2).Info("Replacing unreadable operation mark", "volumeName", pv.Name, "annotation", AnnOperation, "value", raw, "err", err)
		case m.Owner == b.cfg.Identity && m.Op == op:
			// Ours, from an earlier attempt or before a restart.
			return pv, nil
		case m.Owner != b.cfg.Identity && now.Sub(m.Start) < b.cfg.OperationMarkTTL && m.Start.Sub(now) < b.cfg.OperationMarkTTL:
			logger.V(3).Info("Another instance runs the operation, skipping", "volumeName", pv.Name,
				"operation", m.Op, "owner", m.Owner, "started", m.Start)
			return nil, nil
		}
	}
	value, err := json.Marshal(operationMark{Op: op, Owner: b.cfg.Identity, Start: now.UTC().Truncate(time.Second)})
	if err != nil {
		return nil, err
	}
	clone := shallowVolume(pv)
	clone.Annotations = make(map[string]string, len(pv.Annotations)+1)
	maps.Copy(clone.Annotations, pv.Annotations)
	clone.Annotations[AnnOperation] = string(value)
	return b.writeVolume(ctx, clone)
}
