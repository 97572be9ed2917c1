package binder

import (
	"context"
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/cache"
	"github.com/volbind/volbind/operations"
	"github.com/volbind/volbind/zones"
)

// errNoNodes is the error of a selected node when ProvisioningConfig.Nodes
// is nil.
var errNoNodes = errors.New("binder: no NodeGetter configured")

// provisionClaim starts the provisioning of a pending claim of a class that
// no volume matches, as Kubernetes' provisionClaim: a missing class or an
// unregistered "kubernetes.io/" provisioner gets a ProvisioningFailed event
// (retried at the next sync); otherwise an operation named after the claim
// provisions it, internally or by handing it to an external provisioner.
// The claim's status is not written: the operation's writes, or the
// provisioned volume, sync it again.
func (b *Binder) provisionClaim(ctx context.Context, claim *v1.PersistentVolumeClaim) error {
	logger := klog.FromContext(ctx)
	className := volume.GetPersistentVolumeClaimClass(claim)
	pc := b.cfg.Provisioning
	if pc == nil {
		logger.V(4).Info("Claim needs a provisioned volume; provisioning is not enabled", "PVC", klog.KObj(claim), "storageClassName", className)
		return nil
	}
	class, ok := b.classes.get(className)
	if !ok {
		b.warn(claim, ReasonProvisioningFailed, fmt.Sprintf("storageclass.storage.k8s.io %q not found", className))
		return nil
	}
	migrated := b.cfg.CSIMigration.IsMigrationEnabledForPlugin(class.Provisioner)
	var p Provisioner
	if !migrated {
		// A migrated plugin's claims go to its CSI driver's external
		// provisioner, whatever is registered here.
		p = pc.Provisioners[class.Provisioner]
	}
	if p == nil && !migrated && strings.HasPrefix(class.Provisioner, "kubernetes.io/") {
		b.warn(claim, ReasonProvisioningFailed, "no volume plugin matched name: "+class.Provisioner)
		return nil
	}
	namespace, name, uid := claim.Namespace, claim.Name, claim.UID
	key := cache.ClaimKey(namespace, name)
	b.scheduleOperationThen(ctx, operations.ClaimOpName(opProvision, namespace, name, uid), func(ctx context.Context) error {
		claim := b.freshPendingClaim(ctx, namespace, name, uid)
		if claim == nil {
			return nil
		}
		b.kube.opStarted(key, b.provisionPluginName(class), opProvision)
		var err error
		if p == nil {
			err = b.provisionExternal(ctx, claim, class)
		} else {
			err = b.provisionInternal(ctx, claim, class, p)
		}
		if countsAsError(ctx, err) {
			b.kube.opFailed(key)
		}
		return err
	}, func(err error) {
		if err != nil {
			// The claim's syncs waited while the operation ran (see
			// provisioning): let it search again, for a volume that
			// became Available meanwhile, now that the operation no
			// longer counts as running (queued before, its sync could
			// still find it running and wait again, with nothing to
			// queue it after). A success queues it in
			// saveProvisioned; requeuing an operation that ended
			// without provisioning would loop.
			b.work.add(claimWork(key))
		}
	})
	return nil
}

// provisioning reports whether a provisioning operation for the claim (by
// UID) is running.
func (b *Binder) provisioning(claim *v1.PersistentVolumeClaim) bool {
	return b.cfg.Provisioning != nil && b.ops.IsPending(operations.ClaimOpName(opProvision, claim.Namespace, claim.Name, claim.UID))
}

// freshPendingClaim reads the claim from the API and returns it when it is
// still the claim the operation was started for and asks for no volume yet;
// otherwise nil (read errors are logged; the next sync retries).
func (b *Binder) freshPendingClaim(ctx context.Context, namespace, name string, uid types.UID) *v1.PersistentVolumeClaim {
	logger := klog.FromContext(ctx)
	claim, err := b.getClaim(ctx, namespace, name)
	switch {
	case err != nil:
		logger.V(3).Info("Error reading claim", "PVC", klog.KRef(namespace, name), "err", err)
		return nil
	case claim == nil || claim.UID != uid:
		logger.V(3).Info("Claim was deleted or re-created, not provisioning", "PVC", klog.KRef(namespace, name))
		return nil
	case claim.Spec.VolumeName != "":
		logger.V(3).Info("Claim asks for a volume already, not provisioning", "PVC", klog.KRef(namespace, name), "volumeName", claim.Spec.VolumeName)
		return nil
	}
	b.keepClaim(ctx, claim)
	return claim
}

