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
