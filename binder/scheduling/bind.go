package scheduling

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2"

	"github.com/volbind/volbind/cache"
)

// Bind writes the decision that Assume recorded in pv for pod: each volume
// pre-bound to its claim (an update of the volume) and each claim to
// provision annotated with the selected node (an update of the claim). Then
// it waits until the Binder has bound every claim to its volume (or to the
// provisioned one), reading the informer versions fed to VolumeHandler and
// ClaimHandler and woken by them, never polling. The wait ends with an
// error when a binding is lost (ErrBindingLost), a provisioning fails
// (ErrProvisioningFailed), a volume stops fitting the node
// (ErrNodeConflict), a claim or volume disappears, Config.BindTimeout passes
// on the configured clock (ErrBindTimeout) or ctx is done.
//
// On any error Bind reverts the pod's assumed objects (Revert) and returns
// a *BindError naming the claim, the volume and the cause; the API writes
// already made are not undone (the Binder rolls back a pre-binding whose
// claim does not take it), so the scheduler can find again and retry. A
// write that conflicts returns the API's Conflict error inside the
// BindError. On success the pod's decisions are forgotten. Bind blocks and
// may run in parallel for different pods. kube-scheduler also gives up
// when the pod is deleted meanwhile: cancel ctx for that.
func (b *VolumeBinder) Bind(ctx context.Context, pod *v1.Pod, pv *PodVolumes) (err error) {
	start := b.clock.Now()
	defer func() { b.metrics.stage(opBind, start, b.clock.Now(), err != nil) }()
	if pod == nil || pv == nil || pv.Node == nil {
		return fmt.Errorf("scheduling: bind volumes: nil pod or volumes: %w", ErrInvalidArgument)
	}
	logger := klog.FromContext(ctx)
	if err := b.writeDecision(ctx, pod, pv); err != nil {
		b.Revert(pod, pv)
		return err
	}
	if err := b.waitBound(ctx, pod, pv); err != nil {
		logger.V(2).Info("Binding pod volumes failed, reverting", "pod", klog.KObj(pod), "node", pv.Node.Name, "err", err)
		b.Revert(pod, pv)
		return err
	}
	b.decisions.forget(pod)
	b.metrics.cacheRequest(opCacheDelete)
	logger.V(4).Info("All claims of the pod are bound", "pod", klog.KObj(pod), "node", pv.Node.Name)
	return nil
}

// writeDecision makes the API writes of pv, in order, replacing pv's
// objects by the server's answers (also assumed in the caches, so that
// Find sees them before the informer delivers them).
func (b *VolumeBinder) writeDecision(ctx context.Context, pod *v1.Pod, pv *PodVolumes) error {
	podKey := cache.Key(pod)
	for i, bi := range pv.StaticBindings {
		newPV, err := b.api.UpdateVolume(ctx, bi.PV)
		if err != nil {
			return &BindError{Pod: podKey, Claim: cache.Key(bi.PVC), Volume: bi.PV.Name, Err: fmt.Errorf("pre-bind volume: %w", err)}
		}
		// BindingInfos are shared with the recorded decision: replace, never mutate.
		pv.StaticBindings[i] = &BindingInfo{PVC: bi.PVC, PV: newPV}
		if api, ok := b.pvs.GetAPIObj(newPV.Name); ok && olderThan(api, newPV.ResourceVersion) {
			// Until the informer delivers the write. Stale means it
			// already delivered something newer: fine.
			_ = b.assumeVolume(newPV)
		}
	}
	for i, claim := range pv.DynamicProvisions {
		newClaim, err := b.api.UpdateClaim(ctx, claim)
		if err != nil {
			return &BindError{Pod: podKey, Claim: cache.Key(claim), Err: fmt.Errorf("set selected node: %w", err)}
		}
		pv.DynamicProvisions[i] = newClaim
		if api, ok := b.pvcs.GetAPIObj(cache.Key(newClaim)); ok && olderThan(api, newClaim.ResourceVersion) {
			_ = b.pvcs.Assume(newClaim)
		}
	}
	return nil
}

// waitBound waits until check reports every claim bound.
func (b *VolumeBinder) waitBound(ctx context.Context, pod *v1.Pod, pv *PodVolumes) error {
	timer := b.clock.NewTimer(b.cfg.BindTimeout)
	defer timer.Stop()
	for {
		// Take the channel before checking, so no change is missed.
		changed := b.changes.wait()
		b.catchUp()
		pending, err := b.checkBindings(ctx, pod, pv)
		if err != nil {
			return err
		}
		if pending == nil {
			return nil
		}
		select {
		case <-changed:
		case <-timer.C():
			pending.Err = fmt.Errorf("%w after %v: %w", ErrBindTimeout, b.cfg.BindTimeout, pending.Err)
			return pending
		case <-ctx.Done():
			pending.Err = fmt.Errorf("%w: %w", context.Cause(ctx), pending.Err)
			return pending
		}
	}
}

// errWaiting describes a binding that is not complete yet; it is the cause
// of a timeout.
type errWaiting string

func (e errWaiting) Error() string { return string(e) }

