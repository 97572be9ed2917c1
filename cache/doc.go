// Package cache holds the two in-memory caches a volume binder decides
// from.
//
// [Assume] sits on top of informer data. The informer side feeds it: it is a
// client-go ResourceEventHandler (a caller with its own watch calls OnAdd,
// OnUpdate and OnDelete). A binder that has just written an object calls
// [Assume.Assume] with the API server's answer, so that its next decision
// sees the new version before the informer delivers it; [Assume.Restore]
// drops such an assumption when the write is abandoned. An informer version
// at least as new as the assumed one replaces it (a resync that re-delivers
// the informer's current version does not). [Assume.Get] returns the latest
// version and [Assume.GetAPIObj] the informer's; lookups take no lock at
// all, so they scale with the cores that make them.
//
// [Latest] is the PersistentVolume controller's "latest version" cache: it is
// updated both from informer events and right after each successful write,
// and it keeps only strictly newer resourceVersions, so a controller never
// acts on (or re-writes) a version older than its own last write. It stores
// the pointers it is given, shared with the informer; nobody may mutate them.
//
// Keys are "name" for cluster-scoped objects and "namespace/name" for
// namespaced ones, as client-go's MetaNamespaceKeyFunc builds them ([Key]).
// ResourceVersions are compared as unsigned integers, as etcd issues them
// ([ParseVersion]); a version that is not an integer is an error, never a
// string comparison. All types are safe for concurrent use.
//
// It is for authors of controllers that decide from informer data and must
// see their own writes at once; binder and binder/scheduling are built on
// it.
package cache
