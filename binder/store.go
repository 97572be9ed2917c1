package binder

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/volbind/volbind/cache"
	"github.com/volbind/volbind/internal/pvindex"
	"github.com/volbind/volbind/internal/shard"
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
// from the answers to the Binder's own writes and reads, plus the volume
// index built from the same versions.
//
// Invariant, under the lock of the key's stripe: a key's tombstone holds
// the newest version of the key deleted so far, taken from the deleted
// object's own versions only, so that no version older than a deletion is
// stored again and no object re-created under the key is removed or kept
// out by its predecessor's delete event; a key is in its kind's learned set
// exactly while its cached version came from a read that no event of that
// version has matched yet; a key is in its kind's verify marks from the
// delete event of another UID that its cached object outlived until a
// sync's read finds that object gone or an event of that object arrives.
//
// Every invariant is about one key, so the keys are spread over stripes,
// each with its own lock. With one lock for every key, the claim workers
// and the event handlers of a simulated 200,000 pairs (2 cores, 2 workers
// per queue) waited 3.7 s for it in 8.5 s of binding; with 64 stripes,
// 1.6 s in 8.2 s, and the bind time fell 6–18 % (docs/performance-notes.md).
type store struct {
	clock clock.PassiveClock

	volumes *cache.Latest[*v1.PersistentVolume]
	claims  *cache.Latest[*v1.PersistentVolumeClaim]
	index   *pvindex.Index

	// verifying counts the keys marked for verification in every stripe,
	// so that a sync asks for its key's mark without taking a lock when
	// there is none (always, but after a re-creation).
	verifying atomic.Int32

	hasher  shard.Hasher
	stripes [storeStripes]shard.Padded[stripe]
}

// storeStripes is the number of stripes of a store (a power of two).
const storeStripes = 64

// stripe holds the state of the keys that hash to it. mu makes "check
// tombstone, store, update index" atomic with respect to deletions of
// those keys, and guards the fields below.
type stripe struct {
	mu              sync.Mutex
	volumes, claims keyState
	// sweepAt is the stripe's tombstone count that triggers its next
	// sweep.
	sweepAt int
}

// keyState is what a stripe keeps of the keys of one kind.
type keyState struct {
	// tombs holds deleted objects by key.
	tombs map[string]tombstone
	// learned holds the keys whose cached version was learned from a
	// read, not from an event or a write: that version's own event still
	// queues the object (see shareVolume).
	learned map[string]struct{}
	// verify holds the keys whose cached object outlived the delete event
	// of another UID, with the time from which a sync reads the key to
	// learn whether the cached object still exists (see
	// Binder.verifyVolume): zero right after the delete event, a resync
	// period after a read that found it, until an event of the cached
	// object shows that the informer tracks it again.
	verify map[string]verifyMark
}

// keyKind says whether a key is a volume's name or a claim's key.
type keyKind bool

const (
	volumeKey keyKind = false
	claimKey  keyKind = true
)

// minSweep is the fewest tombstones that trigger a sweep of a stripe.
const minSweep = 16

// newStore returns an empty store whose tombstones are timed on clk and
// whose index is made with opts.
func newStore(clk clock.PassiveClock, opts pvindex.Options) *store {
	s := &store{
		clock:   clk,
		volumes: cache.NewLatest[*v1.PersistentVolume](),
		claims:  cache.NewLatest[*v1.PersistentVolumeClaim](),
		index:   pvindex.NewWithOptions(opts),
		hasher:  shard.NewHasher(),
	}
	for i := range s.stripes {
		st := &s.stripes[i].Value
		st.volumes, st.claims = newKeyState(), newKeyState()
		st.sweepAt = minSweep
	}
	return s
}

func newKeyState() keyState {
	return keyState{
		tombs:   make(map[string]tombstone),
		learned: make(map[string]struct{}),
		verify:  make(map[string]verifyMark),
	}
}

// lock locks the stripe of key (a volume's name or a claim's key) and
// returns it.
func (s *store) lock(key string) *stripe {
	st := &s.stripes[s.hasher.Index(key, storeStripes)].Value
	st.mu.Lock()
	return st
}

// of returns the stripe's state of the keys of kind k.
func (st *stripe) of(k keyKind) *keyState {
	if k == claimKey {
		return &st.claims
	}
	return &st.volumes
}

