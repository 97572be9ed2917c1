package binder

import (
	"context"
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/storage/volume"
	csitrans "k8s.io/csi-translation-lib"
	"k8s.io/klog/v2"
)

// CSIMigration says which in-tree volume plugins ("kubernetes.io/gce-pd",
// ...) are migrated to a CSI driver, and to which: kube-controller-manager's
// CSI migration plugin manager and name translator. Implementations must be
// safe for concurrent use and must not block.
type CSIMigration interface {
	// IsMigrationEnabledForPlugin reports whether the in-tree plugin
	// pluginName is migrated to CSI.
	IsMigrationEnabledForPlugin(pluginName string) bool
	// GetCSINameFromInTreeName returns the CSI driver that took over the
	// in-tree plugin pluginName, or an error when there is none.
	GetCSINameFromInTreeName(pluginName string) (string, error)
}

// TranslationLibMigration is the CSIMigration of Kubernetes v1.37: every
// in-tree plugin k8s.io/csi-translation-lib can translate (AWS EBS, GCE PD,
// Azure Disk, Azure File, Cinder, vSphere, Portworx) is migrated to its
// CSI driver, except the plugins named in Disabled. The zero value migrates
// them all, as kube-controller-manager does.
type TranslationLibMigration struct {
	// Disabled are in-tree plugin names whose volumes stay with the
	// Binder's own Provisioners and Deleters. Not modified.
	Disabled []string
}

var _ CSIMigration = TranslationLibMigration{}

// IsMigrationEnabledForPlugin reports whether csi-translation-lib knows
// pluginName and it is not disabled.
func (m TranslationLibMigration) IsMigrationEnabledForPlugin(pluginName string) bool {
	return !slices.Contains(m.Disabled, pluginName) && csitrans.New().IsMigratableIntreePluginByName(pluginName)
}

// GetCSINameFromInTreeName returns csi-translation-lib's CSI driver of
// pluginName.
func (TranslationLibMigration) GetCSINameFromInTreeName(pluginName string) (string, error) {
	return csitrans.New().GetCSINameFromInTreeName(pluginName)
}

// NoCSIMigration is a CSIMigration under which no plugin is migrated: every
// volume and claim is handled by the Binder's Provisioners and Deleters (or
// left to the external provisioner its name designates).
type NoCSIMigration struct{}

var _ CSIMigration = NoCSIMigration{}

// IsMigrationEnabledForPlugin returns false.
func (NoCSIMigration) IsMigrationEnabledForPlugin(string) bool { return false }

// GetCSINameFromInTreeName returns an error.
func (NoCSIMigration) GetCSINameFromInTreeName(pluginName string) (string, error) {
	return "", fmt.Errorf("CSI migration is disabled for plugin %s", pluginName)
}

// migratedAnnotations returns ann with pv.kubernetes.io/migrated-to set to
// the CSI driver of the provisioner it names (claims: the
// volume.kubernetes.io/storage-provisioner annotation, or its beta key;
// volumes: pv.kubernetes.io/provisioned-by) when that provisioner is
// migrated, and without migrated-to when it is not (a migration rolled
// back), as Kubernetes' updateMigrationAnnotations. ann is not modified; a
// copy is returned with true only when something changes.
// migratedClaimAnnotations and migratedVolumeAnnotations are it for the
// annotations of a claim and of a volume.
func migratedClaimAnnotations(logger klog.Logger, m CSIMigration, ann map[string]string) (map[string]string, bool) {
	provisioner, ok := ann[volume.AnnStorageProvisioner]
	if !ok {
		provisioner, ok = ann[volume.AnnBetaStorageProvisioner]
	}
	if !ok {
		return nil, false
	}
	return migratedAnnotations(logger, m, ann, provisioner)
}

func migratedVolumeAnnotations(logger klog.Logger, m CSIMigration, ann map[string]string) (map[string]string, bool) {
	provisioner, ok := ann[volume.AnnDynamicallyProvisioned]
	if !ok {
		return nil, false
	}
	return migratedAnnotations(logger, m, ann, provisioner)
}

// migratedAnnotations is the common part: provisioner is the one ann names.
func migratedAnnotations(logger klog.Logger, m CSIMigration, ann map[string]string, provisioner string) (map[string]string, bool) {
	current := ann[volume.AnnMigratedTo]
	if m.IsMigrationEnabledForPlugin(provisioner) {
		driver, err := m.GetCSINameFromInTreeName(provisioner)
		if err != nil {
			logger.Error(err, "Could not update volume migration annotations. Migration enabled for plugin but could not find corresponding driver name", "plugin", provisioner)
			return nil, false
		}
		if current == driver {
			return nil, false
		}
		out := maps.Clone(ann)
		out[volume.AnnMigratedTo] = driver
		return out, true
	}
	if current == "" {
		return nil, false
	}
	out := maps.Clone(ann)
	delete(out, volume.AnnMigratedTo)
	return out, true
}

// annealClaimMigration writes the claim's migrated-to annotation when it
// is not what the claim's provisioner asks for, as Kubernetes'
// updateClaimMigrationAnnotations at the start of every claim sync. It
// returns the claim to continue the sync with.
func (b *Binder) annealClaimMigration(ctx context.Context, claim *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	ann, changed := migratedClaimAnnotations(klog.FromContext(ctx), b.cfg.CSIMigration, claim.Annotations)
	if !changed {
		return claim, nil
	}
	clone := shallowClaim(claim)
	clone.Annotations = ann
	out, err := b.writeClaim(ctx, clone)
	if err != nil {
		return nil, fmt.Errorf("persistent Volume Controller can't anneal migration annotations: %w", err)
	}
	return out, nil
}