// checkBindings checks the informer versions of pv's objects, as
// Kubernetes' checkBindings does. It returns an error when a binding failed
// for good, a *BindError describing the first incomplete binding while
// waiting, and nil, nil when all are complete.
func (b *VolumeBinder) checkBindings(ctx context.Context, pod *v1.Pod, pv *PodVolumes) (*BindError, error) {
	podKey, node := cache.Key(pod), pv.Node
	csiNode := b.csiNode(ctx, node)
	for _, bi := range pv.StaticBindings {
		claimKey, name := cache.Key(bi.PVC), bi.PV.Name
		fail := func(err error) error { return &BindError{Pod: podKey, Claim: claimKey, Volume: name, Err: err} }
		apiPV, ok := b.pvs.GetAPIObj(name)
		if !ok {
			return nil, fail(ErrVolumeNotFound)
		}
		apiPVC, ok := b.pvcs.GetAPIObj(claimKey)
		if !ok {
			return nil, fail(ErrClaimNotFound)
		}
		if olderThan(apiPV, bi.PV.ResourceVersion) {
			return &BindError{Pod: podKey, Claim: claimKey, Volume: name, Err: errWaiting("waiting for the pre-bound volume to be observed")}, nil
		}
		if err := b.fitsAfterBind(ctx, apiPV, csiNode, node); err != nil {
			return nil, fail(err)
		}
		ref := apiPV.Spec.ClaimRef
		if ref == nil || ref.UID == "" || ref.UID != bi.PVC.UID || ref.Name != bi.PVC.Name || ref.Namespace != bi.PVC.Namespace {
			return nil, fail(fmt.Errorf("%w: the volume's claimRef was reset or names another claim", ErrBindingLost))
		}
		if apiPVC.UID != bi.PVC.UID {
			return nil, fail(fmt.Errorf("%w: the claim was re-created", ErrBindingLost))
		}
		if apiPVC.Spec.VolumeName != "" && apiPVC.Spec.VolumeName != name {
			return nil, fail(fmt.Errorf("%w: the claim is bound to volume %s", ErrBindingLost, apiPVC.Spec.VolumeName))
		}
		if !isFullyBound(apiPVC) {
			return &BindError{Pod: podKey, Claim: claimKey, Volume: name,
				Err: errWaiting(fmt.Sprintf("waiting for the Binder: claim %s, volume %s", apiPVC.Status.Phase, apiPV.Status.Phase))}, nil
		}
	}
	for _, claim := range pv.DynamicProvisions {
		claimKey := cache.Key(claim)
		fail := func(err error) error { return &BindError{Pod: podKey, Claim: claimKey, Err: err} }
		apiPVC, ok := b.pvcs.GetAPIObj(claimKey)
		if !ok {
			return nil, fail(ErrClaimNotFound)
		}
		if olderThan(apiPVC, claim.ResourceVersion) {
			return &BindError{Pod: podKey, Claim: claimKey, Err: errWaiting("waiting for the annotated claim to be observed")}, nil
		}
		if selected := apiPVC.Annotations[volume.AnnSelectedNode]; selected != node.Name {
			return nil, fail(fmt.Errorf("%w: selected node is %q, want %q", ErrProvisioningFailed, selected, node.Name))
		}
		if name := apiPVC.Spec.VolumeName; name != "" {
			apiPV, ok := b.pvs.GetAPIObj(name)
			if !ok {
				// The new volume may not have been observed yet.
				return &BindError{Pod: podKey, Claim: claimKey, Volume: name, Err: errWaiting("waiting for the provisioned volume to be observed")}, nil
			}
			if err := b.fitsAfterBind(ctx, apiPV, csiNode, node); err != nil {
				return nil, &BindError{Pod: podKey, Claim: claimKey, Volume: name, Err: err}
			}
		}
		if !isFullyBound(apiPVC) {
			return &BindError{Pod: podKey, Claim: claimKey, Err: errWaiting(fmt.Sprintf("waiting for provisioning: claim %s", apiPVC.Status.Phase))}, nil
		}
	}
	return nil, nil
}

// olderThan reports whether obj's resourceVersion is older than rv. Versions
// that do not parse compare as not older.
func olderThan(obj interface{ GetResourceVersion() string }, rv string) bool {
	have, err1 := cache.ParseVersion(obj.GetResourceVersion())
	want, err2 := cache.ParseVersion(rv)
	return err1 == nil && err2 == nil && have < want
}

// fitsAfterBind checks a bound volume's node affinity against the pod's
// node as kube-scheduler's checkBindings does (translated to CSI where the
// node's CSINode says its plugin is migrated): an error wrapping
// ErrNodeConflict when it does not select the node, or the translation's
// error.
func (b *VolumeBinder) fitsAfterBind(ctx context.Context, pv *v1.PersistentVolume, csiNode *storagev1.CSINode, node *v1.Node) error {
	mismatch, err := b.volumeFits(ctx, pv, csiNode, node)
	switch {
	case err != nil:
		return err
	case mismatch != nil:
		return fmt.Errorf("%w: node %q: %w", ErrNodeConflict, node.Name, mismatch)
	}
	return nil
}
