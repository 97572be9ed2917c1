package scheduling

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2"

	"github.com/volbind/volbind/cache"
)

// podClaims are a pod's claims as the scheduler sorts them.
type podClaims struct {
	// bound claims have a volume and the bind-completed annotation.
	bound []*v1.PersistentVolumeClaim
	// delayed claims are unbound, of a WaitForFirstConsumer class and not
	// pre-bound by name: the scheduler chooses their volume.
	delayed []*v1.PersistentVolumeClaim
	// immediate claims are unbound otherwise: the Binder must bind them.
	immediate []*v1.PersistentVolumeClaim
	// zoned are the volumes of bound claims of persistentVolumeClaim
	// volumes, whose labels the VolumeZone rule checks (Config.VolumeZone
	// only).
	zoned []zonedVolume
}

// Check answers for the whole pod what kube-scheduler's VolumeBinding
// PreFilter answers (and, with Config.VolumeZone, the VolumeZone plugin's
// after it): no reason when Find must decide node by node; one pod-level
// Reason when no node can take the pod (a claim missing, Lost, being
// deleted or not owned by the pod, an unbound claim the Binder must bind
// first); an error (CodeError) when the pod cannot be evaluated (the
// class of an unbound claim has no volumeBindingMode or cannot be read).
// Find makes the same decision first, so callers need Check only to answer
// once per pod. It never writes and is safe for concurrent use.
func (b *VolumeBinder) Check(ctx context.Context, pod *v1.Pod) ([]Reason, error) {
	if pod == nil {
		return nil, fmt.Errorf("scheduling: check pod: nil pod: %w", ErrInvalidArgument)
	}
	b.catchUp()
	_, r, err := b.podClaims(pod)
	if err != nil || r == nil {
		return nil, err
	}
	klog.FromContext(ctx).V(5).Info("Pod cannot be scheduled", "pod", klog.KObj(pod), "reason", r)
	return []Reason{*r}, nil
}

// podClaims reads the pod's claims from the claim cache and sorts them, as
// VolumeBinding's PreFilter does in two passes: first every claim must
// exist, not be Lost or being deleted, and belong to the pod when it is a
// generic ephemeral volume's; then each is bound, delayed or immediate
// (an unreadable binding mode is an error), and any immediate one fails
// the pod. With Config.VolumeZone a bound claim's missing volume fails it
// too, as the VolumeZone plugin's PreFilter.
func (b *VolumeBinder) podClaims(pod *v1.Pod) (podClaims, *Reason, error) {
	var out podClaims
	claims := make([]*v1.PersistentVolumeClaim, 0, len(pod.Spec.Volumes))
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		name, eph := volumeClaimName(pod, vol)
		if name == "" {
			continue
		}
		pvc, r := b.usableClaim(pod, name, eph)
		if r != nil {
			return out, r, nil
		}
		claims = append(claims, pvc)
	}
	// The bound and the delayed list are each made once, on their first
	// claim, sized for the claims left, instead of grown by appends: the
	// filter runs this for every node. (An immediate claim fails the pod.)
	for i, pvc := range claims {
		if isFullyBound(pvc) {
			if out.bound == nil {
				out.bound = make([]*v1.PersistentVolumeClaim, 0, len(claims)-i)
			}
			out.bound = append(out.bound, pvc)
			continue
		}
		delay, err := volume.IsDelayBindingMode(pvc, b.classes)
		if err != nil {
			return out, nil, fmt.Errorf("scheduling: pod %s: claim %s: %w", klog.KObj(pod), cache.Key(pvc), err)
		}
		if delay && pvc.Spec.VolumeName == "" {
			if out.delayed == nil {
				out.delayed = make([]*v1.PersistentVolumeClaim, 0, len(claims)-i)
			}
			out.delayed = append(out.delayed, pvc)
		} else {
			out.immediate = append(out.immediate, pvc)
		}
	}
	if len(out.immediate) > 0 {
		return out, &Reason{Kind: UnboundImmediateClaim, Claim: cache.Key(out.immediate[0]),
			Detail: "the claim must be bound before the pod can be scheduled"}, nil
	}
	if b.cfg.VolumeZone {
		if r := b.zonedVolumes(pod, &out); r != nil {
			return out, r, nil
		}
	}
	return out, nil, nil
}

