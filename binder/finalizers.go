package binder

import (
	"context"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2"
)

// FinalizerPVController is the finalizer Kubernetes' PV controller keeps on
// the volumes whose storage it must delete (component-helpers'
// PVDeletionInTreeProtectionFinalizer): the volume object is not removed
// before the storage is.
const FinalizerPVController = volume.PVDeletionInTreeProtectionFinalizer

// deletesStorageOf reports whether this Binder deletes the storage of the
// volumes provisioned by provisioner, which decides whether it keeps
// FinalizerPVController on them. Kubernetes asks whether the provisioner is
// an in-tree plugin, a name starting with "kubernetes.io/"; the Binder's
// in-tree plugins are also those the embedder registered under any name
// (a Deleter, or a Provisioner). Without Config.Reclaim the Binder deletes
// no storage, and keeps no finalizer that nothing would remove.
func (b *Binder) deletesStorageOf(provisioner string) bool {
	if b.cfg.Reclaim == nil {
		return false
	}
	if strings.HasPrefix(provisioner, "kubernetes.io/") {
		return true
	}
	if _, ok := b.cfg.Reclaim.Deleters[provisioner]; ok {
		return true
	}
	if p := b.cfg.Provisioning; p != nil {
		_, ok := p.Provisioners[provisioner]
		return ok
	}
	return false
}

// deletionFinalizers returns the finalizers pv should have and whether they
// differ from its own, as Kubernetes' modifyDeletionFinalizers: only a
// dynamically provisioned volume is considered; one whose provisioner is
// migrated to CSI loses FinalizerPVController (the CSI external
// provisioner keeps its own); one the Binder deletes the storage of gets
// FinalizerPVController with the Delete policy, loses it with Retain or
// Recycle, and loses the external provisioner's finalizer (a migration
// rolled back). pv.Finalizers is not modified.
func (b *Binder) deletionFinalizers(pv *v1.PersistentVolume) ([]string, bool) {
	provisioner, ok := pv.Annotations[volume.AnnDynamicallyProvisioned]
	if !ok || b.cfg.Reclaim == nil {
		return nil, false
	}
	has := slices.Contains(pv.Finalizers, FinalizerPVController)
	if b.cfg.CSIMigration.IsMigrationEnabledForPlugin(provisioner) {
		if !has {
			return nil, false
		}
		return withoutFinalizer(pv.Finalizers, FinalizerPVController), true
	}
	if !b.deletesStorageOf(provisioner) {
		return nil, false
	}
	out, changed := pv.Finalizers, false
	switch policy := pv.Spec.PersistentVolumeReclaimPolicy; {
	case policy == v1.PersistentVolumeReclaimDelete && !has && addsFinalizer(pv):
		out, changed = append(slices.Clone(out), FinalizerPVController), true
	case (policy == v1.PersistentVolumeReclaimRetain || policy == v1.PersistentVolumeReclaimRecycle) && has:
		out, changed = withoutFinalizer(out, FinalizerPVController), true
	}
	if slices.Contains(out, volume.PVDeletionProtectionFinalizer) {
		out, changed = withoutFinalizer(out, volume.PVDeletionProtectionFinalizer), true
	}
	return out, changed
}

// addsFinalizer reports whether FinalizerPVController may be added to pv:
// not to a volume being deleted (the API server refuses new finalizers
// then), and not to a Released or Failed one, whose deletion operation
// removes the finalizer just before it deletes the object: Kubernetes adds
// it there too, and a sync between those two writes puts it back, so that
// the storage is deleted twice. Volumes are finalized while Available or
// Bound, which is when a user's deletion must wait for the reclaim.
func addsFinalizer(pv *v1.PersistentVolume) bool {
	if pv.DeletionTimestamp != nil {
		return false
	}
	return pv.Status.Phase != v1.VolumeReleased && pv.Status.Phase != v1.VolumeFailed
}

// withoutFinalizer returns a copy of finalizers without f, nil when empty.
func withoutFinalizer(finalizers []string, f string) []string {
	out := slices.DeleteFunc(slices.Clone(finalizers), func(x string) bool { return x == f })
	if len(out) == 0 {
		return nil
	}
	return out
}

// annealVolume writes pv's migrated-to annotation and deletion finalizers
// when they are not what they should be, in one write, as Kubernetes'
// updateVolumeMigrationAnnotationsAndFinalizers at the start of every
// volume sync. A volume that was not dynamically provisioned costs nothing.
// It returns the volume to continue the sync with.
func (b *Binder) annealVolume(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	if _, ok := pv.Annotations[volume.AnnDynamicallyProvisioned]; !ok {
		return pv, nil
	}
	logger := klog.FromContext(ctx)
	ann, annChanged := migratedVolumeAnnotations(logger, b.cfg.CSIMigration, pv.Annotations)
	finalizers, finChanged := b.deletionFinalizers(pv)
	if !annChanged && !finChanged {
		return pv, nil
	}
	clone := shallowVolume(pv)
	if annChanged {
		clone.Annotations = ann
	}
	if finChanged {
		logger.V(4).Info("Updating deletion finalizers of volume", "volumeName", pv.Name, "finalizers", finalizers)
		clone.Finalizers = finalizers
	}
	out, err := b.writeVolume(ctx, clone)
	if err != nil {
		return nil, fmt.Errorf("persistent Volume Controller can't anneal migration annotations or finalizer: %w", err)
	}
	return out, nil
}

// provisionedFinalizers returns the finalizers of a volume the Binder is
// about to create for a claim: Kubernetes adds FinalizerPVController to the
// volumes it provisions with the Delete policy, here when the Binder will
// delete their storage (deletesStorageOf).
func (b *Binder) provisionedFinalizers(pv *v1.PersistentVolume, provisioner string) []string {
	if pv.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimDelete || !b.deletesStorageOf(provisioner) ||
		slices.Contains(pv.Finalizers, FinalizerPVController) {
		return pv.Finalizers
	}
	return append(slices.Clone(pv.Finalizers), FinalizerPVController)
}