// version parses rv; an unparsable version counts as 0.
func version(rv string) uint64 {
	v, _ := cache.ParseVersion(rv)
	return v
}

// buriedLocked reports whether a tombstone of key at least as new as rv
// exists, and drops the tombstone when rv is newer (the object was
// re-created). rv is parsed only when key has a tombstone: almost never.
func buriedLocked(tombs map[string]tombstone, key, rv string) bool {
	t, ok := tombs[key]
	if !ok {
		return false
	}
	if version(rv) <= t.rv {
		return true
	}
	delete(tombs, key)
	return false
}

// storeVolume keeps pv if it is newer than the cached version and not older
// than its deletion, and reports whether it did. Valid volumes go into the
// index; malformed ones are kept out of it.
func (s *store) storeVolume(pv *v1.PersistentVolume) (bool, error) {
	st := s.lock(pv.Name)
	defer st.mu.Unlock()
	return s.storeVolumeLocked(st, pv, false)
}

// learnVolume is storeVolume for a volume read from the API.
func (s *store) learnVolume(pv *v1.PersistentVolume) (bool, error) {
	st := s.lock(pv.Name)
	defer st.mu.Unlock()
	return s.storeVolumeLocked(st, pv, true)
}

// storeVolumeLocked is storeVolume, and learnVolume when read, with the
// lock of pv's stripe st held.
func (s *store) storeVolumeLocked(st *stripe, pv *v1.PersistentVolume, read bool) (bool, error) {
	if buriedLocked(st.volumes.tombs, pv.Name, pv.ResourceVersion) {
		return false, nil
	}
	if stored, err := s.volumes.Store(pv); !stored || err != nil {
		return false, err
	}
	if validateVolume(pv) == nil {
		s.index.Upsert(pv)
	} else {
		s.index.Delete(pv.Name)
	}
	setLearnedLocked(st.volumes.learned, pv.Name, read)
	return true, nil
}

// setLearnedLocked records whether the version just stored under key was
// read (learned) rather than delivered by an event or a write's answer.
func setLearnedLocked(learned map[string]struct{}, key string, read bool) {
	if read {
		// A copy, so that key does not escape: the callers' keys of
		// claims (built per event and per write) stay on the stack.
		learned[strings.Clone(key)] = struct{}{}
	} else if len(learned) > 0 {
		delete(learned, key)
	}
}

// takeLearnedLocked reports whether the cached version of key was learned
// from a read and forgets that it was.
func takeLearnedLocked(learned map[string]struct{}, key string) bool {
	if _, ok := learned[key]; !ok {
		return false
	}
	delete(learned, key)
	return true
}

// shareVolume replaces the cached volume with pv, the informer's copy of
// the same version, when the cached one has that version. The cached one is then usually the answer to the Binder's own write (a
// separately decoded object, with managedFields): swapping it for the copy
// the informer caches too leaves one object per volume in memory (the answers
// were half of the controller's heap at 5,000 pairs). It reports whether the
// cached version was learned from a read: no sync has seen it yet, and its
// event must queue the volume as a newer version's would.
func (s *store) shareVolume(pv *v1.PersistentVolume) bool {
	st := s.lock(pv.Name)
	defer st.mu.Unlock()
	if cached, ok := s.volumes.Get(pv.Name); ok && cached == pv {
		return false // an informer resync: nothing to swap, no index lock
	}
	shared, _ := s.volumes.Share(pv)
	if !shared {
		return false
	}
	s.index.Share(pv)
	return takeLearnedLocked(st.volumes.learned, pv.Name)
}

// deleteVolume forgets the volume of a delete event and remembers its
// deletion. The cached volume is forgotten only when it is the deleted one
// (same UID) or older than the deletion: a volume of the same name
// re-created meanwhile, learned from a read or a write before the old
// one's delete event arrived, stays, and the tombstone blocks only
// versions up to the deletion, never the new volume's own events. It
// reports whether the key is now empty (false: a newer volume of that name
// stays, and the key is marked for verification), and returns the cached
// version it forgot, if any (it may be newer than the deleted event's).
func (s *store) deleteVolume(pv *v1.PersistentVolume) (*v1.PersistentVolume, bool) {
	st := s.lock(pv.Name)
	defer st.mu.Unlock()
	cached, ok := s.volumes.Get(pv.Name)
	rv, forget := burial(pv, cached, ok)
	s.buryLocked(st, &st.volumes, pv.Name, rv)
	if !forget {
		s.markVerifyLocked(&st.volumes, pv.Name)
		return nil, false
	}
	s.volumes.Delete(pv.Name)
	s.index.Delete(pv.Name)
	delete(st.volumes.learned, pv.Name)
	s.unmarkVerifyLocked(&st.volumes, pv.Name)
	return cached, true
}

