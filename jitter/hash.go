package jitter

// StringHash returns a 64-bit hash of s for NewResync: FNV-1a followed by
// a 64-bit finaliser so that similar strings spread over all bits. Unlike
// hash/maphash it is not seeded: it is the same in every process, so a key
// keeps its resync offset across restarts.
func StringHash(s string) uint64 {
	const (
		offset64 = 14695981039346656037
		prime64  = 1099511628211
	)
	h := uint64(offset64)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime64
	}
	return mix(h)
}

// mix is the SplitMix64 finaliser: a bijection that makes every output bit
// depend on every input bit.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}
