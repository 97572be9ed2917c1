package bindertest

import (
	"fmt"
	"testing"
)

// TestUIDBlocks checks the UIDs against the format they are documented to
// have, in order, out of order and across blocks, and that distinct
// numbers get distinct UIDs.
func TestUIDBlocks(t *testing.T) {
	var u uidBlocks
	seen := map[string]uint64{}
	check := func(n uint64) {
		t.Helper()
		want := fmt.Sprintf("%08x-0000-4000-8000-%012x", uint32(n>>48), n&(1<<48-1))
		got := string(u.uid(n))
		if got != want {
			t.Fatalf("uid(%d) = %q, want %q", n, got, want)
		}
		if m, ok := seen[got]; ok && m != n {
			t.Fatalf("uid(%d) = uid(%d)", n, m)
		}
		seen[got] = n
	}
	for n := uint64(1); n <= 300; n++ {
		check(n)
	}
	for _, n := range []uint64{5, 1 << 20, 63, 64, 65, 1<<48 - 1, 1 << 48, 1<<64 - 1, 7} {
		check(n)
	}
}

// BenchmarkUID measures a UID of uidBlocks against one fmt.Sprintf of the
// same format, which the Server used before.
func BenchmarkUID(b *testing.B) {
	b.Run("uid=blocks", func(b *testing.B) {
		var u uidBlocks
		b.ReportAllocs()
		n := uint64(0)
		for b.Loop() {
			n++
			_ = u.uid(n)
		}
	})
	b.Run("uid=sprintf", func(b *testing.B) {
		b.ReportAllocs()
		n := uint64(0)
		for b.Loop() {
			n++
			_ = fmt.Sprintf("%08x-0000-4000-8000-%012x", uint32(n>>48), n&(1<<48-1))
		}
	})
}
