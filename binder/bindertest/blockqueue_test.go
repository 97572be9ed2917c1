package bindertest

import (
	"slices"
	"testing"
)

// drainAll takes everything from q, in order, and recycles the blocks.
func drainAll(q *blockQueue[*int]) []int {
	var got []int
	blocks := q.take()
	for _, b := range blocks {
		for _, p := range b {
			got = append(got, *p)
		}
	}
	q.recycle(blocks)
	return got
}

func TestBlockQueueOrder(t *testing.T) {
	var q blockQueue[*int]
	next := 0
	for _, n := range []int{0, 1, blockLen - 1, blockLen, blockLen + 1, 5*blockLen + 3, 2} {
		var want []int
		for range n {
			v := next
			next++
			q.push(&v)
			want = append(want, v)
		}
		if q.empty() != (n == 0) {
			t.Fatalf("after %d pushes empty() = %v", n, q.empty())
		}
		if got := drainAll(&q); !slices.Equal(got, want) {
			t.Fatalf("after %d pushes took %v, want %v", n, got, want)
		}
		if !q.empty() {
			t.Fatalf("after %d pushes and a take the queue is not empty", n)
		}
	}
}

// TestBlockQueueRecycles checks what the handler queue relies on: drained
// blocks are reused without allocating, hold no references once drained,
// and a burst leaves at most maxSpareBlocks behind.
func TestBlockQueueRecycles(t *testing.T) {
	var q blockQueue[*int]
	v := 1
	for range (maxSpareBlocks + 10) * blockLen {
		q.push(&v)
	}
	drainAll(&q)
	if len(q.spare) != maxSpareBlocks {
		t.Fatalf("after a burst of %d blocks the queue keeps %d spare blocks, want %d", maxSpareBlocks+10, len(q.spare), maxSpareBlocks)
	}
	for i, b := range q.spare {
		if len(b) != 0 || cap(b) != blockLen {
			t.Fatalf("spare block %d has len %d, cap %d; want 0, %d", i, len(b), cap(b), blockLen)
		}
		if j := slices.IndexFunc(b[:blockLen], func(p *int) bool { return p != nil }); j >= 0 {
			t.Fatalf("spare block %d still references item %d", i, j)
		}
	}
	allocs := testing.AllocsPerRun(100, func() {
		for range 3 * blockLen {
			q.push(&v)
		}
		q.recycle(q.take())
	})
	if allocs != 0 {
		t.Errorf("pushing and draining 3 blocks with spare blocks at hand allocated %.1f times, want 0", allocs)
	}
}
