package operations

import (
	"maps"
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
	// started holds, in the order Run started them, the operations
	// started since the last sweep and those the sweeps found
	// unfinished: every operation Wait waits for, including one whose
	// name was started again while its then callback ran. A sweep reads
	// it instead of pending: the operations of one shard are allocated
	// one after the other, so this walk goes through memory in order.
	started []*operation
	// sweepAt is the length of started at which Run sweeps the finished
	// operations out.
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

// minSweep is the smallest length of a shard's started operations at
// which Run sweeps the finished ones out. 16, 32, 64, 256 and 1,024 gave
// serial run+finish medians of 685, 679, 666, 747 and 1,111 ns (2 cores,
// 20 rounds each).
const minSweep = 64

func (s *mapShard) init() {
	s.pending = make(map[string]*operation)
	s.failed = make(map[string]*backoff)
	s.sweepAt = minSweep
}

// startLocked records o as the operation of its name. Called with mu
// held.
func (s *mapShard) startLocked(o *operation) {
	s.pending[o.name] = o
	s.started = append(s.started, o)
	if len(s.started) >= s.sweepAt {
		s.sweepLocked()
	}
}

// sweepLocked removes the finished operations from started and pending
// and sets the length of the next sweep to twice what is left, so that
// sweeping costs a constant per Run. Usually few operations are left: the
// map is then cleared (no key is hashed) and they are put back, in the
// order they started, so that the last one of a name is its entry. A map
// that a burst grew is made anew once the burst is over. Called with mu
// held.
func (s *mapShard) sweepLocked() {
	left := s.started[:0]
	for _, o := range s.started {
		if o.state.Load() != opFinished {
			left = append(left, o)
		}
	}
	clear(s.started[len(left):])
	s.started = left
	if n := len(s.pending); 2*len(left) > n {
		maps.DeleteFunc(s.pending, func(_ string, o *operation) bool { return o.state.Load() == opFinished })
	} else {
		if n > 4*minSweep {
			s.pending = make(map[string]*operation, len(left))
		} else {
			clear(s.pending)
		}
		for _, o := range left {
			s.pending[o.name] = o
		}
	}
	s.sweepAt = max(minSweep, 2*len(left))
}

// busy reports whether an operation of the shard has not finished. It
// drops the finished operations it passes, so that a Wait during a burst,
// which makes every finishing operation look again, does not read them
// again; those still in pending go with the next sweep.
func (s *mapShard) busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, o := range s.started {
		if o.state.Load() != opFinished {
			clear(s.started[:i])
			s.started = s.started[i:]
			return true
		}
	}
	if len(s.started) > 0 {
		s.sweepLocked()
	}
	return false
}
