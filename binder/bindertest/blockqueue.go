package bindertest

// blockLen is the number of items in one block of a blockQueue: 256
// deliveries are 32 KiB.
const blockLen = 256

// maxSpareBlocks bounds the drained blocks a blockQueue keeps for reuse:
// a burst (a seed of a million objects) must not pin its queue for good.
// 64 blocks of deliveries hold those of a seed of 10,000 objects (what
// simulate seeds at a time) and then some, 2 MiB.
const maxSpareBlocks = 64

// blockQueue is a FIFO that grows a block of blockLen items at a time and
// reuses the blocks it has drained, instead of growing one slice by
// doubling. The handler queue needs it when delivery lags the writes, as it
// does with Config.AsyncEvents under load: in a simulation of a million
// pairs the queue grew by append to tens of thousands of deliveries
// again and again, and append's copies allocated 901 MB, 15 % of all the
// run allocated (and more for the collector to go through).
// k8s.io/utils/buffer's Ring grows the way append does (a new array of
// twice the size, and a copy) and hands out one item at a time; the
// handler queue takes all that is queued at once and runs it without the
// lock that writers take to queue more.
//
// The zero value is an empty queue. It is not safe for concurrent use.
type blockQueue[T any] struct {
	// blocks hold the items in order; every block but the last is full,
	// and none is empty.
	blocks [][]T
	// spare are drained blocks, empty, for push to reuse.
	spare [][]T
	// list is a taken list of blocks, emptied, for push to reuse.
	list [][]T
}

// push appends v.
func (q *blockQueue[T]) push(v T) {
	if q.blocks == nil {
		q.blocks, q.list = q.list, nil
	}
	if len(q.blocks) == 0 || len(q.blocks[len(q.blocks)-1]) == blockLen {
		q.blocks = append(q.blocks, q.newBlock())
	}
	last := &q.blocks[len(q.blocks)-1]
	*last = append(*last, v)
}

// newBlock returns a spare block, or a new one.
func (q *blockQueue[T]) newBlock() []T {
	if n := len(q.spare); n > 0 {
		b := q.spare[n-1]
		q.spare[n-1] = nil
		q.spare = q.spare[:n-1]
		return b
	}
	return make([]T, 0, blockLen)
}

// empty reports whether no item is queued.
func (q *blockQueue[T]) empty() bool { return len(q.blocks) == 0 }

// take removes every item from the queue and returns their blocks, in
// order. The caller hands them back to recycle when done with them.
func (q *blockQueue[T]) take() [][]T {
	blocks := q.blocks
	q.blocks = nil
	return blocks
}

// recycle keeps taken blocks for reuse, their items zeroed so that they
// hold no references, up to maxSpareBlocks; the rest are left to the
// collector.
func (q *blockQueue[T]) recycle(blocks [][]T) {
	for i, b := range blocks {
		blocks[i] = nil
		if len(q.spare) == maxSpareBlocks {
			continue
		}
		clear(b)
		q.spare = append(q.spare, b[:0])
	}
	q.list = blocks[:0]
}
