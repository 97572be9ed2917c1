package binder

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// SyncObserver is told which version of each volume and claim the Binder
// has acted on, so that a test or a tracer can check that every object was
// synced at its latest version: internal/chaos checks it after every run.
// ObjectSynced is called, on the Binder's goroutines and without its locks,
// with
//   - the version of the volume or claim a sync starts from (every sync:
//     those of Run's workers, SyncClaim and SyncVolume), and
//   - the answer to each of the Binder's own updates of a volume or claim
//     that it keeps in its caches: the version a sync or an operation
//     decided on, which the Binder does not sync again (the event of that
//     version finds nothing new).
//
// A version the Binder learned from a read is not reported until a sync
// starts from it. Implementations must be fast and safe for concurrent
// use; obj (a *v1.PersistentVolume or *v1.PersistentVolumeClaim) is shared
// with the Binder's caches: do not modify or retain it beyond its name,
// UID and resourceVersion.
type SyncObserver interface {
	ObjectSynced(obj metav1.Object)
}

// observe tells Config.Observer that obj was acted on; nothing without one.
func (b *Binder) observe(obj metav1.Object) {
	if o := b.cfg.Observer; o != nil {
		o.ObjectSynced(obj)
	}
}
