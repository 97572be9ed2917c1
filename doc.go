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
//   - The packages under internal/ are implementation the others share and
//     users cannot import: pvindex (the best-fit volume index), shard (one
//     seeded hash and one padded shard type) and pvsource (the names of the
//     members of the PersistentVolumeSource union). They import nothing else
//     of ours.
//
// The command github.com/volbind/volbind/cmd/volbind runs the Binder, either
// on the embedded in-memory API ("volbind simulate") or against a real
// cluster ("volbind controller").
//
// # Conventions
//
// Every package follows one convention per concern, so that a part reads
// like the next:
//
//   - Configuration: a constructor takes a Config struct whose zero value
//     works; every field documents its default. No functional options.
//   - Logging: calls that take a ctx log through klog.FromContext(ctx). A
//     part that logs where no ctx is at hand (informer event handlers,
//     background loops) has a klog.Logger field named Logger in its Config,
//     whose zero value means klog.Background(). A library never configures
//     klog.
//   - Time: a Clock field typed with the narrowest k8s.io/utils/clock
//     interface the part needs (PassiveClock to read the time, Clock or
//     WithTicker for timers); nil means clock.RealClock{}. Never a
//     now func() time.Time.
//   - Metrics: a Registerer field; nil means no metrics, in every package.
//     Nothing is ever registered globally.
//   - Errors: sentinels for errors.Is and typed errors for errors.As; every
//     error text starts with its package's prefix ("cache: ",
//     "scheduling: ", ...). One sentinel per meaning: binder.ErrInvalidObject
//     is cache.ErrInvalidObject.
//   - Test doubles users need live in a test package of their own
//     (binder/bindertest); its Server is the binder's API and NodeGetter.
//   - Benchmarks live beside the code they measure; the root bench_test.go
//     holds only end-to-end paths.
package volbind