// usableClaim returns the pod's claim name, or the pod-level reason why it
// cannot be used, with the PreFilter's texts.
func (b *VolumeBinder) usableClaim(pod *v1.Pod, name string, eph bool) (*v1.PersistentVolumeClaim, *Reason) {
	// The key of the lookup stays on the stack (Go builds a short
	// concatenation there when it does not escape): the filter runs this
	// for every claim on every node. A reason gets a key of its own.
	pvc, ok := b.pvcs.Get(cache.ClaimKey(pod.Namespace, name))
	reasonKey := func() string { return cache.ClaimKey(pod.Namespace, name) }
	switch {
	case !ok && eph:
		return nil, &Reason{Kind: ClaimMissing, Claim: reasonKey(), Detail: "the ephemeral volume controller has not created it yet",
			text: fmt.Sprintf("waiting for ephemeral volume controller to create the persistentvolumeclaim %q", name)}
	case !ok:
		return nil, &Reason{Kind: ClaimMissing, Claim: reasonKey(), Detail: "the claim does not exist",
			text: fmt.Sprintf("persistentvolumeclaim %q not found", name)}
	case pvc.Status.Phase == v1.ClaimLost:
		return nil, &Reason{Kind: ClaimLost, Claim: reasonKey(), Volume: pvc.Spec.VolumeName, Detail: "the claim's volume is gone",
			text: fmt.Sprintf("persistentvolumeclaim %q bound to non-existent persistentvolume %q", name, pvc.Spec.VolumeName)}
	case pvc.DeletionTimestamp != nil:
		return nil, &Reason{Kind: ClaimDeleting, Claim: reasonKey(), Detail: "the claim is being deleted",
			text: fmt.Sprintf("persistentvolumeclaim %q is being deleted", name)}
	}
	if eph {
		if err := ephemeral.VolumeIsForPod(pod, pvc); err != nil {
			return nil, &Reason{Kind: ClaimNotOwned, Claim: reasonKey(), Detail: "the pod is not the claim's owner", text: err.Error()}
		}
	}
	return pvc, nil
}

// zonedVolumes collects the volumes of the pod's bound persistentVolumeClaim
// volumes (not generic ephemeral ones, which the VolumeZone plugin does not
// look at), or returns VolumeMissing for one that does not exist.
func (b *VolumeBinder) zonedVolumes(pod *v1.Pod, out *podClaims) *Reason {
	for i := range pod.Spec.Volumes {
		src := pod.Spec.Volumes[i].PersistentVolumeClaim
		if src == nil {
			continue
		}
		key := cache.ClaimKey(pod.Namespace, src.ClaimName)
		pvc, ok := b.pvcs.GetAPIObj(key)
		if !ok || pvc.Spec.VolumeName == "" {
			continue
		}
		pv, ok := b.pvs.GetAPIObj(pvc.Spec.VolumeName)
		if !ok {
			return &Reason{Kind: VolumeMissing, Claim: key, Volume: pvc.Spec.VolumeName, Detail: "the claim's volume does not exist",
				text: fmt.Sprintf("persistentvolume %q not found", pvc.Spec.VolumeName)}
		}
		out.zoned = append(out.zoned, zonedVolume{claim: key, pv: pv})
	}
	return nil
}

// volumeClaimName returns the claim a pod volume uses, "" for none, and
// whether it is a generic ephemeral volume's claim.
func volumeClaimName(pod *v1.Pod, vol *v1.Volume) (string, bool) {
	switch {
	case vol.PersistentVolumeClaim != nil:
		return vol.PersistentVolumeClaim.ClaimName, false
	case vol.Ephemeral != nil:
		return ephemeral.VolumeClaimName(pod, vol), true
	}
	return "", false
}

func isFullyBound(pvc *v1.PersistentVolumeClaim) bool {
	_, ok := pvc.Annotations[volume.AnnBindCompleted]
	return pvc.Spec.VolumeName != "" && ok
}
