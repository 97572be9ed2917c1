package binder

// ownTable holds the state of the keys the Binder is updating. They are
// few (one per worker or operation writing at once), so the first
// ownTableSmall of them are searched in a slice, which compares the
// names, where a map hashed the whole key on each of the ~12 lookups of a
// binding: BenchmarkBinderBindAll, 10,000 pairs, workers=1, 2 cores,
// ownWrites' CPU 1.16 → 0.45 s in 600,000 bindings. Keys beyond those
// go to a map, so that many writes in flight do not make every search
// long. The zero value is empty and ready to use; it is not safe for
// concurrent use.
type ownTable struct {
	small []ownEntry
	more  map[ownKey]*ownWrite
}

// ownTableSmall is how many keys an ownTable searches in order.
const ownTableSmall = 16

type ownEntry struct {
	k ownKey
	w ownWrite
}

// find returns k's state, or nil when k is not held.
func (t *ownTable) find(k ownKey) *ownWrite {
	for i := range t.small {
		if e := &t.small[i]; e.k.name == k.name && e.k.kind == k.kind && e.k.namespace == k.namespace {
			return &e.w
		}
	}
	if t.more != nil {
		return t.more[k]
	}
	return nil
}

// get returns k's state, added empty when k is not held. The pointer is
// valid until the next get or remove.
func (t *ownTable) get(k ownKey) *ownWrite {
	if w := t.find(k); w != nil {
		return w
	}
	if len(t.small) < ownTableSmall {
		t.small = append(t.small, ownEntry{k: k})
		return &t.small[len(t.small)-1].w
	}
	if t.more == nil {
		t.more = make(map[ownKey]*ownWrite)
	}
	w := new(ownWrite)
	t.more[k] = w
	return w
}

// remove forgets k.
func (t *ownTable) remove(k ownKey) {
	for i := range t.small {
		if e := &t.small[i]; e.k.name == k.name && e.k.kind == k.kind && e.k.namespace == k.namespace {
			last := len(t.small) - 1
			t.small[i] = t.small[last]
			t.small[last] = ownEntry{} // drop its strings
			t.small = t.small[:last]
			return
		}
	}
	delete(t.more, k)
}

// len returns how many keys t holds.
func (t *ownTable) len() int { return len(t.small) + len(t.more) }
