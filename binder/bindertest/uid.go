package bindertest

import (
	"encoding/binary"
	"encoding/hex"

	"k8s.io/apimachinery/pkg/types"
)

// uidBlocks hands out the deterministic UIDs of created and seeded
// objects, UUID-shaped: sequence number n is
// "%08x-0000-4000-8000-%012x" of n's top 16 bits and its low 48 bits. The
// UIDs of uidBlock consecutive numbers are formatted into one string and
// each UID is a 36-byte slice of it. One fmt.Sprintf per UID kept a string
// of the 48-byte size class per object and took 310–410 ns and 56 bytes in
// 1–2 allocations; a UID of a block takes 60–75 ns and 36 bytes
// (BenchmarkUID, 2 cores). A block stays in memory while any of its UIDs
// does. The zero value is ready; the Server uses it under its lock.
type uidBlocks struct {
	block string // the UIDs of base … base+uidBlock-1
	base  uint64
}

const (
	uidBlock = 64
	uidLen   = 36
)

// uid returns the UID of sequence number n.
func (u *uidBlocks) uid(n uint64) types.UID {
	if u.block == "" || n < u.base || n-u.base >= uidBlock {
		u.base = n - n%uidBlock
		b := make([]byte, 0, uidBlock*uidLen)
		for i := range uint64(uidBlock) {
			b = appendUID(b, u.base+i)
		}
		u.block = string(b)
	}
	off := (n - u.base) * uidLen
	return types.UID(u.block[off : off+uidLen])
}

// appendUID appends the UID of sequence number n to b: its top 16 bits
// as 8 hexadecimal digits, then its low 48 bits as 12.
func appendUID(b []byte, n uint64) []byte {
	var be [8]byte
	binary.BigEndian.PutUint64(be[:], n)
	b = hex.AppendEncode(b, []byte{0, 0, be[0], be[1]})
	b = append(b, "-0000-4000-8000-"...)
	return hex.AppendEncode(b, be[2:])
}
