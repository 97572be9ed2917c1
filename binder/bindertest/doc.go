// Package bindertest is an in-memory API server for tests, benchmarks and
// simulations of volume binding: a Server holds StorageClasses, Nodes,
// PersistentVolumes, PersistentVolumeClaims and Pods with the semantics of
// kube-apiserver + etcd that a binder depends on (a global increasing
// resourceVersion, Conflict on a stale one, the status subresource,
// finalizers and deletionTimestamp, ordered events, watches that resume from
// a resourceVersion). It implements binder.API and recycler.PodAPI, feeds
// event handlers directly (AddEventHandler) or client-go informers
// (ListWatch), counts requests (Stats) and has the faults of real API
// servers: errors, conflicts, timeouts and latency on chosen requests,
// writes applied but answered with an error, the N-th request of a verb on
// an object (InjectFault, ArmFaults for a queue of different faults);
// dropped, duplicated, delayed and reordered events of one object, stalled
// watches, slow watches that deliver every event in order but late, and
// forced relists (InjectWatchFault, StallWatches, SlowWatches,
// ForceRelist); and events delivered after the write returns
// (Config.AsyncEvents). Each fault draws from its own random stream, derived
// from the Server's seed (Config.Seed) so that a run replays.
//
// Every create, seed, update and status update is validated as
// kube-apiserver v1.37.2 validates it: an object it would reject fails
// with the same apierrors Invalid error and field paths and is not stored
// (Validate runs the same check on its own; SeedInvalid stores objects
// without it, to test how a client copes with them).
//
// Objects passed to a Server are never retained; objects returned are deep
// copies the caller owns; objects passed to event handlers are shared and
// read-only. A Server that only trusted clients use can skip the copies:
// Config.SharedResults returns the stored versions themselves (read-only,
// like handlers' objects; a binder.Binder never modifies what its API
// returns), and Config.AdoptSeeds stores the objects given to Seed. That
// is how volbind simulate holds a million pairs. All methods are safe for
// concurrent use.
//
// AdvanceVersions makes client-go's fake clientset keep resourceVersions
// the same way, for tests that run a Binder on it instead.
//
// It is for embedders who test their own wiring of a binder.Binder,
// scheduling.VolumeBinder or recycler.Recycler without a cluster, and it is
// what this repository's tests, benchmarks, chaos suite and "volbind
// simulate" run on.
package bindertest
