package scheduling

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	csiplugins "k8s.io/csi-translation-lib/plugins"
	"k8s.io/klog/v2"
)

// translator is the part of k8s.io/csi-translation-lib's CSITranslator
// that Find uses to check an in-tree volume on a node where its plugin is
// migrated to CSI (kube-scheduler's InTreeToCSITranslator).
type translator interface {
	// IsPVMigratable reports whether pv's source is one the library can
	// translate.
	IsPVMigratable(pv *v1.PersistentVolume) bool
	// GetInTreePluginNameFromSpec returns the in-tree plugin of pv (vol
	// is nil).
	GetInTreePluginNameFromSpec(pv *v1.PersistentVolume, vol *v1.Volume) (string, error)
	// TranslateInTreePVToCSI returns a translated copy of pv.
	TranslateInTreePVToCSI(logger klog.Logger, pv *v1.PersistentVolume) (*v1.PersistentVolume, error)
}

// migrationOn reports whether kube-scheduler v1.37.2 translates the
// volumes of an in-tree plugin (isCSIMigrationOnForPlugin: the plugins
// whose migration is GA and locked on).
func migrationOn(plugin string) bool {
	switch plugin {
	case csiplugins.AWSEBSInTreePluginName, csiplugins.GCEPDInTreePluginName, csiplugins.AzureDiskInTreePluginName,
		csiplugins.CinderInTreePluginName, csiplugins.PortworxVolumePluginName:
		return true
	}
	return false
}

// migratedOnNode reports whether csiNode lists plugin in its
// storage.alpha.kubernetes.io/migrated-plugins annotation (a
// comma-separated list, compared as written).
func migratedOnNode(plugin string, csiNode *storagev1.CSINode) bool {
	if csiNode == nil {
		return false
	}
	for p := range strings.SplitSeq(csiNode.Annotations[v1.MigratedPluginsAnnotationKey], ",") {
		if p == plugin {
			return true
		}
	}
	return false
}

// csiNode returns the node's CSINode, or nil when there is none (or no
// lister): kube-scheduler then checks volumes untranslated.
func (b *VolumeBinder) csiNode(ctx context.Context, node *v1.Node) *storagev1.CSINode {
	if b.cfg.CSINodes == nil {
		return nil
	}
	n, err := b.cfg.CSINodes.Get(node.Name)
	if err != nil {
		klog.FromContext(ctx).V(5).Info("No CSINode for the node", "node", klog.KObj(node), "err", err)
		return nil
	}
	return n
}

// translate returns pv translated to its CSI driver when its in-tree
// plugin is migrated on the node of csiNode, as kube-scheduler's
// tryTranslatePVToCSI; otherwise pv itself. translated tells which.
func (b *VolumeBinder) translate(ctx context.Context, pv *v1.PersistentVolume, csiNode *storagev1.CSINode) (_ *v1.PersistentVolume, translated bool, _ error) {
	if !b.translator.IsPVMigratable(pv) {
		return pv, false, nil
	}
	plugin, err := b.translator.GetInTreePluginNameFromSpec(pv, nil)
	if err != nil {
		return nil, false, fmt.Errorf("volume %s: in-tree plugin: %w", pv.Name, err)
	}
	if !migrationOn(plugin) || !migratedOnNode(plugin, csiNode) {
		return pv, false, nil
	}
	out, err := b.translator.TranslateInTreePVToCSI(klog.FromContext(ctx), pv)
	if err != nil {
		return nil, false, fmt.Errorf("volume %s: translate to CSI: %w", pv.Name, err)
	}
	return out, true, nil
}

// volumeFits checks pv's required node affinity against node, translated
// to CSI when its plugin is migrated on the node of csiNode, as
// kube-scheduler checks bound volumes. mismatch says why it does not
// select the node; err is a translation failure.
func (b *VolumeBinder) volumeFits(ctx context.Context, pv *v1.PersistentVolume, csiNode *storagev1.CSINode, node *v1.Node) (mismatch, err error) {
	pv, translated, err := b.translate(ctx, pv, csiNode)
	if err != nil {
		return nil, err
	}
	if translated {
		return b.csiAffinity.check(pv, node), nil
	}
	return b.affinity.check(pv, node), nil
}
