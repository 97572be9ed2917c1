package volumebinding

import (
	"context"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/util"

	"github.com/volbind/volbind/binder/scheduling"
)

// EventsToRegister returns the events after which a pod this plugin
// rejected may fit, with the in-tree plugin's queueing hints.
func (pl *Plugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.StorageClass, ActionType: fwk.Add | fwk.Update}, QueueingHintFn: hintStorageClass},
		{Event: fwk.ClusterEvent{Resource: fwk.PersistentVolumeClaim, ActionType: fwk.Add | fwk.Update}, QueueingHintFn: hintClaim},
		{Event: fwk.ClusterEvent{Resource: fwk.PersistentVolume, ActionType: fwk.Add | fwk.Update}},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeLabel}},
		{Event: fwk.ClusterEvent{Resource: fwk.CSINode, ActionType: fwk.Add | fwk.Update}, QueueingHintFn: hintCSINode},
		{Event: fwk.ClusterEvent{Resource: fwk.CSIDriver, ActionType: fwk.Update}, QueueingHintFn: hintCSIDriver},
		{Event: fwk.ClusterEvent{Resource: fwk.CSIStorageCapacity, ActionType: fwk.Add | fwk.Update}, QueueingHintFn: hintCapacity},
	}, nil
}

// hintCSINode queues on a new CSINode or a change of its migrated plugins.
func hintCSINode(logger klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	if oldObj == nil {
		return fwk.Queue, nil
	}
	oldNode, newNode, err := util.As[*storagev1.CSINode](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if oldNode.Annotations[v1.MigratedPluginsAnnotationKey] != newNode.Annotations[v1.MigratedPluginsAnnotationKey] {
		logger.V(5).Info("CSINode's migrated plugins changed", "pod", klog.KObj(pod), "csiNode", klog.KObj(newNode))
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

// hintClaim queues on a claim of the pod being created or updated.
func hintClaim(logger klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	_, pvc, err := util.As[*v1.PersistentVolumeClaim](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if pvc.Namespace != pod.Namespace {
		return fwk.QueueSkip, nil
	}
	for i := range pod.Spec.Volumes {
		if name, _ := claimName(pod, &pod.Spec.Volumes[i]); name != "" && name == pvc.Name {
			logger.V(5).Info("A claim of the pod changed", "pod", klog.KObj(pod), "pvc", klog.KObj(pvc))
			return fwk.Queue, nil
		}
	}
	return fwk.QueueSkip, nil
}

// hintStorageClass queues on a new class or a change of allowedTopologies
// (the binding mode cannot change).
func hintStorageClass(logger klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	oldClass, newClass, err := util.As[*storagev1.StorageClass](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if oldClass == nil || !apiequality.Semantic.DeepEqual(oldClass.AllowedTopologies, newClass.AllowedTopologies) {
		logger.V(5).Info("A StorageClass was added or its allowedTopologies changed", "pod", klog.KObj(pod), "storageClass", klog.KObj(newClass))
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

// hintCapacity queues on a new CSIStorageCapacity or a larger volume limit.
func hintCapacity(logger klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	oldCap, newCap, err := util.As[*storagev1.CSIStorageCapacity](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if oldCap == nil {
		return fwk.Queue, nil
	}
	oldLimit, newLimit := scheduling.VolumeLimit(oldCap), scheduling.VolumeLimit(newCap)
	if newLimit != nil && (oldLimit == nil || newLimit.Value() > oldLimit.Value()) {
		logger.V(5).Info("A CSIStorageCapacity grew", "pod", klog.KObj(pod), "csiStorageCapacity", klog.KObj(newCap))
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

// hintCSIDriver queues when a driver the pod's inline CSI volumes use stops
// tracking storage capacity, as the in-tree hint does.
func hintCSIDriver(logger klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	oldDriver, newDriver, err := util.As[*storagev1.CSIDriver](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	for _, vol := range pod.Spec.Volumes {
		if vol.CSI == nil || vol.CSI.Driver != newDriver.Name {
			continue
		}
		if tracks(oldDriver) && !tracks(newDriver) {
			logger.V(5).Info("A CSIDriver stopped tracking capacity", "pod", klog.KObj(pod), "csiDriver", klog.KObj(newDriver))
			return fwk.Queue, nil
		}
	}
	return fwk.QueueSkip, nil
}

func tracks(d *storagev1.CSIDriver) bool {
	return d.Spec.StorageCapacity != nil && *d.Spec.StorageCapacity
}
