package cache

import "sync"

// numShards is the number of independently locked maps a cache spreads its
// keys over, so that readers on different cores rarely touch the same lock.
// It is a power of two.
const numShards = 64

// lockedMap is one lock-protected map of a sharded cache; the cache keeps
// them in shard.Padded so that two maps' locks never share a cache line.
type lockedMap[K comparable, V any] struct {
	// mu guards m. Readers take it shared; only inserting and deleting keys
	// take it exclusively.
	mu sync.RWMutex
	m  map[K]V
}
