// Package volumebinding is a kube-scheduler plugin that binds pods'
// PersistentVolumeClaims with volbind's binder/scheduling instead of the
// in-tree VolumeBinding plugin. It implements the same extension points
// with the same statuses and reasons as Kubernetes v1.37.2's plugin:
//
//   - PreFilter skips pods without claims, rejects pods whose claims are
//     missing, lost, being deleted or unbound with immediate binding
//     (binder/scheduling's Check), and narrows the candidate nodes
//     (PreFilterResult) when a bound claim's volume is pinned to hosts by
//     kubernetes.io/hostname node affinity;
//   - Filter asks binder/scheduling.Find for each node, with the node's
//     CSINode for in-tree volumes migrated to CSI;
//   - PreScore and Score rate nodes by storage utilization (the
//     StorageCapacityScoring feature, beta and on by default in v1.37);
//   - Reserve and Unreserve assume and revert the decision in memory;
//   - PreBindPreFlight and PreBind write it and wait for the volume
//     controller (kube-controller-manager or volbind controller);
//   - EventsToRegister requeues pods on PersistentVolume, claim,
//     StorageClass, Node, CSINode, CSIDriver and CSIStorageCapacity events
//     with the in-tree queueing hints. Kubernetes v1.37.2's scheduler has no
//     VolumeAttributesClass event; a class change reaches the plugin as the
//     PersistentVolume and claim updates that name it.
//
// The binder follows the PersistentVolume and PersistentVolumeClaim
// informers' stores (FollowVolumes, FollowClaims), so that a pod the
// scheduling queue retries after one of their events finds what the event
// brought.
//
// Register it with app.WithPlugin(Name, NewFactory(cfg).New) and enable it
// in place of VolumeBinding (see scheduler/examples/config.yaml). Profiles
// of one scheduler share one VolumeBinder, so no volume is given to two pods
// of different profiles.
package volumebinding
