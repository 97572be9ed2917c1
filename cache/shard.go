package cache

import (
	"hash/maphash"
	"sync"
)

// numShards is the number of independently locked maps a cache spreads its
// keys over, so that readers on different cores rarely touch the same lock.
// It is a power of two.
const numShards = 64

// shardPad fills a shard to two cache lines (adjacent-line prefetch pairs
// lines), so that two shards' locks never share a line.
const shardPad = 128

// shardIndex returns the shard of s.
func shardIndex(seed maphash.Seed, s string) int {
	return int(maphash.String(seed, s) & (numShards - 1))
}

// shard is one lock-protected map of a sharded cache.
type shard[K comparable, V any] struct {
	// mu guards m. Readers take it shared; only inserting and deleting keys
	// take it exclusively.
	mu sync.RWMutex
	m  map[K]V
	_  [shardPad - 32]byte
}

func (s *shard[K, V]) load(k K) (V, bool) {
	s.mu.RLock()
	v, ok := s.m[k]
	s.mu.RUnlock()
	return v, ok
}

func (s *shard[K, V]) store(k K, v V) {
	s.mu.Lock()
	if s.m == nil {
		s.m = make(map[K]V)
	}
	s.m[k] = v
	s.mu.Unlock()
}

func (s *shard[K, V]) delete(k K) {
	s.mu.Lock()
	delete(s.m, k)
	s.mu.Unlock()
}

func (s *shard[K, V]) len() int {
	s.mu.RLock()
	n := len(s.m)
	s.mu.RUnlock()
	return n
}
