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
//     binding.
//   - [github.com/volbind/volbind/binder/scheduling] is the scheduler's side
//     of delayed binding, kube-scheduler's VolumeBinding plugin as a
//     library: which nodes can serve a pod's claims, and the writes that
//     hand the choice to the Binder.
//   - [github.com/volbind/volbind/binder/bindertest] is an in-memory API
//     server with kube-apiserver's semantics and fault injection, for
//     testing a Binder's wiring without a cluster;
//     [github.com/volbind/volbind/recycler/recyclertest] is a small fake of
//     the recycler's pod API.
//   - [github.com/volbind/volbind/nodepool] binds waiting pods to per-pod
//     nodes, boots and stops nodes and keeps standby pools; it imports only
//     zones.
//
// Each package's comment says who it is for. The packages under internal/
// are this repository's own, which users cannot import: implementation the
// packages above share (pvindex, the best-fit volume index; shard, one
// seeded hash and one padded shard type; pvsource, the names of the members
// of the PersistentVolumeSource union; dedup, shared copies of equal maps
// and affinities), the volbind program's commands (simulate, controller,
// and what they share: cli and manifest) and the chaos suite (chaos).
//
// The command github.com/volbind/volbind/cmd/volbind runs the Binder, either
// on the embedded in-memory API ("volbind simulate") or against a real
// cluster ("volbind controller").
//
// # Conventions
//
// Every package follows one convention per concern, so that a part reads
// like the next: a constructor takes a Config struct whose zero value works;
// logs go to klog.FromContext(ctx), or to a Config.Logger where no ctx is at
// hand, and a library never configures klog; time comes from a Config.Clock
// (nil: the real clock); metrics go to a Config.Registerer (nil: none, and
// nothing is registered globally); errors are sentinels for errors.Is and
// typed errors for errors.As, their text prefixed with the package's name.
// CONTRIBUTING.md spells the conventions out for contributors.
package volbind
