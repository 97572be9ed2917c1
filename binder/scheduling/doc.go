// Package scheduling is the scheduler side of volume binding: for a pod and
// a candidate node it decides whether the pod's PersistentVolumeClaims can
// be satisfied there, records the decision in memory, writes it to the API
// and waits until the Binder (package binder) has completed it. It does
// what kube-scheduler's VolumeBinding plugin does with its
// SchedulerVolumeBinder, with the same results.
//
// A VolumeBinder is fed PersistentVolume and PersistentVolumeClaim events
// (VolumeHandler, ClaimHandler) or follows informers' stores
// (FollowVolumes, FollowClaims: what a scheduler whose queue reacts to the
// same informers needs), and reads StorageClasses, and optionally
// CSINodes, from listers. For each pod the scheduler calls:
//
//   - Check(ctx, pod), once: the answer of VolumeBinding's PreFilter. A
//     claim that is missing, Lost, being deleted or, for a generic
//     ephemeral volume, not the pod's, and an unbound claim the Binder must
//     bind first (Immediate binding, pre-bound by name, a class that does
//     not exist) fail the pod on every node with a pod-level Reason whose
//     Message is Kubernetes' text.
//   - Find(ctx, pod, node), in parallel for many nodes: the answer of
//     VolumeBinding's Filter (after Check's, which it repeats). Bound
//     claims' volumes must exist and their required node affinity must
//     select the node (translated to CSI with csi-translation-lib where
//     the node's CSINode lists the volume's in-tree plugin as migrated);
//     unbound WaitForFirstConsumer claims get the smallest
//     matching available volume whose node affinity fits the node, never
//     the same volume for two claims of the pod, from O(log N) indexes
//     (internal/pvindex with kube-scheduler's search rules; available local
//     volumes pinned to one host by kubernetes.io/hostname sit in that
//     host's own index, so a node never skips other nodes' local volumes;
//     the answers are those of FindMatchingVolume over all volumes of the
//     class, listed by name); claims with no
//     volume must be provisionable on the node (the class has a provisioner,
//     its allowedTopologies admit the node's labels, and an optional
//     CapacityChecker agrees). A node that does not fit gets
//     typed Reasons whose Messages are Kubernetes' texts in its order.
//     Config.VolumeZone adds the VolumeZone plugin's rule (zone labels of
//     bound volumes) and Config.ClassZoneParameters a check of classes'
//     zone/zones parameters, which kube-scheduler does not make.
//   - Assume(ctx, pod, node, volumes), serially: the chosen volumes are
//     assumed pre-bound to their claims (claimRef plus the
//     pv.kubernetes.io/bound-by-controller annotation), claims to provision
//     are assumed annotated with volume.kubernetes.io/selected-node, and the
//     decision is recorded for Decision. Later Finds see the
//     assumed objects, so no volume is given to two pods.
//   - Bind(ctx, pod, volumes), in parallel for different pods: it writes the
//     pre-bound volumes and annotated claims, then waits, woken by the
//     informer events it is fed and bounded by Config.BindTimeout on the
//     injected clock, until every claim is Bound to the right volume. On any
//     failure or timeout it reverts the assumed objects and returns a
//     *BindError naming the claim and why.
//   - Revert(pod, volumes) drops the assumptions of a pod that will not be
//     bound (the scheduler's Unreserve).
//
// Every Reason stands for the framework status code
// UnschedulableAndUnresolvable (Reason.Code); an error of Check or Find
// for Error. The scheduler module's differential test compares Check and
// Find, texts and codes included, with kube-scheduler v1.37.2's
// VolumeBinding and VolumeZone plugins on random clusters.
//
// Metrics are those of kube-scheduler's volume binder, under the subsystem
// scheduler_volume, registered on Config.Registerer only (nil: no metrics,
// as in binder). Its stage histogram
// scheduler_volume_scheduling_duration_seconds keeps kube-scheduler's
// buckets, which start at 1000 s; the same observations go
// to volbind_scheduler_volume_stage_duration_seconds, whose buckets run from
// 1 µs to 16.8 s.
//
// It is for authors of schedulers that place pods whose claims the Binder
// binds: a kube-scheduler plugin (the scheduler/ module of this repository
// builds one on it) or an orchestrator's own placement loop.
package scheduling