// burial decides, for the delete event of deleted and the cached object
// of its key (if ok), the resourceVersion up to which versions of the key
// are stale, and whether the cached object goes. Versions are global: a
// version no newer than a deletion predates it, whatever its UID, so the
// tombstone blocks by version alone; only the deleted object's own
// versions may raise it (the event of a deletion the informer missed
// carries an older state than the Binder's own last write).
func burial[T metav1.Object](deleted, cached T, ok bool) (rv uint64, forget bool) {
	rv = version(deleted.GetResourceVersion())
	if !ok {
		return rv, true
	}
	crv := version(cached.GetResourceVersion())
	if cached.GetUID() == deleted.GetUID() {
		return max(rv, crv), true
	}
	return rv, crv <= rv
}

// storeClaim is storeVolume for claims.
func (s *store) storeClaim(pvc *v1.PersistentVolumeClaim) (bool, error) {
	return s.storeClaimKey(cache.ClaimKey(pvc.Namespace, pvc.Name), pvc)
}

// storeClaimKey is storeClaim for a caller that has pvc's key
// ("namespace/name") already.
func (s *store) storeClaimKey(key string, pvc *v1.PersistentVolumeClaim) (bool, error) {
	st := s.lock(key)
	defer st.mu.Unlock()
	return s.storeClaimLocked(st, key, pvc, false)
}

// learnClaim is learnVolume for claims.
func (s *store) learnClaim(pvc *v1.PersistentVolumeClaim) (bool, error) {
	key := cache.ClaimKey(pvc.Namespace, pvc.Name)
	st := s.lock(key)
	defer st.mu.Unlock()
	return s.storeClaimLocked(st, key, pvc, true)
}

// storeClaimLocked is storeVolumeLocked for claims; key is pvc's.
func (s *store) storeClaimLocked(st *stripe, key string, pvc *v1.PersistentVolumeClaim, read bool) (bool, error) {
	if buriedLocked(st.claims.tombs, key, pvc.ResourceVersion) {
		return false, nil
	}
	stored, err := s.claims.Store(pvc)
	if stored {
		setLearnedLocked(st.claims.learned, key, read)
	}
	return stored, err
}

// shareClaim is shareVolume for claims; key is pvc's.
func (s *store) shareClaim(key string, pvc *v1.PersistentVolumeClaim) bool {
	st := s.lock(key)
	defer st.mu.Unlock()
	if shared, _ := s.claims.Share(pvc); !shared || len(st.claims.learned) == 0 {
		return false
	}
	return takeLearnedLocked(st.claims.learned, key)
}

// deleteClaim is deleteVolume for claims.
func (s *store) deleteClaim(pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, bool) {
	key := cache.ClaimKey(pvc.Namespace, pvc.Name)
	st := s.lock(key)
	defer st.mu.Unlock()
	cached, ok := s.claims.Get(key)
	rv, forget := burial(pvc, cached, ok)
	s.buryLocked(st, &st.claims, key, rv)
	if !forget {
		s.markVerifyLocked(&st.claims, key)
		return nil, false
	}
	s.claims.Delete(key)
	delete(st.claims.learned, key)
	s.unmarkVerifyLocked(&st.claims, key)
	return cached, true
}

// buryLocked records a tombstone of key in ks, its kind's state in its
// stripe st (never lower than the key's last one) and, when the stripe's
// tombstones have doubled since its last sweep, drops its expired ones
// (amortized O(1)). The caller holds st.mu.
func (s *store) buryLocked(st *stripe, ks *keyState, key string, rv uint64) {
	now := s.clock.Now()
	tombs := ks.tombs
	if t, ok := tombs[key]; ok {
		// Delete events that arrive out of order (a reordered watch)
		// never lower the tombstone.
		rv = max(rv, t.rv)
	}
	tombs[key] = tombstone{rv: rv, when: now}
	if n := len(st.volumes.tombs) + len(st.claims.tombs); n >= st.sweepAt {
		for _, m := range []map[string]tombstone{st.volumes.tombs, st.claims.tombs} {
			for k, t := range m {
				if now.Sub(t.when) > tombstoneTTL {
					delete(m, k)
				}
			}
		}
		st.sweepAt = max(minSweep, 2*(len(st.volumes.tombs)+len(st.claims.tombs)))
	}
}

