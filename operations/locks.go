package operations

import (
	"sync"

	"github.com/volbind/volbind/internal/shard"
)

// locksShards is the number of independently locked registries of a Locks.
const locksShards = 64

// shrinkAbove is the size a registry map must have reached before it is
// replaced by a fresh one when it empties, so that a burst of keys does not
// pin its memory for the life of the process (Go maps never shrink).
const shrinkAbove = 256

// Locks is a set of mutexes, one per string key, such as the per-volume
// mutex that serialises a volume's SetUp and TearDown. The zero value is
// ready to use; a Locks must not be copied after first use.
//
// Every key has its own mutex: two different keys never wait for each
// other. (Keys share registries only for the few nanoseconds it takes to
// look a key up; a key is never held through a shared slot, unlike
// k8s.io/utils/keymutex's hashed mutexes.) A key takes memory only while it
// is held or waited for: the last Unlock removes it. Waiters of one key are
// served first come, first served (by the Go runtime's channel queue), so
// none starves.
type Locks struct {
	hasher shard.Hasher
	shards [locksShards]shard.Padded[locksShard]
}

// locksShard is one independently locked registry of held keys.
type locksShard struct {
	// mu guards keys and peak.
	mu sync.Mutex
	// keys holds every held key. The value is nil while nobody waits for
	// the key; waiters share a *keyWaiters.
	keys map[string]*keyWaiters
	// peak is the largest len(keys) since keys was made.
	peak int
}

// keyWaiters queues the goroutines waiting for one held key.
type keyWaiters struct {
	// n is the number of goroutines waiting; guarded by the shard's mu.
	n int
	// handoff passes ownership of the key from Unlock to one waiter. Its
	// buffer of one means Unlock never blocks: only the holder sends, and
	// the next holder is the one that receives.
	handoff chan struct{}
}

func (l *Locks) shard(key string) *locksShard {
	return &l.shards[l.hasher.Index(key, locksShards)].Value
}

// Lock locks key, blocking until no other goroutine holds it. Keys are
// independent: holding one never delays Lock of another.
func (l *Locks) Lock(key string) {
	s := l.shard(key)
	s.mu.Lock()
	w, held := s.keys[key]
	if !held {
		s.addLocked(key)
		s.mu.Unlock()
		return
	}
	if w == nil {
		w = &keyWaiters{handoff: make(chan struct{}, 1)}
		s.keys[key] = w
	}
	w.n++
	s.mu.Unlock()
	<-w.handoff
}

// TryLock locks key and returns true if nobody holds it, or returns false
// at once. It never blocks.
func (l *Locks) TryLock(key string) bool {
	s := l.shard(key)
	s.mu.Lock()
	_, held := s.keys[key]
	if !held {
		s.addLocked(key)
	}
	s.mu.Unlock()
	return !held
}

// addLocked marks key as held with no waiters.
func (s *locksShard) addLocked(key string) {
	if s.keys == nil {
		s.keys = make(map[string]*keyWaiters)
	}
	s.keys[key] = nil
	if len(s.keys) > s.peak {
		s.peak = len(s.keys)
	}
}

// Unlock unlocks key, handing it to the longest waiting Lock if any;
// otherwise the key's memory is released. It does not block. As with
// sync.Mutex, unlocking a key that is not locked is a programming error:
// Unlock panics.
func (l *Locks) Unlock(key string) {
	s := l.shard(key)
	s.mu.Lock()
	w, held := s.keys[key]
	switch {
	case !held:
		s.mu.Unlock()
		panic("operations: Unlock of unlocked key " + key)
	case w == nil || w.n == 0:
		delete(s.keys, key)
		if len(s.keys) == 0 && s.peak > shrinkAbove {
			s.keys, s.peak = nil, 0
		}
		s.mu.Unlock()
	default:
		w.n--
		s.mu.Unlock()
		w.handoff <- struct{}{}
	}
}

// len returns the number of keys held or waited for. Tests use it to check
// that released keys take no memory.
func (l *Locks) len() int {
	n := 0
	for i := range l.shards {
		s := &l.shards[i].Value
		s.mu.Lock()
		n += len(s.keys)
		s.mu.Unlock()
	}
	return n
}

// waiters returns the number of goroutines blocked in Lock(key). Tests use
// it to see that a Lock is really waiting.
func (l *Locks) waiters(key string) int {
	s := l.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.keys[key]; w != nil {
		return w.n
	}
	return 0
}
