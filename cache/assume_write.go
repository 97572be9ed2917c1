package cache

import (
	"fmt"
)

// inform stores an object delivered by an informer and reports whether it
// was stored (as the latest or only as the API object). A version at least
// as new as the latest replaces the latest and the API object (dropping an
// assumption it has caught up with); an older one that is not older than
// the API object replaces only the API object; anything older is ignored.
// An invalid object (no name, a non-integer resourceVersion) gives an error
// wrapping ErrInvalidObject or ErrInvalidVersion and leaves the cache
// unchanged.
//
// resync marks an informer event that re-delivers
// the version the informer already had (a periodic resync or a relist of
// an unchanged object): it carries nothing new, so it does not replace an
// object assumed at the same version.
func (c *Assume[T]) inform(obj T, resync bool) (bool, error) {
	key, v, err := c.newVersion(obj)
	if err != nil {
		return false, err
	}
	h := c.hash.Sum(key)
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.tab.Load()
	s := t.find(h, key, c.tomb)
	if s == nil {
		e := &entry[T]{}
		e.api.Store(v)
		e.latest.Store(v)
		c.insertLocked(t, h, key, e, v)
		return true, nil
	}
	e := s.e.Load()
	latest, api := e.latest.Load(), e.api.Load()
	switch {
	case v.rv > latest.rv, v.rv == latest.rv && (!resync || latest == api):
		e.api.Store(v)
		s.setLatestLocked(v)
	case v.rv >= api.rv:
		e.api.Store(v)
	default:
		return false, nil
	}
	return true, nil
}

// insertLocked adds key with entry e at version v; key is not in t (the
// current table). It grows the table first when it is full.
func (c *Assume[T]) insertLocked(t *table[T], h uint64, key string, e *entry[T], v *version[T]) {
	if !t.fits() {
		t = t.resized(int(c.live.Load()), c.tomb)
		c.tab.Store(t)
	}
	t.insertLocked(h, key, e, box[T]{v.obj})
	c.live.Add(1)
}

// deleteKey removes key, its API object and any assumed version; an unknown
// key is a no-op. Deletion is final: no version is checked.
func (c *Assume[T]) deleteKey(key string) {
	h := c.hash.Sum(key)
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.tab.Load()
	s := t.find(h, key, c.tomb)
	if s == nil {
		return
	}
	s.removeLocked(c.tomb)
	live := c.live.Add(-1)
	// Give memory back once most keys are gone.
	if len(t.slots) > minTableSize && live*8 < int64(len(t.slots)) {
		c.tab.Store(t.resized(int(live), c.tomb))
	}
}

// Assume makes obj the latest version of its key until the informer catches
// up with it or Restore is called. obj should be what the API server returned
// for a write. It fails, leaving the cache unchanged, when the key is unknown
// (an error wrapping ErrNotFound), when obj's resourceVersion is older than
// the latest one (a *StaleError naming both versions), or when it is not an
// integer (ErrInvalidVersion). An equal version is accepted; an informer
// event at that version (other than a resync) then replaces the assumption.
func (c *Assume[T]) Assume(obj T) error {
	key, v, err := c.newVersion(obj)
	if err != nil {
		return fmt.Errorf("cache: assume: %w", err)
	}
	h := c.hash.Sum(key)
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.tab.Load().find(h, key, c.tomb)
	if s == nil {
		return fmt.Errorf("cache: assume %s %q at version %d: %w", c.description, key, v.rv, ErrNotFound)
	}
	e := s.e.Load()
	latest := e.latest.Load()
	if v.rv < latest.rv {
		return fmt.Errorf("cache: assume: %w", &StaleError{Description: c.description, Key: key, Stored: latest.rv, Given: v.rv})
	}
	s.setLatestLocked(v)
	return nil
}

// Restore drops the assumed version of key, if any, so that Get returns the
// informer's object again. An unknown key (e.g. deleted meanwhile) is a
// no-op.
func (c *Assume[T]) Restore(key string) {
	h := c.hash.Sum(key)
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.tab.Load().find(h, key, c.tomb)
	if s == nil {
		return
	}
	e := s.e.Load()
	latest, api := e.latest.Load(), e.api.Load()
	if latest == api {
		return
	}
	s.setLatestLocked(api)
}
