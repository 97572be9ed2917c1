package scheduling

import (
	"fmt"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

// Informer is what FollowVolumes and FollowClaims need of a client-go
// SharedIndexInformer.
type Informer interface {
	AddIndexers(indexers toolscache.Indexers) error
	GetIndexer() toolscache.Indexer
	AddEventHandler(handler toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error)
}

// FollowIndex starts the names of the indexes FollowVolumes and
// FollowClaims add to an informer, one per VolumeBinder. They file
// nothing: their functions only record which keys the informer's store
// changed.
const FollowIndex = "volbind.io/scheduling-follow"

// FollowVolumes feeds the binder's volumes from a PersistentVolume
// informer such that Find, Check, Assume and the lookups see every change
// the informer's store holds when they are called, even one whose event
// the informer has not yet handed to any handler. Use it instead of
// VolumeHandler when something else reacts to the same informer's events
// and then asks the binder, as kube-scheduler's queue does: the queue
// retries a pod when its own handler sees a new volume, and a binder fed by
// VolumeHandler, whose events run on another goroutine, may not have the
// volume yet, which loses the retry for good.
//
// It adds an index named after FollowIndex to the informer (client-go runs index functions
// inside the store's update, before any handler learns of it, so the
// binder knows which keys changed) and a handler that applies the changes
// and wakes Bind; Find and the others apply the changes recorded so far
// before they read, from the store. It returns the handler's registration
// (its HasSynced tells when the informer's initial list is in the binder).
// Call it once per binder, before or after the informer starts. A deletion
// that the informer learns from a relist reaches the binder with its
// handler event, as with VolumeHandler.
func (b *VolumeBinder) FollowVolumes(inf Informer) (toolscache.ResourceEventHandlerRegistration, error) {
	return b.follow(inf, &b.volumeFollower, "PersistentVolume", b.applyVolume)
}

// FollowClaims is FollowVolumes for a PersistentVolumeClaim informer, in
// place of ClaimHandler.
func (b *VolumeBinder) FollowClaims(inf Informer) (toolscache.ResourceEventHandlerRegistration, error) {
	return b.follow(inf, &b.claimFollower, "PersistentVolumeClaim", b.applyClaim)
}

func (b *VolumeBinder) follow(inf Informer, slot *atomic.Pointer[follower], kind string, apply func(key string, obj any, exists bool)) (toolscache.ResourceEventHandlerRegistration, error) {
	if inf == nil {
		return nil, fmt.Errorf("scheduling: follow %s informer: nil informer: %w", kind, ErrInvalidArgument)
	}
	f := &follower{store: inf.GetIndexer(), apply: apply, dirty: map[string]struct{}{}}
	b.followMu.Lock()
	defer b.followMu.Unlock()
	if slot.Load() != nil {
		return nil, fmt.Errorf("scheduling: follow %s informer: already following one: %w", kind, ErrInvalidArgument)
	}
	// Binders following one informer need indexes of their own.
	index := fmt.Sprintf("%s/%p", FollowIndex, b)
	if err := inf.AddIndexers(toolscache.Indexers{index: f.indexFunc}); err != nil {
		return nil, fmt.Errorf("scheduling: follow %s informer: %w", kind, err)
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { f.eventFor(obj); b.changes.notify() },
		UpdateFunc: func(_, obj any) { f.eventFor(obj); b.changes.notify() },
		DeleteFunc: func(obj any) { f.eventFor(obj); b.changes.notify() },
	})
	if err != nil {
		return nil, fmt.Errorf("scheduling: follow %s informer: %w", kind, err)
	}
	slot.Store(f)
	return reg, nil
}

// catchUp applies the changes that the followed informers' stores have
// recorded so far. It costs two atomic loads per informer when there are
// none.
func (b *VolumeBinder) catchUp() {
	if vf := b.volumeFollower.Load(); vf != nil {
		vf.catchUp()
	}
	if cf := b.claimFollower.Load(); cf != nil {
		cf.catchUp()
	}
}

