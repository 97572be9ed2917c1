// Package schedgen generates random small clusters and a pod to schedule
// on them, for the differential tests that compare binder/scheduling and
// the scheduler/ module's plugin with kube-scheduler's in-tree
// VolumeBinding and VolumeZone plugins, and for other tests that need such
// clusters. Generate(seed) is deterministic: a seed names a case, so a
// failure can be replayed.
//
// A cluster has 2-8 nodes in zones (GA, beta or both labels, or none),
// some with the topology labels of the AWS EBS and GCE PD CSI drivers and
// a CSINode listing in-tree plugins as migrated; WaitForFirstConsumer and
// Immediate classes with and without provisioners, allowedTopologies and
// zone/zones parameters, one tracking CSIStorageCapacity; volumes pinned to
// a host, a zone or nothing, local, CSI or in-tree (awsElasticBlockStore,
// gcePersistentDisk), with legacy zone labels with and without node
// affinity, Available, pre-bound or bound; and a pod with 1-3 claims
// (persistentVolumeClaim or generic ephemeral volumes) that are unbound,
// bound, bound to a missing volume, pre-bound by name, selected for a
// node, Lost, being deleted, missing, of a missing class or not owned by
// the pod.
package schedgen
