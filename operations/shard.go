package operations

// spread returns a well-mixed 64-bit value of s from its length and its
// first and last eight bytes, for choosing a shard. It is much cheaper than
// hashing the whole name (operation names end in a UID, so their ends
// differ); if many names collide, they only share a shard's mutex for the
// few nanoseconds of a map lookup, which costs speed, never correctness.
func spread(s string) uint64 {
	n := len(s)
	x := uint64(n)
	if n >= 8 {
		head := s[:8]
		tail := s[n-8:]
		x ^= uint64(head[0]) | uint64(head[1])<<8 | uint64(head[2])<<16 | uint64(head[3])<<24 |
			uint64(head[4])<<32 | uint64(head[5])<<40 | uint64(head[6])<<48 | uint64(head[7])<<56
		x *= 0xbf58476d1ce4e5b9
		x ^= uint64(tail[0]) | uint64(tail[1])<<8 | uint64(tail[2])<<16 | uint64(tail[3])<<24 |
			uint64(tail[4])<<32 | uint64(tail[5])<<40 | uint64(tail[6])<<48 | uint64(tail[7])<<56
	} else {
		for i := 0; i < n; i++ {
			x = x<<8 | uint64(s[i])
		}
	}
	x ^= x >> 31
	x *= 0x94d049bb133111eb
	x ^= x >> 29
	return x
}
