// Package volbind binds Kubernetes PersistentVolumeClaims to PersistentVolumes.
// It does what the PersistentVolume controller of kube-controller-manager and
// the scheduler's volume binder do, as reusable in-memory parts that users
// embed in their own controllers and wire to their own API client and
// informers.
//
// This root package holds no code: it is the map of the module. Read it first.
//
//   - [github.com/volbind/volbind/operations] runs at most one long operation
//     (provision, delete, recycle) per name, backing off exponentially after a
//     failure, and gives per-key locks so that two operations on one volume
//     never interleave.
//   - [github.com/volbind/volbind/jitter] runs jittered periodic loops on an
//     injected clock and spreads the periodic resync of many objects evenly
//     over the period, so a large cluster's sync load is flat.
//   - [github.com/volbind/volbind/cache] holds the assume cache (objects
//     assumed in memory before the API confirms them) and the latest-version
//     cache (never act on a version older than our own last write).
//   - [github.com/volbind/volbind/zones] parses zone and region labels
//     (including multi-zone "a__b" values), matches volumes' placement against
//     nodes, chooses zones for new volumes and labels volumes with their
//     placement.
//   - [github.com/volbind/volbind/recycler] scrubs released volumes with a
//     recycler pod named after the volume, so a restarted controller adopts the
//     running pod instead of starting a second one.
//   - [github.com/volbind/volbind/binder] composes all of these over client-go
//     workqueues into the Binder: claim and volume sync loops, best-fit
//     matching in O(log N), binding, reclaim, provisioning and delayed
//     binding. [github.com/volbind/volbind/binder/bindertest] is an in-memory
//     API server with kube-apiserver's semantics for tests and simulations.
//   - [github.com/volbind/volbind/nodepool] binds waiting pods to per-pod
//     nodes, boots and stops nodes and keeps standby pools; it imports only
//     zones.
//
// The command github.com/volbind/volbind/cmd/volbind runs the Binder, either
// on the embedded in-memory API ("volbind simulate") or against a real
// cluster ("volbind controller").
package volbind
