package shard

import (
	"fmt"
	"testing"
	"unsafe"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPaddedKeepsShardsApart(t *testing.T) {
	type lockAndMap struct {
		mu [24]byte
		m  map[string]int
	}
	var shards [2]Padded[lockAndMap]
	d := uintptr(unsafe.Pointer(&shards[1].Value)) - uintptr(unsafe.Pointer(&shards[0].Value))
	if d < Pad {
		t.Errorf("shards' values are %d bytes apart, want at least %d", d, Pad)
	}
}

func TestHasherIndex(t *testing.T) {
	h := NewHasher()
	const n = 64
	counts := make([]int, n)
	for i := range 64_000 {
		k := fmt.Sprintf("ns/claim-%d", i)
		idx := h.Index(k, n)
		if idx < 0 || idx >= n {
			t.Fatalf("Index(%q, %d) = %d, out of range", k, n, idx)
		}
		if again := h.Index(k, n); again != idx {
			t.Fatalf("Index(%q) = %d then %d", k, idx, again)
		}
		counts[idx]++
	}
	// 1000 per shard expected; a shard off by more than 20% means a
	// broken spread, not chance (sd ≈ 31).
	for i, c := range counts {
		if c < 800 || c > 1200 {
			t.Errorf("shard %d holds %d of 64000 keys, want about 1000", i, c)
		}
	}
}

func BenchmarkHasherSum(b *testing.B) {
	h := NewHasher()
	for _, k := range []string{"pv-000123", "default/pvc-6f1c2a4e-0d3b-4a8e-9c55-000000000123"} {
		b.Run(fmt.Sprintf("len=%d", len(k)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				h.Sum(k)
			}
		})
	}
}
