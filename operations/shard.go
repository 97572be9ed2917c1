package operations

import (
	"slices"
	"sync"
)

// mapShard is one independently locked part of a Map: the operations
// started under the names that hash to it, and their backoff.
//
// An operation that finishes does not take its name out of pending: it
// marks itself done, then finished, and a later Run replaces it or sweeps
// it out. So only Run writes the shard, on the caller's CPU, and an
// operation finishing on another CPU writes its own struct. With the
// name taken out by the finishing operation, under the shard's lock, every
// run+finish moved the lock's, the map's and a counter's cache lines
// between the CPUs: a median of 756 ns on a 2-core VM, ~300 ns over a bare
// go statement (see the package's performance notes for the figures
// since).
type mapShard struct {
	// mu guards the fields.
	mu sync.Mutex
	// pending holds the operation last started under each name: running,
	// done or finished; the finished ones until a sweep.
	pending map[string]*operation
	// displaced holds done operations whose name Run started again while
	// their then callback still ran: Wait waits for them too.
	displaced []*operation
	// sweepAt is the size of pending at which Run sweeps the finished
	// operations out of it.
	sweepAt int
	// failed holds the backoff state of names whose last operation
	// failed. Map.nFailed counts the entries of all shards.
	failed map[string]*backoff
}

// The states of an operation, in order.
const (
	// opRunning: op runs; the name is pending.
	opRunning uint32 = iota
	// opDone: op returned and its outcome is recorded; then (if any)
	// runs. The name is no longer pending.
	opDone
	// opFinished: then returned too. Wait no longer waits for it.
	opFinished
)

// minSweep is the smallest size of a shard's pending map at which Run
// sweeps finished operations out of it.
const minSweep = 64

func (s *mapShard) init() {
	s.pending = make(map[string]*operation)
	s.failed = make(map[string]*backoff)
	s.sweepAt = minSweep
}

// startLocked records o as the operation of its name, in place of prev
// (nil, done or finished). Called with mu held.
func (s *mapShard) startLocked(o, prev *operation) {
	if prev != nil && prev.state.Load() != opFinished {
		s.displaced = append(s.displaced, prev)
	}
	s.pending[o.name] = o
	if len(s.pending) >= s.sweepAt {
		s.sweepLocked()
	}
}

// sweepLocked removes the finished operations from pending and displaced
// and sets the size of the next sweep to twice what is left, so that
// sweeping costs a constant per Run. Usually few operations are left: the
// map is then cleared (no key is hashed) and they are put back. A map that
// a burst grew is made anew once the burst is over. Called with mu held.
func (s *mapShard) sweepLocked() {
	var buf [8]*operation
	left := buf[:0]
	for _, o := range s.pending {
		if o.state.Load() != opFinished {
			left = append(left, o)
		}
	}
	switch n := len(s.pending); {
	case 2*len(left) > n:
		for name, o := range s.pending {
			if o.state.Load() == opFinished {
				delete(s.pending, name)
			}
		}
	case n > 4*minSweep:
		s.pending = make(map[string]*operation, len(left))
	default:
		clear(s.pending)
	}
	if len(s.pending) == 0 {
		for _, o := range left {
			s.pending[o.name] = o
		}
	}
	s.sweepAt = max(minSweep, 2*len(s.pending))
	s.displaced = deleteFinished(s.displaced)
}

// deleteFinished returns ops without the finished operations, nil when
// none is left.
func deleteFinished(ops []*operation) []*operation {
	ops = slices.DeleteFunc(ops, func(o *operation) bool { return o.state.Load() == opFinished })
	if len(ops) == 0 {
		return nil
	}
	return ops
}

// busy reports whether an operation of the shard has not finished. It
// takes the finished operations it meets out of pending, so that a Wait
// during a burst, which makes every finishing operation look again, does
// not read them again.
func (s *mapShard) busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.displaced = deleteFinished(s.displaced)
	if len(s.displaced) > 0 {
		return true
	}
	for name, o := range s.pending {
		if o.state.Load() != opFinished {
			return true
		}
		delete(s.pending, name)
	}
	return false
}
