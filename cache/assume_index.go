package cache

import "slices"

// entrySet is the set of entries with one value of one index. Entries sit in
// a dense slice so that List copies them in time proportional to the result;
// pos finds an entry's slot for constant-time removal.
type entrySet[E comparable] struct {
	items []E
	pos   map[E]int
}

func (s *entrySet[E]) add(e E) {
	if _, ok := s.pos[e]; ok {
		return
	}
	s.pos[e] = len(s.items)
	s.items = append(s.items, e)
}

func (s *entrySet[E]) remove(e E) {
	i, ok := s.pos[e]
	if !ok {
		return
	}
	last := len(s.items) - 1
	if i != last {
		moved := s.items[last]
		s.items[i] = moved
		s.pos[moved] = i
	}
	var zero E
	s.items[last] = zero
	s.items = s.items[:last]
	delete(s.pos, e)
	// Give memory back when the set has shrunk to a quarter of its
	// capacity, so a value that once had many objects stays cheap.
	if c := cap(s.items); c > 64 && len(s.items) < c/4 {
		s.items = slices.Clip(append([]E(nil), s.items...))
	}
}

// reindexLocked moves e in the indexes from the values of version old to
// those of version new; either may be nil (insert, delete). Called with c.mu
// held.
func (c *Assume[T]) reindexLocked(e *entry[T], old, new *version[T]) {
	for i, values := range c.indexes {
		var ov, nv []string
		if old != nil {
			ov = old.idx[i]
		}
		if new != nil {
			nv = new.idx[i]
		}
		if slices.Equal(ov, nv) {
			continue
		}
		for _, v := range ov {
			if slices.Contains(nv, v) {
				continue
			}
			if s := values[v]; s != nil {
				s.remove(e)
				if len(s.items) == 0 {
					delete(values, v)
				}
			}
		}
		for _, v := range nv {
			if slices.Contains(ov, v) {
				continue
			}
			s := values[v]
			if s == nil {
				s = &entrySet[*entry[T]]{pos: make(map[*entry[T]]int, 1)}
				values[v] = s
			}
			s.add(e)
		}
	}
}

// indexPos returns the position of the index called name, or -1.
func (c *Assume[T]) indexPos(name string) int {
	for i, n := range c.indexNames {
		if n == name {
			return i
		}
	}
	return -1
}

// List returns the latest objects (assumed versions where present) whose
// index called index has value, in no particular order, in time
// proportional to the number returned. An unknown index or value gives nil.
// The objects are shared: do not mutate them.
func (c *Assume[T]) List(index, value string) []T {
	i := c.indexPos(index)
	if i < 0 {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	s := c.indexes[i][value]
	if s == nil {
		return nil
	}
	out := make([]T, len(s.items))
	for j, e := range s.items {
		out[j] = e.latest.Load().obj
	}
	return out
}

// IndexValues returns the values of index that currently have objects, in no
// particular order; nil for an unknown index.
func (c *Assume[T]) IndexValues(index string) []string {
	i := c.indexPos(index)
	if i < 0 {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, 0, len(c.indexes[i]))
	for v := range c.indexes[i] {
		out = append(out, v)
	}
	return out
}
