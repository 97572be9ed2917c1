package jitter

import (
	"errors"
	"fmt"
	"maps"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// DefaultSlots is the default number of slots a Resync cuts its period into.
const DefaultSlots = 1000

// ErrInvalidConfig is wrapped by the errors of NewResync for bad arguments.
var ErrInvalidConfig = errors.New("jitter: invalid resync config")

// ResyncConfig configures a Resync. Period is required; the zero value of
// every other field is valid.
type ResyncConfig struct {
	// Period is how often every key is enqueued. Required, positive.
	Period time.Duration
	// Jitter delays each enqueue by a random extra time in
	// [0, Jitter·Period), to keep replicas that hold the same keys out of
	// step. It must be in [0, 1); keep it small, as it blurs the flat
	// spread by up to Jitter·Period. Default: 0 (each key is enqueued
	// exactly at its offset).
	Jitter float64
	// Clock times the enqueues. Default: clock.RealClock{}.
	Clock clock.WithTicker
	// Rand draws the jitter. It is used only by Run's goroutine. Default:
	// the math/rand/v2 top-level functions.
	Rand *rand.Rand
	// Slots is the number of equal slots the period is cut into; the keys
	// of a slot are enqueued together at its start. More slots give a finer
	// but, for few keys per slot, less even spread; see the package
	// documentation. Default: DefaultSlots. It is lowered to the number of
	// nanoseconds in Period if that is smaller.
	Slots int
}

// Resync hands every registered key to its add function (a workqueue's
// Add, or a work tracker in front of one) once per period, at a stable offset within the period derived from the key's
// hash and balanced so that keys are spread flat over the period (see the
// package documentation). Keys may be added and removed at any time,
// while Run runs or not. All methods are safe for concurrent use.
type Resync[T comparable] struct {
	add  func(T)
	hash func(T) uint64
	grid
	jitter float64
	clock  clock.WithTicker
	rand   *rand.Rand

	// kick wakes Run when a key is added, so that it can wake earlier
	// than it planned.
	kick chan struct{}
	runs
	// enqMu is held by Run while it hands a batch of keys to the queue.
	// Remove takes it after removing its key, so that once Remove
	// returns the key is never enqueued again.
	enqMu sync.Mutex

	// mu guards keys and slot.
	mu sync.Mutex
	// keys maps each registered key to its place in slot.
	keys map[T]place
	// slot[i] lists the keys enqueued at the start of slot i.
	slot [][]T
}

// place is where a key sits: slot[s][i].
type place struct {
	s, i int32
}

// NewResync returns a Resync that passes the keys added to it to add,
// with offsets derived from hash (StringHash for string keys). add is
// typically a workqueue's Add; it is called only from Run's goroutine. It
// starts no goroutine: call Run. It returns an error wrapping
// ErrInvalidConfig if add or hash is nil or cfg is out of range.
func NewResync[T comparable](add func(T), hash func(T) uint64, cfg ResyncConfig) (*Resync[T], error) {
	switch {
	case add == nil:
		return nil, fmt.Errorf("%w: nil add function", ErrInvalidConfig)
	case hash == nil:
		return nil, fmt.Errorf("%w: nil hash function", ErrInvalidConfig)
	case cfg.Period <= 0:
		return nil, fmt.Errorf("%w: period %v is not positive", ErrInvalidConfig, cfg.Period)
	case !(cfg.Jitter >= 0 && cfg.Jitter < 1):
		return nil, fmt.Errorf("%w: jitter %v is not in [0, 1)", ErrInvalidConfig, cfg.Jitter)
	case cfg.Slots < 0:
		return nil, fmt.Errorf("%w: %d slots", ErrInvalidConfig, cfg.Slots)
	}
	r := &Resync[T]{
		add:    add,
		hash:   hash,
		grid:   grid{period: int64(cfg.Period), slots: cfg.Slots},
		jitter: cfg.Jitter,
		clock:  cfg.Clock,
		rand:   cfg.Rand,
		kick:   make(chan struct{}, 1),
		keys:   make(map[T]place),
	}
	if r.slots == 0 {
		r.slots = DefaultSlots
	}
	if int64(r.slots) > r.period {
		r.slots = int(r.period)
	}
	if r.clock == nil {
		r.clock = clock.RealClock{}
	}
	r.slot = make([][]T, r.slots)
	r.init(r.clock.Now().UnixNano())
	return r, nil
}

// Add registers key: from now on Run enqueues it once per period at its
// offset. Adding a registered key does nothing; its offset is kept. It
// does not block on Run.
func (r *Resync[T]) Add(key T) {
	h := r.hash(key)
	r.mu.Lock()
	if _, ok := r.keys[key]; ok {
		r.mu.Unlock()
		return
	}
	n := len(r.keys)
	limit := n/r.slots + 1 // ⌈(n+1)/slots⌉
	s, _ := bits.Mul64(h, uint64(r.slots))
	i := int(s)
	for len(r.slot[i]) >= limit {
		// There is always a slot below the limit: otherwise the slots
		// would hold at least slots·limit > n keys.
		if i++; i == r.slots {
			i = 0
		}
	}
	r.keys[key] = place{s: int32(i), i: int32(len(r.slot[i]))}
	r.slot[i] = append(r.slot[i], key)
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Grow makes room for n more keys, as a map's size hint does, so that a
// bulk of Adds (a controller registering every object it knows when it
// starts) does not regrow the registry one key at a time. It changes no
// key's offset and does nothing when n is smaller than the keys
// registered already.
func (r *Resync[T]) Grow(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n < len(r.keys) || n <= 0 {
		return
	}
	grown := make(map[T]place, len(r.keys)+n)
	maps.Copy(grown, r.keys)
	r.keys = grown
	if n < r.slots {
		return // most slots get no key or one: growing each would cost more
	}
	// Add spreads keys evenly: no slot holds more than ⌈keys/slots⌉.
	per := (len(r.keys)+n)/r.slots + 1
	for i, keys := range r.slot {
		r.slot[i] = slices.Grow(keys, per-len(keys))
	}
}

// Remove unregisters key. Once Remove returns, Run does not enqueue key
// again (unless it is added again). Removing an unknown key does nothing.
// Remove may wait for Run to finish handing a batch of keys to the queue.
func (r *Resync[T]) Remove(key T) {
	r.mu.Lock()
	p, ok := r.keys[key]
	if !ok {
		r.mu.Unlock()
		return
	}
	delete(r.keys, key)
	keys := r.slot[p.s]
	last := len(keys) - 1
	if int(p.i) != last {
		moved := keys[last]
		keys[p.i] = moved
		r.keys[moved] = p
	}
	var zero T
	keys[last] = zero
	r.slot[p.s] = keys[:last]
	r.mu.Unlock()
	// Wait for a batch that Run may have taken key into.
	r.enqMu.Lock()
	r.enqMu.Unlock() //nolint:staticcheck // an empty critical section is the barrier
}

// Due reports whether Run has an enqueue planned at or before now that it
// has not made yet: its timer is due (a fake clock was stepped) and Run
// has not woken up yet. From NewResync until the first Run has planned,
// it is true: that Run enqueues what became due since the Resync was made
// (see Run), so a caller waiting for Due to turn false (a quiescence wait
// on a fake clock) waits for the Run goroutine to have started. It is
// false once a Run has returned. A key added to a slot before the planned
// one is seen once Run has been kicked.
func (r *Resync[T]) Due(now time.Time) bool {
	return r.due(now)
}

// Len returns the number of registered keys.
func (r *Resync[T]) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.keys)
}

// Offset returns when within each period key is enqueued (before any
// jitter), counted from the period's start; periods start at multiples of
// Period since the Unix epoch. It returns -1 if key is not registered.
func (r *Resync[T]) Offset(key T) time.Duration {
	r.mu.Lock()
	p, ok := r.keys[key]
	r.mu.Unlock()
	if !ok {
		return -1
	}
	return time.Duration(r.slotStart(int(p.s)))
}
