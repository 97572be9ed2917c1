package jitter

import (
	"container/heap"
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"k8s.io/utils/clock"
)

// Sweep hands every key of a partitioned set to its add function once per
// period without holding the keys: the period is cut into as many equal
// slots as the set has parts, and at the start of slot p Run asks the
// caller for part p's keys and adds each. It is Resync for a caller that
// keeps its keys in a sharded store already (the binder's caches): it costs
// no memory per key and no bookkeeping when keys come and go, a key is
// swept exactly when the store holds it, and a key's offset is its part's.
// The spread over the period is as flat as the caller's partition: a hash
// of the key spreads n keys over the parts with a relative deviation of
// about √(parts/n) (1 % for 64 parts and 640,000 keys), but the keys of a
// part arrive together, a part's worth at a time, where Resync spreads
// them over its slots one by one.
//
// All methods are safe for concurrent use.
type Sweep[T any] struct {
	keys func(part int, dst []T) []T
	add  func(T)
	grid
	jitter float64
	clock  clock.WithTicker
	rand   *rand.Rand

	runs
}

// NewSweep returns a Sweep over parts parts that, once per cfg.Period,
// calls keys(p, dst) at the start of part p's slot and passes each key it
// returns to add. keys appends part p's keys to dst (a buffer Run reuses)
// and returns it; it and add are called only from Run's goroutine, and
// never with a lock of the Sweep held. cfg is Resync's, except that the
// slots are the parts: cfg.Slots must be zero or parts. With cfg.Jitter,
// each part's sweep is delayed by its own random time in
// [0, Jitter·Period), drawn every period, and asks for the keys when it
// comes. NewSweep starts no goroutine: call Run. It returns an error
// wrapping ErrInvalidConfig if keys or add is nil, parts is not positive
// or larger than the period in nanoseconds, or cfg is out of range.
func NewSweep[T any](parts int, keys func(part int, dst []T) []T, add func(T), cfg ResyncConfig) (*Sweep[T], error) {
	switch {
	case keys == nil:
		return nil, fmt.Errorf("%w: nil keys function", ErrInvalidConfig)
	case add == nil:
		return nil, fmt.Errorf("%w: nil add function", ErrInvalidConfig)
	case cfg.Period <= 0:
		return nil, fmt.Errorf("%w: period %v is not positive", ErrInvalidConfig, cfg.Period)
	case parts <= 0 || int64(parts) > int64(cfg.Period):
		return nil, fmt.Errorf("%w: %d parts for a period of %v", ErrInvalidConfig, parts, cfg.Period)
	case cfg.Slots != 0 && cfg.Slots != parts:
		return nil, fmt.Errorf("%w: %d slots for %d parts", ErrInvalidConfig, cfg.Slots, parts)
	case !(cfg.Jitter >= 0 && cfg.Jitter < 1):
		return nil, fmt.Errorf("%w: jitter %v is not in [0, 1)", ErrInvalidConfig, cfg.Jitter)
	}
	s := &Sweep[T]{
		keys:   keys,
		add:    add,
		grid:   grid{period: int64(cfg.Period), slots: parts},
		jitter: cfg.Jitter,
		clock:  cfg.Clock,
		rand:   cfg.Rand,
	}
	if s.clock == nil {
		s.clock = clock.RealClock{}
	}
	s.init(s.clock.Now().UnixNano())
	return s, nil
}

// Offset returns when within each period part is swept (before any
// jitter), counted from the period's start; periods start at multiples of
// Period since the Unix epoch. It returns -1 for a part out of range.
func (s *Sweep[T]) Offset(part int) time.Duration {
	if part < 0 || part >= s.slots {
		return -1
	}
	return time.Duration(s.slotStart(part))
}

// Due reports whether Run has a sweep planned at or before now that it has
// not made yet, as Resync.Due does: true from NewSweep until the first Run
// has planned, false once a Run has returned.
func (s *Sweep[T]) Due(now time.Time) bool {
	return s.due(now)
}

// Run sweeps each part once per period at its offset until ctx is done.
// It blocks, runs no other goroutine and returns when ctx is done. It
// catches up as Resync.Run does: a first Run that starts late sweeps at
// once what became due since NewSweep, and a Run woken late sweeps the
// parts it missed at once, each at most once. A second Run waits until the
// first returns.
func (s *Sweep[T]) Run(ctx context.Context) {
	next := s.begin(s.grid, s.clock) // the next slot to sweep
	defer s.end()

	var (
		timer   clock.Timer
		parts   []int
		buf     []T
		pending dueHeap[int] // jittered sweeps not yet due
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		now := s.clock.Now().UnixNano()
		parts = s.collect(parts[:0], &next, now, &pending)
		for _, p := range parts {
			buf = s.keys(p, buf[:0])
			for _, k := range buf {
				s.add(k)
			}
			clear(buf) // keep no key alive until the next sweep
		}
		wake := s.slotTime(next)
		if pending.Len() > 0 && pending[0].at < wake {
			wake = pending[0].at
		}
		s.wake.Store(wake)
		if !armTimer(s.clock, &timer, wake) {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-timer.C():
		}
	}
}

// collect appends to parts the parts due at now: those of the slots from
// next to the one containing now (each part once when Run is late by more
// than a period), and pending jittered ones; it advances next. With jitter
// it moves the slots' parts to pending instead, due later.
func (s *Sweep[T]) collect(parts []int, next *int64, now int64, pending *dueHeap[int]) []int {
	if cur := s.absSlot(now); *next <= cur {
		if cur-*next >= int64(s.slots) {
			*next = cur - int64(s.slots) + 1
		}
		for ; *next <= cur; *next++ {
			p := s.slotIndex(*next)
			if s.jitter == 0 {
				parts = append(parts, p)
				continue
			}
			heap.Push(pending, due[int]{at: s.slotTime(*next) + int64(uniform(s.rand)*s.jitter*float64(s.period)), key: p})
		}
	}
	for pending.Len() > 0 && (*pending)[0].at <= now {
		parts = append(parts, heap.Pop(pending).(due[int]).key)
	}
	return parts
}
