package cache

import (
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// minTableSize is the number of slots of an empty table. It is a power of
// two.
const minTableSize = 16

// table is an open-addressing hash table with linear probing from keys to
// entries. Readers use it without any lock; writers hold Assume.mu.
//
// A slot's hash and key are written once, before its entry is published,
// and never change: a deleted slot stays a tombstone until the table is
// replaced. So a reader that has loaded a slot's entry may read its key, and
// Get finds the latest object in the slot itself, touching one slot and no
// other memory of the cache. A table never grows in place: a writer builds
// a new one and publishes it; readers still holding the old one see a
// snapshot from before the switch.
type table[T metav1.Object] struct {
	// slots always has a free slot, so probes end.
	slots []slot[T]
	mask  uint64
	// used counts the slots that are not free (entries and tombstones).
	// Guarded by Assume.mu.
	used int
}

// slot is one key of a table.
type slot[T metav1.Object] struct {
	// e is nil (free), the Assume's tombstone (deleted) or the key's
	// entry. It is stored last when the slot is filled.
	e atomic.Pointer[entry[T]]
	// obj holds a box[T] with the entry's latest object.
	obj atomic.Value
	// hash and key are written before e and never change.
	hash uint64
	key  string
}

// box wraps an object for atomic.Value, which needs one dynamic type even
// when T is an interface. For a pointer T it is stored without allocating.
type box[T any] struct{ obj T }

func newTable[T metav1.Object](size int) *table[T] {
	n := minTableSize
	for n < size {
		n <<= 1
	}
	return &table[T]{slots: make([]slot[T], n), mask: uint64(n - 1)}
}

// get returns the latest object of key, whose hash is h. tomb is the
// owner's tombstone. It takes no lock.
func (t *table[T]) get(h uint64, key string, tomb *entry[T]) (T, bool) {
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		e := s.e.Load()
		if e == nil {
			var zero T
			return zero, false
		}
		if s.hash == h && e != tomb && s.key == key {
			obj := s.obj.Load().(box[T]).obj
			// A delete clears obj after marking the slot: check that it
			// has not happened meanwhile.
			if s.e.Load() != e {
				var zero T
				return zero, false
			}
			return obj, true
		}
	}
}

// find returns the slot of key, whose hash is h, or nil. It takes no lock.
func (t *table[T]) find(h uint64, key string, tomb *entry[T]) *slot[T] {
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		e := s.e.Load()
		if e == nil {
			return nil
		}
		if s.hash == h && e != tomb && s.key == key {
			return s
		}
	}
}

// insertLocked fills the first free slot of h's probe sequence with key,
// e and obj, and returns it. key must not be in t, and t must have room
// (see fits).
func (t *table[T]) insertLocked(h uint64, key string, e *entry[T], obj box[T]) *slot[T] {
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.e.Load() == nil {
			s.hash, s.key = h, key
			s.obj.Store(obj)
			t.used++
			s.e.Store(e)
			return s
		}
	}
}

// removeLocked makes s a tombstone and drops its object.
func (s *slot[T]) removeLocked(tomb *entry[T]) {
	s.e.Store(tomb)
	s.obj.Store(box[T]{})
}

// fits reports whether one more slot may be used while keeping the load,
// tombstones included, at most 3/4.
func (t *table[T]) fits() bool {
	return (t.used+1)*4 <= len(t.slots)*3
}

// resized returns a new table holding t's entries (not its tombstones)
// at a load of at most 1/2, with room for one more.
func (t *table[T]) resized(live int, tomb *entry[T]) *table[T] {
	nt := newTable[T](2 * (live + 1))
	for i := range t.slots {
		s := &t.slots[i]
		if e := s.e.Load(); e != nil && e != tomb {
			nt.insertLocked(s.hash, s.key, e, s.obj.Load().(box[T]))
		}
	}
	return nt
}

// all calls f for every entry of t and its key, in slot order. It takes
// no lock.
func (t *table[T]) all(tomb *entry[T], f func(key string, e *entry[T])) {
	for i := range t.slots {
		s := &t.slots[i]
		if e := s.e.Load(); e != nil && e != tomb {
			f(s.key, e)
		}
	}
}