// provisionExternal hands the claim to an external provisioner, as
// Kubernetes' provisionClaimOperationExternal: it annotates the claim with
// the provisioner (the CSI driver of a migrated in-tree plugin) and records
// an ExternalProvisioning event.
func (b *Binder) provisionExternal(ctx context.Context, claim *v1.PersistentVolumeClaim, class *storagev1.StorageClass) error {
	logger := klog.FromContext(ctx)
	provisioner := class.Provisioner
	if b.cfg.CSIMigration.IsMigrationEnabledForPlugin(provisioner) {
		driver, err := b.cfg.CSIMigration.GetCSINameFromInTreeName(provisioner)
		if err != nil {
			msg := fmt.Sprintf("error getting CSI name for In tree plugin %s: %v", provisioner, err)
			logger.V(2).Info(msg)
			b.warn(claim, ReasonProvisioningFailed, msg)
			return err
		}
		provisioner = driver
	}
	out, err := b.setClaimProvisioner(ctx, claim, provisioner)
	if err != nil {
		logger.V(2).Info("Error saving claim", "PVC", klog.KObj(claim), "err", err)
		b.warn(claim, ReasonProvisioningFailed, fmt.Sprintf("Error saving claim: %v", err))
		return err
	}
	b.event(out, v1.EventTypeNormal, ReasonExternalProvisioning, fmt.Sprintf(msgExternal, provisioner))
	return nil
}

// setClaimProvisioner writes the provisioner annotations (GA and beta, and
// the migrated-to annotation as the new value asks) on the claim unless the
// GA annotation names provisioner already, as Kubernetes' setClaimProvisioner:
// a claim that has the GA annotation is not written again for the beta one.
func (b *Binder) setClaimProvisioner(ctx context.Context, claim *v1.PersistentVolumeClaim, provisioner string) (*v1.PersistentVolumeClaim, error) {
	if v, ok := claim.Annotations[volume.AnnStorageProvisioner]; ok && v == provisioner {
		return claim, nil
	}
	clone := shallowClaim(claim)
	clone.Annotations = make(map[string]string, len(claim.Annotations)+2)
	for k, v := range claim.Annotations {
		clone.Annotations[k] = v
	}
	clone.Annotations[volume.AnnBetaStorageProvisioner] = provisioner
	clone.Annotations[volume.AnnStorageProvisioner] = provisioner
	if ann, changed := migratedClaimAnnotations(klog.FromContext(ctx), b.cfg.CSIMigration, clone.Annotations); changed {
		clone.Annotations = ann
	}
	return b.writeClaim(ctx, clone)
}

// provisionInternal provisions the claim with an internal Provisioner, as
// Kubernetes' provisionClaimOperation. It never provisions twice: the
// volume's name depends only on the claim's UID, and a volume of that name
// bound to the claim means an earlier run got that far.
func (b *Binder) provisionInternal(ctx context.Context, claim *v1.PersistentVolumeClaim, class *storagev1.StorageClass, p Provisioner) error {
	logger := klog.FromContext(ctx)
	pc := b.cfg.Provisioning
	saved, err := b.setClaimProvisioner(ctx, claim, class.Provisioner)
	if err != nil {
		logger.V(2).Info("Error saving claim", "PVC", klog.KObj(claim), "err", err)
		return err
	}
	claim = saved
	pvName := ProvisionedVolumeName(claim)
	existing, err := b.api.GetVolume(ctx, pvName)
	switch {
	case err == nil:
		if !provisionedFor(existing, claim) {
			err := fmt.Errorf("volume %q already exists and is not bound to claim %s", pvName, cache.ClaimKey(claim.Namespace, claim.Name))
			b.warn(claim, ReasonProvisioningFailed, err.Error())
			return err
		}
		logger.V(4).Info("Volume already provisioned, skipping", "PVC", klog.KObj(claim), "volumeName", pvName)
		b.keepVolume(ctx, existing)
		if fitsPrebound(existing, claim) == nil {
			// Bind it now rather than at the claim's next resync. One
			// that does not fit the claim (its VolumeAttributesClass,
			// say) never binds to it, as in Kubernetes.
			b.work.add(claimWork(cache.ClaimKey(claim.Namespace, claim.Name)))
		}
		return nil
	case !apierrors.IsNotFound(err):
		return err
	}

	if err := b.checkMountOptions(claim, class, p); err != nil {
		return err
	}
	var node *v1.Node
	if nodeName, ok := claim.Annotations[volume.AnnSelectedNode]; ok {
		if pc.Nodes == nil {
			err = errNoNodes
		} else {
			node, err = pc.Nodes.GetNode(ctx, nodeName)
		}
		if err != nil {
			logger.V(3).Info("Unexpected error getting target node for claim", "node", nodeName, "PVC", klog.KObj(claim), "err", err)
			b.warn(claim, ReasonProvisioningFailed, fmt.Sprintf("Failed to get target node: %v", err))
			return err
		}
	}
	req, err := b.provisionRequest(ctx, claim, class, p, node, pvName)
	if err == nil {
		var pv *v1.PersistentVolume
		if err = b.fenced(ctx); err != nil {
			return err
		}
		start := b.cfg.Clock.Now()
		pv, err = p.Provision(ctx, req)
		if err == nil && pv == nil {
			err = errors.New("provisioner returned no volume")
		}
		b.kube.pluginCall(class.Provisioner, kubeOpPluginProvision, start, err)
		if err == nil {
			return b.saveProvisioned(ctx, claim, class, p, req, pv)
		}
		if ctx.Err() != nil {
			return err
		}
		b.rescheduleProvisioning(ctx, claim)
	}
	logger.V(2).Info("Failed to provision volume for claim", "PVC", klog.KObj(claim), "storageClassName", class.Name, "err", err)
	b.warn(claim, ReasonProvisioningFailed, fmt.Sprintf("Failed to provision volume with StorageClass %q: %v", class.Name, err))
	return err
}

