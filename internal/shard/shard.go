package shard

import "hash/maphash"

// Pad is the padding after a shard's value: two cache lines, because
// adjacent-line prefetch pairs lines, so that the locks of two shards never
// share a line or a prefetched pair.
const Pad = 128

// Padded is one shard of an array of shards: Value followed by Pad bytes,
// so that the starts of two shards' values (where their locks go) are at
// least Pad bytes apart.
type Padded[T any] struct {
	Value T
	_     [Pad]byte
}

// Hasher hashes strings with a seed of its own. The zero value hashes with
// a seed chosen once per process, so that structures whose zero value is
// usable (operations.Locks) can embed one. It is safe for concurrent use.
type Hasher struct {
	seed maphash.Seed
}

// NewHasher returns a Hasher with a random seed.
func NewHasher() Hasher { return Hasher{seed: maphash.MakeSeed()} }

// Sum returns the 64-bit hash of s.
func (h Hasher) Sum(s string) uint64 {
	if h.seed == (maphash.Seed{}) {
		return maphash.String(processSeed, s)
	}
	return maphash.String(h.seed, s)
}

// processSeed is the zero Hasher's seed. It is set once, when the program
// starts, and never written again.
var processSeed = maphash.MakeSeed()

// Index returns the shard of s among n shards; n must be a power of two.
func (h Hasher) Index(s string, n int) int { return int(h.Sum(s) & uint64(n-1)) }
