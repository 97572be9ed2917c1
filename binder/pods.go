package binder

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/component-helpers/storage/ephemeral"

	"github.com/volbind/volbind/cache"
)

// ClaimPods finds the pods that use a claim.
type ClaimPods interface {
	// PodsUsingClaim returns the pods whose volumes use the claim
	// namespace/name, directly or as a generic ephemeral volume. It must
	// not block on the API server (read an informer's cache). The pods are
	// shared: do not modify them.
	PodsUsingClaim(namespace, name string) ([]*v1.Pod, error)
}

// PodClaimIndex is the name of the informer index IndexerPods reads: the
// "namespace/name" keys of the claims a pod uses.
const PodClaimIndex = "volbind.io/pod-claims"

// PodClaimKeys is the index function of PodClaimIndex: the claims a pod
// uses, as Kubernetes' PodPVCIndexFunc computes them.
func PodClaimKeys(obj any) ([]string, error) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return nil, nil
	}
	var keys []string
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		name := ""
		switch {
		case vol.PersistentVolumeClaim != nil:
			name = vol.PersistentVolumeClaim.ClaimName
		case vol.Ephemeral != nil:
			name = ephemeral.VolumeClaimName(pod, vol)
		}
		if name != "" {
			keys = append(keys, pod.Namespace+"/"+name)
		}
	}
	return keys, nil
}

// IndexerPods is the ClaimPods of a pod informer's indexer that has the
// PodClaimIndex index (AddPodClaimIndex).
type IndexerPods struct {
	// Indexer is the pod informer's indexer.
	Indexer toolscache.Indexer
}

var _ ClaimPods = IndexerPods{}

// PodsUsingClaim returns the indexed pods that use the claim.
func (p IndexerPods) PodsUsingClaim(namespace, name string) ([]*v1.Pod, error) {
	objs, err := p.Indexer.ByIndex(PodClaimIndex, namespace+"/"+name)
	if err != nil {
		return nil, err
	}
	pods := make([]*v1.Pod, 0, len(objs))
	for _, o := range objs {
		if pod, ok := o.(*v1.Pod); ok {
			pods = append(pods, pod)
		}
	}
	return pods, nil
}

// AddPodClaimIndex adds the PodClaimIndex index to a pod informer that has
// not started yet, unless it has it already.
func AddPodClaimIndex(informer toolscache.SharedIndexInformer) error {
	if _, ok := informer.GetIndexer().GetIndexers()[PodClaimIndex]; ok {
		return nil
	}
	if err := informer.AddIndexers(toolscache.Indexers{PodClaimIndex: PodClaimKeys}); err != nil {
		return fmt.Errorf("binder: add pod index %s: %w", PodClaimIndex, err)
	}
	return nil
}

// TrimPod is a pod informer transform that keeps only what the Binder
// reads of a pod: its name, namespace, UID, owner references (generic
// ephemeral volumes), deletion timestamp, volumes, node name, phase and
// container states. A cluster's pods then cost the Binder a small fraction
// of their full size in memory. Objects other than pods pass unchanged.
func TrimPod(obj any) (any, error) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return obj, nil
	}
	out := &v1.Pod{}
	out.Name, out.Namespace, out.UID = pod.Name, pod.Namespace, pod.UID
	out.ResourceVersion = pod.ResourceVersion
	out.OwnerReferences = pod.OwnerReferences
	out.DeletionTimestamp = pod.DeletionTimestamp
	out.Spec.NodeName = pod.Spec.NodeName
	for _, vol := range pod.Spec.Volumes {
		if vol.PersistentVolumeClaim == nil && vol.Ephemeral == nil {
			continue
		}
		v := v1.Volume{Name: vol.Name}
		v.PersistentVolumeClaim = vol.PersistentVolumeClaim
		if vol.Ephemeral != nil {
			v.Ephemeral = &v1.EphemeralVolumeSource{}
		}
		out.Spec.Volumes = append(out.Spec.Volumes, v)
	}
	out.Status.Phase = pod.Status.Phase
	out.Status.InitContainerStatuses = trimStatuses(pod.Status.InitContainerStatuses)
	out.Status.ContainerStatuses = trimStatuses(pod.Status.ContainerStatuses)
	out.Status.EphemeralContainerStatuses = trimStatuses(pod.Status.EphemeralContainerStatuses)
	return out, nil
}

// trimStatuses keeps the states of container statuses.
func trimStatuses(in []v1.ContainerStatus) []v1.ContainerStatus {
	if len(in) == 0 {
		return nil
	}
	out := make([]v1.ContainerStatus, len(in))
	for i := range in {
		out[i] = v1.ContainerStatus{Name: in[i].Name, State: in[i].State}
	}
	return out
}

// podTerminated reports whether the pod no longer runs, as Kubernetes'
// IsPodTerminated: it failed or succeeded, or it is being deleted and none
// of its containers runs.
func podTerminated(pod *v1.Pod) bool {
	switch pod.Status.Phase {
	case v1.PodFailed, v1.PodSucceeded:
		return true
	}
	st := &pod.Status
	return pod.DeletionTimestamp != nil && notRunning(st.InitContainerStatuses) &&
		notRunning(st.ContainerStatuses) && notRunning(st.EphemeralContainerStatuses)
}

// notRunning reports whether every container is terminated or waiting.
func notRunning(statuses []v1.ContainerStatus) bool {
	for i := range statuses {
		if statuses[i].State.Terminated == nil && statuses[i].State.Waiting == nil {
			return false
		}
	}
	return true
}

// activePodsUsing returns the sorted "namespace/name" of the pods that use
// the claim and have not terminated, as Kubernetes' isVolumeUsed; nil
// without Config.Pods.
func (b *Binder) activePodsUsing(namespace, name string) ([]string, error) {
	pods, err := b.livePodsUsing(namespace, name)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, pod := range pods {
		names = append(names, pod.Namespace+"/"+pod.Name)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// unscheduledPodsUsing returns the names (without namespace) of the pods
// that use the claim, have not terminated and have no node yet, as
// Kubernetes' findNonScheduledPodsByPVC; nil without Config.Pods.
func (b *Binder) unscheduledPodsUsing(namespace, name string) ([]string, error) {
	pods, err := b.livePodsUsing(namespace, name)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, pod := range pods {
		if pod.Spec.NodeName == "" {
			names = append(names, pod.Name)
		}
	}
	return names, nil
}

// livePodsUsing returns the pods that use the claim and have not
// terminated; nil without Config.Pods.
func (b *Binder) livePodsUsing(namespace, name string) ([]*v1.Pod, error) {
	if b.cfg.Pods == nil {
		return nil, nil
	}
	pods, err := b.cfg.Pods.PodsUsingClaim(namespace, name)
	if err != nil {
		return nil, fmt.Errorf("binder: error finding pods by pvc %q: %w", cache.ClaimKey(namespace, name), err)
	}
	live := pods[:0:0]
	for _, pod := range pods {
		if !podTerminated(pod) {
			live = append(live, pod)
		}
	}
	return live, nil
}