// applyVolume makes the volume cache and index hold the store's version
// of volume key (exists false: none).
func (b *VolumeBinder) applyVolume(key string, obj any, exists bool) {
	if !exists {
		b.volumeEvent(key, func() { b.pvs.OnDelete(toolscache.DeletedFinalStateUnknown{Key: key}) })
		b.affinity.forget(key)
		b.csiAffinity.forget(key)
		return
	}
	pv, ok := obj.(*v1.PersistentVolume)
	if !ok {
		b.pvs.OnAdd(obj, false) // logs the wrong type
		return
	}
	b.volumeEvent(key, func() {
		if old, ok := b.pvs.GetAPIObj(key); ok {
			b.pvs.OnUpdate(old, pv) // the same version is a resync: it keeps an assumption
			return
		}
		b.pvs.OnAdd(pv, false)
	})
}

// applyClaim makes the claim cache hold the store's version of claim key.
func (b *VolumeBinder) applyClaim(key string, obj any, exists bool) {
	if !exists {
		b.pvcs.OnDelete(toolscache.DeletedFinalStateUnknown{Key: key})
		return
	}
	if old, ok := b.pvcs.GetAPIObj(key); ok {
		b.pvcs.OnUpdate(old, obj)
		return
	}
	b.pvcs.OnAdd(obj, false)
}

// follower records the keys an informer's store changed and applies the
// store's versions of them to one of the binder's caches. Every change
// applied to a cache is the store's latest version of its key, read after
// the change was recorded, so the cache never goes back to an older
// version, whatever order events arrive in.
type follower struct {
	store toolscache.KeyGetter
	apply func(key string, obj any, exists bool)

	// mu guards dirty; marked is incremented under it.
	mu sync.Mutex
	// dirty holds the keys changed since the last drain.
	dirty map[string]struct{}
	// marked counts the changes recorded; applied is the count when the
	// last completed drain took the dirty keys: every change recorded up
	// to it is in the cache.
	marked, applied atomic.Uint64
	// drainMu serialises drains, so that a key's versions are applied in
	// the order they were read.
	drainMu sync.Mutex
}

// indexFunc is FollowIndex's function. The store calls it under its lock
// for every object it adds, updates or deletes, before the informer hands
// the change to any handler. It files nothing and never fails (an index
// function's error makes client-go panic).
func (f *follower) indexFunc(obj any) ([]string, error) {
	if key, err := toolscache.MetaNamespaceKeyFunc(obj); err == nil {
		f.mark(key)
	}
	return nil, nil
}

func (f *follower) mark(key string) {
	f.mu.Lock()
	f.dirty[key] = struct{}{}
	f.marked.Add(1)
	f.mu.Unlock()
}

// eventFor records the key of a handler event's object (a deletion found
// by a relist reaches the store without its index function) and catches
// up.
func (f *follower) eventFor(obj any) {
	if key, err := toolscache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		f.mark(key)
	}
	f.catchUp()
}

// catchUp returns once every change recorded before it was called is
// applied, draining the dirty keys itself when no other drain covers
// them.
func (f *follower) catchUp() {
	want := f.marked.Load()
	if f.applied.Load() >= want {
		return
	}
	f.drainMu.Lock()
	defer f.drainMu.Unlock()
	if f.applied.Load() >= want {
		return
	}
	f.mu.Lock()
	keys, upTo := f.dirty, f.marked.Load()
	f.dirty = make(map[string]struct{}, len(keys))
	f.mu.Unlock()
	for key := range keys {
		obj, exists, err := f.store.GetByKey(key)
		if err != nil {
			// client-go's stores never fail a lookup; keep the key.
			f.mark(key)
			continue
		}
		f.apply(key, obj, exists)
	}
	f.applied.Store(upTo)
}
