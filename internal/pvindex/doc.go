// Package pvindex is the best-fit PersistentVolume index shared by the binder's
// claim sync and by the scheduler-side binder.
//
// An Index holds every PersistentVolume it is given (Upsert, Delete) and answers
// FindBestMatch with exactly the volume that the Kubernetes PV controller's
// findBestMatchForClaim would choose: it searches the access-mode sets that
// contain all of the claim's modes, fewest modes first, and in the first set
// with a match it takes the answer of component-helpers' FindMatchingVolume. A
// volume pre-bound to the claim wins outright; otherwise the smallest volume
// that satisfies the request, class, VolumeAttributesClass, volume mode,
// selector and (when a node is given) node affinity is returned.
//
// FindOptions carries FindMatchingVolume's other arguments: delayed binding
// (WaitForFirstConsumer: with no node only pre-bound volumes are returned),
// a node whose labels the volumes' required node affinity must fit, and
// volumes to exclude. FindOptions.SchedulerSearch switches to kube-scheduler's
// search, one FindMatchingVolume over every volume of the claim's class with
// no access-mode sets.
//
// Kubernetes scans every volume for every claim. Here, volumes that are
// unbound, Available (with Options.UnmarkedCandidates, also those whose
// phase is still empty or Pending) and not being deleted sit in ordered
// trees, one per
// (storage class, VolumeAttributesClass, volume mode, access-mode set), keyed
// by capacity; volumes that carry a claimRef are kept in a map by the claim
// they name. One FindBestMatch costs O(log N) plus the candidates it has to
// skip because of the claim's selector, node affinity or FindOptions.Exclude.
//
// Kubernetes leaves three orders to the iteration order of its informer cache
// (a Go map), so on equal terms its answer is arbitrary. The Index decides
// them deterministically, as if the cache listed volumes by name (the
// randomized differential test in this package checks every answer against
// FindMatchingVolume on volumes listed that way):
//
//   - among volumes of equal capacity, the one whose name sorts first wins;
//   - among several volumes pre-bound to the same claim, the one whose name
//     sorts first decides (it is returned, or, if its node affinity does not
//     fit the node, that access-mode set yields no match);
//   - among access-mode sets with the same number of modes, the set whose
//     modes are the "weakest" is searched first, with ReadWriteOnce <
//     ReadOnlyMany < ReadWriteMany < ReadWriteOncePod compared as bits (so
//     RWO+ROX comes before RWO+RWX).
//
// The VolumeAttributesClass feature gate is locked on in Kubernetes 1.36+, so
// the Index always compares VolumeAttributesClassName. All methods are safe for
// concurrent use; FindBestMatch runs under a read lock, so concurrent finds
// (the scheduler's parallel filter) do not serialize.
package pvindex
