package jitter

import (
	"container/heap"
	"context"
	"math/rand/v2"

	"k8s.io/utils/clock"
)

// Run enqueues the registered keys, each once per period at its offset,
// until ctx is done. It blocks, runs no other goroutine and returns when
// ctx is done. Keys whose offset in the current period had passed when
// the Resync was made (for a later Run: when that Run starts) are first
// enqueued in the next period; a first Run that starts late (a fake clock
// stepped before its goroutine ran) enqueues at once what became due
// since the Resync was made, as if it had started then. If Run is woken late
// (a slow machine, a fake clock stepped far), it enqueues the keys it
// missed at once, but each key at most once per missed period's worth of
// slots. A second Run waits until the first returns.
//
// Run calls add, never with the Resync's lock held; add must not call
// Remove, which waits for Run's batch to be handed over.
func (r *Resync[T]) Run(ctx context.Context) {
	next := r.begin(r.grid, r.clock) // the next slot to enqueue
	defer r.end()

	var (
		timer   clock.Timer
		batch   []T
		pending dueHeap[T] // jittered enqueues not yet due
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	select {
	case <-r.kick: // keys added before Run are seen by the first collect
	default:
	}
	for {
		now := r.clock.Now().UnixNano()
		batch = r.collect(batch[:0], &next, now, &pending)
		if len(batch) > 0 {
			r.enqueue(batch)
			clear(batch)
		}
		wake := r.nextWake(next, &pending)
		r.wake.Store(wake)
		if !armTimer(r.clock, &timer, wake) {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
			// A key was added: it may sit in a slot before wake.
			if !timer.Stop() {
				<-timer.C()
			}
		case <-timer.C():
		}
	}
}

// collect appends to batch the keys due at now: those of slots next to
// the one containing now, and pending jittered ones; it advances next. With
// jitter it moves the slots' keys to pending instead, due later. It takes
// enqMu for the caller's enqueue when it returns a non-empty batch.
func (r *Resync[T]) collect(batch []T, next *int64, now int64, pending *dueHeap[T]) []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur := r.absSlot(now); *next <= cur {
		if cur-*next >= int64(r.slots) {
			// Late by more than a period: enqueue each key once.
			*next = cur - int64(r.slots) + 1
		}
		for ; *next <= cur; *next++ {
			keys := r.slot[r.slotIndex(*next)]
			if r.jitter == 0 {
				batch = append(batch, keys...)
				continue
			}
			at := r.slotTime(*next)
			for _, k := range keys {
				heap.Push(pending, due[T]{at: at + int64(uniform(r.rand)*r.jitter*float64(r.period)), key: k})
			}
		}
	}
	for pending.Len() > 0 && (*pending)[0].at <= now {
		d := heap.Pop(pending).(due[T])
		if _, ok := r.keys[d.key]; ok {
			batch = append(batch, d.key)
		}
	}
	if len(batch) > 0 {
		// Keep Remove of a key in batch from returning before the
		// batch is enqueued.
		r.enqMu.Lock()
	}
	return batch
}

// enqueue hands batch to add and releases enqMu, taken by collect.
func (r *Resync[T]) enqueue(batch []T) {
	defer r.enqMu.Unlock()
	for _, k := range batch {
		r.add(k)
	}
}

// nextWake returns when Run must next wake: the start of the first
// non-empty slot from next on (at most a period ahead) or the first
// pending jittered enqueue, whichever is first.
func (r *Resync[T]) nextWake(next int64, pending *dueHeap[T]) int64 {
	r.mu.Lock()
	a := next
	if len(r.keys) > 0 {
		for end := next + int64(r.slots); a < end && len(r.slot[r.slotIndex(a)]) == 0; a++ {
		}
	} else {
		a = next + int64(r.slots)
	}
	r.mu.Unlock()
	wake := r.slotTime(a)
	if pending.Len() > 0 && (*pending)[0].at < wake {
		wake = (*pending)[0].at
	}
	return wake
}

// uniform draws a jitter factor in [0, 1) from r, or from the math/rand/v2
// top-level functions when r is nil.
func uniform(r *rand.Rand) float64 {
	if r != nil {
		return r.Float64()
	}
	return rand.Float64()
}

// due is a jittered enqueue of key at time at (ns since the epoch).
type due[T any] struct {
	at  int64
	key T
}

// dueHeap is a min-heap of jittered enqueues by time.
type dueHeap[T any] []due[T]

func (h dueHeap[T]) Len() int           { return len(h) }
func (h dueHeap[T]) Less(i, j int) bool { return h[i].at < h[j].at }
func (h dueHeap[T]) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap[T]) Push(x any)        { *h = append(*h, x.(due[T])) }
func (h *dueHeap[T]) Pop() any {
	old := *h
	x := old[len(old)-1]
	var zero due[T]
	old[len(old)-1] = zero
	*h = old[:len(old)-1]
	return x
}
