package binder

import (
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/types"
)

// reservations are the volumes that claim syncs have chosen and are
// binding, excluded from other claims' searches until the binding ends
// (the volume's claimRef is written, or the binding failed), and the claims
// that found no volume while some volume was reserved: when a reservation
// ends with its volume still unclaimed they search again at once rather
// than at their next resync.
//
// Searches run without the lock, on a snapshot of the reserved volumes;
// what they find is reserved with check-and-retry (tryReserve), and a
// search that found nothing tells by freed whether a reservation ended
// with its volume unclaimed after its snapshot (then it searches again
// instead of waiting).
//
// A reservation outlives its claim sync as the claim's hold when the
// sync's write of the volume's claimRef failed in a way that may still
// have been carried out (a timeout): the volume may point at the claim
// without the Binder knowing, so no other claim may take it, and the
// claim's next sync must find out (ownVolume) before it searches or writes
// anything else.
//
// Invariant, under mu: a volume is reserved by at most one claim sync or
// hold; every held volume is reserved; missed is empty while nothing is
// reserved; freed counts the reservations that ended with their volume
// unclaimed; holds is len(held).
type reservations struct {
	// snapshots recycles the maps of snapshot (the copy would otherwise
	// cost one map per search while volumes are reserved: +2% allocations
	// at 32 workers in BenchmarkBinderBindAll).
	snapshots sync.Pool

	// mu guards the fields below.
	mu       sync.Mutex
	reserved map[string]bool
	missed   map[string]struct{}
	freed    uint64
	// held maps a claim's key to its hold.
	held map[string]claimHold
	// holds is len(held), read without mu by the syncs that only drop
	// holds (dropHold), so that they cost nothing while there is none.
	holds atomic.Int32
}

// claimHold is a volume reserved for a claim (by UID) beyond the claim's
// sync.
type claimHold struct {
	volume string
	uid    types.UID
}

func newReservations() *reservations {
	return &reservations{reserved: make(map[string]bool), missed: make(map[string]struct{}), held: make(map[string]claimHold)}
}

// hold turns a claim sync's reservation of volume into the hold of the
// claim with key and uid.
func (r *reservations) hold(key string, uid types.UID, volume string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.held[key] = claimHold{volume: volume, uid: uid}
	r.holds.Store(int32(len(r.held)))
}

// takeHold returns the volume the claim with key holds and true when the
// hold is of uid; the volume stays reserved, now by the caller's sync,
// which ends the reservation with release (or holds it again). A hold of
// another UID (a claim deleted and re-created under the key) is dropped:
// its volume name and false are returned, and the caller releases it.
func (r *reservations) takeHold(key string, uid types.UID) (volume string, own bool) {
	if r.holds.Load() == 0 {
		return "", false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := r.held[key]
	if !ok {
		return "", false
	}
	delete(r.held, key)
	r.holds.Store(int32(len(r.held)))
	return h.volume, h.uid == uid
}

// snapshot returns a copy of the reserved volumes for a search to exclude
// (nil when there is none) and the count of freed reservations to pass to
// miss. Hand the copy back with recycle once the search is over.
func (r *reservations) snapshot() (map[string]bool, uint64) {
	r.mu.Lock()
	n, freed := len(r.reserved), r.freed
	r.mu.Unlock()
	if n == 0 {
		return nil, freed
	}
	out, _ := r.snapshots.Get().(map[string]bool)
	if out == nil {
		out = make(map[string]bool, n)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for name := range r.reserved {
		out[name] = true
	}
	return out, r.freed
}

// recycle takes back a map that snapshot returned.
func (r *reservations) recycle(excluded map[string]bool) {
	if excluded != nil {
		clear(excluded)
		r.snapshots.Put(excluded)
	}
}

// tryReserve reserves the named volume and reports true, or reports false
// when another claim sync holds it (reserved after the caller's snapshot).
func (r *reservations) tryReserve(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reserved[name] {
		return false
	}
	r.reserved[name] = true
	return true
}

// miss records that the claim with key found no volume in a search that
// excluded the snapshot taken when freed reservations had been freed. It
// reports false when a reservation was freed since: the claim must search
// again, as that volume may be the one it needs.
func (r *reservations) miss(key string, excluded map[string]bool, freed uint64) bool {
	if len(excluded) == 0 {
		return true // nothing was excluded: nothing to wait for
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.freed != freed {
		return false
	}
	r.missed[key] = struct{}{}
	return true
}

// release ends the reservation of the named volume. When the volume is
// still unclaimed (the binding failed before its claimRef was written), it
// returns the claims that found no volume while it was reserved, to queue;
// once no reservation is left, they are forgotten.
func (r *reservations) release(name string, unclaimed bool) (wake []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.reserved, name)
	if unclaimed {
		r.freed++
	}
	switch {
	case len(r.missed) == 0:
	case unclaimed:
		wake = make([]string, 0, len(r.missed))
		for key := range r.missed {
			wake = append(wake, key)
		}
		clear(r.missed)
	case len(r.reserved) == 0:
		clear(r.missed)
	}
	return wake
}

// dropHold removes the hold of the claim with key when it is of uid (of
// any UID when uid is empty) and returns its volume, which stays reserved
// until the caller releases it; "" when there is none.
func (r *reservations) dropHold(key string, uid types.UID) string {
	if r.holds.Load() == 0 {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := r.held[key]
	if !ok || (uid != "" && h.uid != uid) {
		return ""
	}
	delete(r.held, key)
	r.holds.Store(int32(len(r.held)))
	return h.volume
}

// len returns the number of reserved volumes.
func (r *reservations) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reserved)
}
