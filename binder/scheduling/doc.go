// Package scheduling is the scheduler side of volume binding: for a pod and
// a candidate node it decides whether the pod's PersistentVolumeClaims can
// be satisfied there, records the decision in memory, writes it to the API
// and waits until the Binder (package binder) has completed it. It does
// what kube-scheduler's VolumeBinding plugin does with its
// SchedulerVolumeBinder, with the same results.
//
// A VolumeBinder is fed PersistentVolume and PersistentVolumeClaim events
// (VolumeHandler, ClaimHandler) and reads StorageClasses from a lister. For
// each pod the scheduler calls:
//
//   - Find(ctx, pod, node), in parallel for many nodes: bound claims' volumes
//     must be usable from the node (zones.Matcher: zone labels and node
//     affinity); unbound WaitForFirstConsumer claims get the smallest
//     matching available volume whose node affinity fits the node, never
//     the same volume for two claims of the pod, from O(log N) indexes
//     (internal/pvindex with kube-scheduler's search rules; available local
//     volumes pinned to one host by kubernetes.io/hostname sit in that
//     host's own index, so a node never skips other nodes' local volumes;
//     the answers are those of FindMatchingVolume over all volumes of the
//     class, listed by name); claims with no
//     volume must be provisionable on the node (the class has a provisioner,
//     its allowedTopologies and zone parameters admit the node's labels, and
//     an optional CapacityChecker agrees). A node that does not fit gets
//     typed Reasons whose Message is Kubernetes' text.
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
