// Package dedup shares equal maps, access-mode lists and volume node
// affinities between Kubernetes objects that are kept and never modified:
// the versions an in-memory API server stores, or the objects an informer
// caches. A cluster of N volumes and claims holds a handful of distinct
// capacities, label and annotation sets, access modes and zone affinities,
// but every object decoded from a request or a watch carries its own copy
// (a one-entry ResourceList costs ~700 bytes of map).
package dedup