// provisionedFor reports whether pv was provisioned for claim.
func provisionedFor(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim) bool {
	ref := pv.Spec.ClaimRef
	return ref != nil && ref.UID == claim.UID && ref.Namespace == claim.Namespace && ref.Name == claim.Name
}

// provisionRequest gathers what the Provisioner needs: the rounded-up size
// and, for a ZonalProvisioner, the zones.
func (b *Binder) provisionRequest(ctx context.Context, claim *v1.PersistentVolumeClaim, class *storagev1.StorageClass, p Provisioner, node *v1.Node, pvName string) (*ProvisionRequest, error) {
	pc := b.cfg.Provisioning
	size, err := zones.RoundUp(claim.Spec.Resources.Requests[v1.ResourceStorage], pc.AllocationUnit)
	if err != nil {
		return nil, err
	}
	req := &ProvisionRequest{
		VolumeName:        pvName,
		Claim:             claim,
		Class:             class,
		Parameters:        class.Parameters,
		ReclaimPolicy:     ptr.Deref(class.ReclaimPolicy, v1.PersistentVolumeReclaimDelete),
		MountOptions:      class.MountOptions,
		Size:              size,
		SelectedNode:      node,
		AllowedTopologies: class.AllowedTopologies,
		CloudTags: map[string]string{
			CloudTagClaimNamespace: claim.Namespace,
			CloudTagClaimName:      claim.Name,
			CloudTagVolumeName:     pvName,
		},
	}
	zp, ok := p.(ZonalProvisioner)
	if !ok {
		return req, nil
	}
	zr := zones.Request{ClaimName: claim.Name, Replicas: zp.Replicas(class), Class: class, SelectedNode: node}
	req.Zones, err = zones.SelectZones(zr)
	if errors.Is(err, zones.ErrNoZones) && pc.Nodes != nil {
		// The class names no zones: choose among the zones with nodes,
		// listed only now because most classes never need them.
		nodes, lerr := pc.Nodes.ListNodes(ctx)
		if lerr != nil {
			return nil, fmt.Errorf("binder: list nodes: %w", lerr)
		}
		zr.ZonesWithNodes = zones.ZonesWithNodes(nodes)
		req.Zones, err = zones.SelectZones(zr)
	}
	if err != nil {
		return nil, err
	}
	return req, nil
}

// rescheduleProvisioning removes the selected-node annotation after a
// failed provisioning, so that the scheduler chooses a node again, as
// Kubernetes does. Errors are logged only.
func (b *Binder) rescheduleProvisioning(ctx context.Context, claim *v1.PersistentVolumeClaim) {
	if _, ok := claim.Annotations[volume.AnnSelectedNode]; !ok {
		return
	}
	clone := shallowClaim(claim)
	clone.Annotations = make(map[string]string, len(claim.Annotations))
	for k, v := range claim.Annotations {
		if k != volume.AnnSelectedNode {
			clone.Annotations[k] = v
		}
	}
	if _, err := b.writeClaim(ctx, clone); err != nil {
		klog.FromContext(ctx).V(4).Info("Failed to delete the selected-node annotation", "PVC", klog.KObj(claim), "err", err)
	}
}

// checkMountOptions refuses a class with mount options for a Provisioner
// that does not support them (MountOptionsSupport), as Kubernetes does
// before it provisions.
func (b *Binder) checkMountOptions(claim *v1.PersistentVolumeClaim, class *storagev1.StorageClass, p Provisioner) error {
	m, ok := p.(MountOptionsSupport)
	if !ok || m.SupportsMountOption() || len(class.MountOptions) == 0 {
		return nil
	}
	b.warn(claim, ReasonProvisioningFailed, fmt.Sprintf("Mount options are not supported by the provisioner but StorageClass %q has mount options %v", class.Name, class.MountOptions))
	return fmt.Errorf("provisioner %q doesn't support mount options", class.Provisioner)
}
