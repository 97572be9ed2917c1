package scheduling

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2"

	"github.com/volbind/volbind/cache"
)

// Assume records the decision pv (from Find for nodeName) in memory: each
// chosen volume is assumed pre-bound to its claim (claimRef and the
// pv.kubernetes.io/bound-by-controller annotation, as the Binder writes
// them), each claim to provision is assumed annotated with
// volume.kubernetes.io/selected-node, and the decision is recorded for
// Decision. pv's objects are replaced by the assumed
// ones. allBound is true, and nothing is assumed, when every claim of the
// pod is already bound. On error nothing stays assumed: a volume or claim
// changed since Find gives an error wrapping cache.ErrStale, and the
// scheduler should find again. Call it serially (the scheduler's reserve
// step); it makes no API call.
func (b *VolumeBinder) Assume(ctx context.Context, pod *v1.Pod, nodeName string, pv *PodVolumes) (allBound bool, err error) {
	start := b.clock.Now()
	defer func() { b.metrics.stage(opAssume, start, b.clock.Now(), err != nil) }()
	if pod == nil || pv == nil || pv.Node == nil {
		return false, fmt.Errorf("scheduling: assume volumes: nil pod or volumes: %w", ErrInvalidArgument)
	}
	if pv.Node.Name != nodeName {
		return false, fmt.Errorf("scheduling: assume volumes of pod %s on node %q: volumes were found for node %q: %w",
			klog.KObj(pod), nodeName, pv.Node.Name, ErrInvalidArgument)
	}
	logger := klog.FromContext(ctx)
	b.catchUp()
	if b.allBound(pod) {
		logger.V(4).Info("All claims of the pod are bound", "pod", klog.KObj(pod), "node", nodeName)
		return true, nil
	}

	bindings := make([]*BindingInfo, 0, len(pv.StaticBindings))
	for _, bi := range pv.StaticBindings {
		newPV, dirty, err := volume.GetBindVolumeToClaim(bi.PV, bi.PVC)
		if err == nil && dirty {
			err = b.assumeVolume(newPV)
		}
		if err != nil {
			b.restoreBindings(bindings)
			return false, fmt.Errorf("scheduling: assume volume %s pre-bound to claim %s for pod %s: %w", bi.PV.Name, klog.KObj(bi.PVC), klog.KObj(pod), err)
		}
		bindings = append(bindings, &BindingInfo{PVC: bi.PVC, PV: newPV})
	}
	provisions := make([]*v1.PersistentVolumeClaim, 0, len(pv.DynamicProvisions))
	for _, claim := range pv.DynamicProvisions {
		clone := claim.DeepCopy()
		metav1.SetMetaDataAnnotation(&clone.ObjectMeta, volume.AnnSelectedNode, nodeName)
		if err := b.pvcs.Assume(clone); err != nil {
			b.restoreBindings(bindings)
			b.restoreClaims(provisions)
			return false, fmt.Errorf("scheduling: assume claim %s selected node %q for pod %s: %w", klog.KObj(claim), nodeName, klog.KObj(pod), err)
		}
		provisions = append(provisions, clone)
	}
	pv.StaticBindings, pv.DynamicProvisions = bindings, provisions
	b.decisions.record(pod, nodeName, bindings, provisions)
	b.metrics.cacheRequest(opCacheAdd)
	logger.V(4).Info("Assumed pod volumes", "pod", klog.KObj(pod), "node", nodeName,
		"bindings", len(bindings), "provisions", len(provisions))
	return false, nil
}

// Revert drops what Assume (and Bind) assumed for pod: the volumes and
// claims of pv return to their informer versions, and the pod's decisions
// are forgotten. It is the scheduler's unreserve step; Bind calls it itself
// when it fails. Reverting twice, or what was never assumed, is harmless.
func (b *VolumeBinder) Revert(pod *v1.Pod, pv *PodVolumes) {
	if pv != nil {
		b.restoreBindings(pv.StaticBindings)
		b.restoreClaims(pv.DynamicProvisions)
	}
	if pod != nil {
		b.decisions.forget(pod)
		b.metrics.cacheRequest(opCacheDelete)
	}
}

// Decision returns a copy of the decision Assume recorded for pod on node,
// with node as its Node.
func (b *VolumeBinder) Decision(pod *v1.Pod, node *v1.Node) (*PodVolumes, bool) {
	if pod == nil || node == nil {
		return nil, false
	}
	b.metrics.cacheRequest(opCacheGet)
	return b.decisions.get(pod, node)
}

// Volume returns the latest (possibly assumed) version of a volume. It is
// shared: do not mutate it.
func (b *VolumeBinder) Volume(name string) (*v1.PersistentVolume, bool) {
	b.catchUp()
	return b.pvs.Get(name)
}

// Claim returns the latest (possibly assumed) version of a claim. It is
// shared: do not mutate it.
func (b *VolumeBinder) Claim(namespace, name string) (*v1.PersistentVolumeClaim, bool) {
	b.catchUp()
	return b.pvcs.Get(cache.ClaimKey(namespace, name))
}

// IsAssumed reports whether the volume (namespace "") or claim has an
// assumed version that the informer has not caught up with.
func (b *VolumeBinder) IsAssumed(namespace, name string) bool {
	if namespace == "" {
		return b.pvs.IsAssumed(name)
	}
	return b.pvcs.IsAssumed(cache.ClaimKey(namespace, name))
}

func (b *VolumeBinder) restoreBindings(bindings []*BindingInfo) {
	for _, bi := range bindings {
		b.restoreVolume(bi.PV.Name)
	}
}

func (b *VolumeBinder) restoreClaims(claims []*v1.PersistentVolumeClaim) {
	for _, c := range claims {
		b.pvcs.Restore(cache.Key(c))
	}
	if len(claims) > 0 {
		b.changes.notify()
	}
}

// allBound reports whether every claim of the pod is in the cache and
// bound (a generic ephemeral volume's claim owned by the pod), as
// kube-scheduler's arePodVolumesBound.
func (b *VolumeBinder) allBound(pod *v1.Pod) bool {
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		name, eph := volumeClaimName(pod, vol)
		if name == "" {
			continue
		}
		pvc, ok := b.pvcs.Get(cache.ClaimKey(pod.Namespace, name))
		if !ok || !isFullyBound(pvc) || eph && ephemeral.VolumeIsForPod(pod, pvc) != nil {
			return false
		}
	}
	return true
}
