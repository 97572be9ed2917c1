package binder

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/volbind/volbind/cache"
	"github.com/volbind/volbind/internal/pvindex"
)

// tombstoneTTL is how long a deleted object's last resourceVersion is
// remembered, so that the answer of a write that raced with the deletion
// does not bring the object back into the caches. It only needs to outlast
// one API call.
const tombstoneTTL = 10 * time.Minute

// tombstone is the last version of a deleted object and when it was seen.
type tombstone struct {
	rv   uint64
	when time.Time
}

// store holds the latest version of every volume and claim, from events and
// from the answers to the Binder's own writes, plus the volume index built
// from the same versions.
type store struct {
	clock clock.PassiveClock

	volumes *cache.Latest[*v1.PersistentVolume]
	claims  *cache.Latest[*v1.PersistentVolumeClaim]
	index   *pvindex.Index

	// mu makes "check tombstone, store, update index" atomic with respect to
	// deletions, and guards the fields below.
	mu sync.Mutex
	// volumeTombs and claimTombs hold deleted objects by key.
	volumeTombs, claimTombs map[string]tombstone
	// sweepAt is the tombstone count that triggers the next sweep.
	sweepAt int
}

// newStore returns an empty store whose tombstones are timed on clk and
// whose index is made with opts.
func newStore(clk clock.PassiveClock, opts pvindex.Options) *store {
	return &store{
		clock:       clk,
		volumes:     cache.NewLatest[*v1.PersistentVolume](),
		claims:      cache.NewLatest[*v1.PersistentVolumeClaim](),
		index:       pvindex.NewWithOptions(opts),
		volumeTombs: make(map[string]tombstone),
		claimTombs:  make(map[string]tombstone),
		sweepAt:     1024,
	}
}

// version parses rv; an unparsable version counts as 0.
func version(rv string) uint64 {
	v, _ := cache.ParseVersion(rv)
	return v
}

// buried reports whether a tombstone at least as new as rv exists, and drops
// the tombstone when rv is newer (the object was re-created).
func buriedLocked(tombs map[string]tombstone, key string, rv uint64) bool {
	t, ok := tombs[key]
	if !ok {
		return false
	}
	if rv <= t.rv {
		return true
	}
	delete(tombs, key)
	return false
}

// storeVolume keeps pv if it is newer than the cached version and not older
// than its deletion, and reports whether it did. Valid volumes go into the
// index; malformed ones are kept out of it.
func (s *store) storeVolume(pv *v1.PersistentVolume) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if buriedLocked(s.volumeTombs, pv.Name, version(pv.ResourceVersion)) {
		return false, nil
	}
	stored, err := s.volumes.Store(pv)
	if !stored || err != nil {
		return false, err
	}
	if validateVolume(pv) == nil {
		s.index.Upsert(pv)
	} else {
		s.index.Delete(pv.Name)
	}
	return true, nil
}

// shareVolume replaces the cached volume with pv, the informer's copy of
// the same version, when the cached one has that version. The cached one is then usually the answer to the Binder's own write (a
// separately decoded object, with managedFields): swapping it for the copy
// the informer caches too leaves one object per volume in memory (the answers
// were half of the controller's heap at 5,000 pairs).
func (s *store) shareVolume(pv *v1.PersistentVolume) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cached, ok := s.volumes.Get(pv.Name); ok && cached == pv {
		return // an informer resync: nothing to swap, no index lock
	}
	if shared, _ := s.volumes.Share(pv); shared {
		s.index.Share(pv)
	}
}

// deleteVolume forgets the volume and remembers its deletion. It returns
// the cached version, if any (it may be newer than the deleted event's).
func (s *store) deleteVolume(pv *v1.PersistentVolume) *v1.PersistentVolume {
	s.mu.Lock()
	defer s.mu.Unlock()
	rv := version(pv.ResourceVersion)
	cached, ok := s.volumes.Get(pv.Name)
	if ok {
		rv = max(rv, version(cached.ResourceVersion))
	}
	s.buryLocked(s.volumeTombs, pv.Name, rv)
	s.volumes.Delete(pv.Name)
	s.index.Delete(pv.Name)
	return cached
}

// storeClaim is storeVolume for claims.
func (s *store) storeClaim(pvc *v1.PersistentVolumeClaim) (bool, error) {
	key := cache.ClaimKey(pvc.Namespace, pvc.Name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if buriedLocked(s.claimTombs, key, version(pvc.ResourceVersion)) {
		return false, nil
	}
	return s.claims.Store(pvc)
}

// shareClaim is shareVolume for claims.
func (s *store) shareClaim(pvc *v1.PersistentVolumeClaim) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = s.claims.Share(pvc)
}

// deleteClaim is deleteVolume for claims.
func (s *store) deleteClaim(pvc *v1.PersistentVolumeClaim) *v1.PersistentVolumeClaim {
	key := cache.ClaimKey(pvc.Namespace, pvc.Name)
	s.mu.Lock()
	defer s.mu.Unlock()
	rv := version(pvc.ResourceVersion)
	cached, ok := s.claims.Get(key)
	if ok {
		rv = max(rv, version(cached.ResourceVersion))
	}
	s.buryLocked(s.claimTombs, key, rv)
	s.claims.Delete(key)
	return cached
}

// buryLocked records a tombstone and, when the tombstones have doubled
// since the last sweep, drops the expired ones (amortized O(1)).
func (s *store) buryLocked(tombs map[string]tombstone, key string, rv uint64) {
	now := s.clock.Now()
	tombs[key] = tombstone{rv: rv, when: now}
	if n := len(s.volumeTombs) + len(s.claimTombs); n >= s.sweepAt {
		for _, m := range []map[string]tombstone{s.volumeTombs, s.claimTombs} {
			for k, t := range m {
				if now.Sub(t.when) > tombstoneTTL {
					delete(m, k)
				}
			}
		}
		s.sweepAt = max(1024, 2*(len(s.volumeTombs)+len(s.claimTombs)))
	}
}

func (s *store) volume(name string) (*v1.PersistentVolume, bool) { return s.volumes.Get(name) }

func (s *store) claim(key string) (*v1.PersistentVolumeClaim, bool) { return s.claims.Get(key) }