// verifyMark is a key's pending verification read.
type verifyMark struct {
	// due is when a sync reads the key: zero after a delete event of
	// another UID, a resync period after a read that found the object.
	due time.Time
	// reading is set while a sync reads the key and cleared by a delete
	// event of another UID, which asks for a read after this one.
	reading bool
}

// takeVerify reports whether the verification read of key, of kind k, is
// due and, if so, notes that it runs.
func (s *store) takeVerify(k keyKind, key string) bool {
	if s.verifying.Load() == 0 {
		return false
	}
	st := s.lock(key)
	defer st.mu.Unlock()
	marks := st.of(k).verify
	m, ok := marks[key]
	if !ok || s.clock.Now().Before(m.due) {
		return false
	}
	marks[key] = verifyMark{due: m.due, reading: true}
	return true
}

// retryVerify asks for key's verification read at the next sync again (the
// read failed), unless an event of the object came during the read.
func (s *store) retryVerify(k keyKind, key string) {
	st := s.lock(key)
	defer st.mu.Unlock()
	marks := st.of(k).verify
	if _, ok := marks[key]; ok {
		marks[key] = verifyMark{}
	}
}

// markVerifyLocked marks key, in ks of its stripe, for a read at its next
// sync. The caller holds the stripe's lock.
func (s *store) markVerifyLocked(ks *keyState, key string) {
	if _, ok := ks.verify[key]; !ok {
		s.verifying.Add(1)
	}
	ks.verify[key] = verifyMark{}
}

// verifyAgain is called when the verification read found the cached
// object. The informer may have lost it: a reordered watch that delivered
// its add before the delete of its predecessor leaves the informer without
// the key, and an informer drops the delete event of a key it does not
// hold (chaos seed 611924 kept a deleted claim's volume Bound). So the key
// is read again at its first sync after period, until an event of the
// object shows that the informer holds it (trackedVolume, trackedClaim);
// a delete event that came during the read asks for a read at once.
func (s *store) verifyAgain(k keyKind, key string, period time.Duration) {
	st := s.lock(key)
	defer st.mu.Unlock()
	marks := st.of(k).verify
	if m, ok := marks[key]; ok && m.reading {
		marks[key] = verifyMark{due: s.clock.Now().Add(period)}
	}
}

// unmarkVerify unmarks key, of kind k (its object is gone from the cache).
func (s *store) unmarkVerify(k keyKind, key string) {
	st := s.lock(key)
	defer st.mu.Unlock()
	s.unmarkVerifyLocked(st.of(k), key)
}

// trackedVolume unmarks the volume's key when pv, from an event, is the
// cached volume: the informer holds it, so its deletion will be delivered.
func (s *store) trackedVolume(pv *v1.PersistentVolume) {
	if s.verifying.Load() == 0 {
		return
	}
	st := s.lock(pv.Name)
	defer st.mu.Unlock()
	if cached, ok := s.volumes.Get(pv.Name); ok && cached.UID == pv.UID {
		s.unmarkVerifyLocked(&st.volumes, pv.Name)
	}
}

// trackedClaim is trackedVolume for claims; key is pvc's.
func (s *store) trackedClaim(key string, pvc *v1.PersistentVolumeClaim) {
	if s.verifying.Load() == 0 {
		return
	}
	st := s.lock(key)
	defer st.mu.Unlock()
	if cached, ok := s.claims.Get(key); ok && cached.UID == pvc.UID {
		s.unmarkVerifyLocked(&st.claims, key)
	}
}

// unmarkVerifyLocked unmarks key in ks of its stripe and reports whether
// it was marked. The caller holds the stripe's lock.
func (s *store) unmarkVerifyLocked(ks *keyState, key string) bool {
	if _, ok := ks.verify[key]; !ok {
		return false
	}
	delete(ks.verify, key)
	s.verifying.Add(-1)
	return true
}

func (s *store) volume(name string) (*v1.PersistentVolume, bool) { return s.volumes.Get(name) }

func (s *store) claim(key string) (*v1.PersistentVolumeClaim, bool) { return s.claims.Get(key) }
