package binder

import (
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// fifo is the order of a Binder's keyQueue: client-go's default queue (a
// slice in FIFO order), except that it lets go of its array once it has
// drained after a burst, and compacts it when half of it is taken. The
// default keeps the array of its largest backlog for good: when Run
// queues every object of a cluster at once, that is 16 bytes per object
// and up to twice that after the appends that grew it (178 bytes per pair
// at 100,000 pairs in BenchmarkMemoryPerPair). Not safe for concurrent
// use: the keyQueue calls it under its lock.
type fifo[T comparable] struct {
	items []T
	// head is the index of the next item to pop.
	head int
}

var _ workqueue.Queue[string] = (*fifo[string])(nil)

// fifoKeepCap is the largest array a drained fifo keeps for reuse.
const fifoKeepCap = 1024

// Touch does nothing: the order does not change when an item is added
// again.
func (q *fifo[T]) Touch(T) {}

// Push appends item.
func (q *fifo[T]) Push(item T) { q.items = append(q.items, item) }

// Len returns the number of items.
func (q *fifo[T]) Len() int { return len(q.items) - q.head }

// Pop removes and returns the first item; the queue must not be empty.
func (q *fifo[T]) Pop() T {
	item := q.items[q.head]
	var zero T
	q.items[q.head] = zero // the array must not keep what was popped
	q.head++
	switch {
	case q.head == len(q.items):
		q.head = 0
		if cap(q.items) > fifoKeepCap {
			q.items = nil
		} else {
			q.items = q.items[:0]
		}
	case q.head > fifoKeepCap && 2*q.head >= len(q.items):
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items = q.items[:n]
		q.head = 0
	}
	return item
}

// newWorkqueue returns the rate-limited workqueue of one kind of object,
// as workqueue.NewTypedRateLimitingQueueWithConfig builds it but on a
// keyQueue, whose order is a fifo, instead of workqueue.Typed. size is
// how many keys it is about to be given at once, a hint (see runSizes).
// It also returns the keyQueue, which the tracker asks what is queued.
func newWorkqueue(name string, rl workqueue.TypedRateLimiter[string], clk clock.WithTicker, metrics workqueue.MetricsProvider, size int) (workqueue.TypedRateLimitingInterface[string], *keyQueue) {
	if metrics == nil {
		name = "" // an unnamed queue registers no metrics
	}
	keys := newKeyQueue(name, clk, metrics, size)
	delaying := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{
		Name: name, MetricsProvider: metrics, Clock: clk, Queue: keys,
	})
	return workqueue.NewTypedRateLimitingQueueWithConfig(rl, workqueue.TypedRateLimitingQueueConfig[string]{
		Name: name, MetricsProvider: metrics, Clock: clk, DelayingQueue: delaying,
	}), keys
}
