package bindertest

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Fault makes chosen requests fail or slow down. A request matches when
// each of Verb, Kind, Namespace and Name is either unset or equal to the
// request's. A matching request fires the fault (subject to Nth, Fraction
// and Times); a fired fault first waits Latency on the Server's clock, then
// fails the request with Err, with a Conflict error when Conflict is set,
// or with a Timeout error when Timeout is set. Without Applied the request
// fails before it reads or changes anything; with Applied a write is
// carried out first (committed, its events sent) and only its answer is
// the error, as when a response is lost or a timeout hits after the write
// reached storage.
type Fault struct {
	// Verb selects the verb; "" matches every verb.
	Verb Verb
	// Kind selects the kind; 0 matches every kind.
	Kind Kind
	// Namespace selects the namespace; "" matches every namespace.
	Namespace string
	// Name selects the object name; "" matches every name. A create with
	// generateName and no name matches only Name "".
	Name string
	// Err is returned by the request. Use k8s.io/apimachinery/pkg/api/errors
	// values (e.g. apierrors.NewInternalError) to look like the API.
	Err error
	// Conflict makes the request fail with the Conflict error a stale
	// resourceVersion gets. Ignored when Err is set.
	Conflict bool
	// Timeout makes the request fail with kube-apiserver's 504 for a
	// request that did not complete in time (apierrors.IsTimeout). Ignored
	// when Err or Conflict is set.
	Timeout bool
	// Applied carries out a write before answering it with the fault's
	// error: the client cannot tell whether the write happened. A write
	// that fails on its own (NotFound, Conflict on a stale
	// resourceVersion, Invalid, ...) returns that error instead. Ignored
	// for gets, which just fail.
	Applied bool
	// Latency delays the request by this long on the Server's clock (a
	// test steps a fake clock), or until the request's ctx is done.
	// A Fault with no Err, no Conflict, no Timeout and no Latency fails the
	// request with an InternalError.
	Latency time.Duration
	// Nth, when positive, fires the fault only on the Nth request that
	// matches it, counted from when it was injected or armed ("the 3rd
	// update of volume pv1"); Times and Fraction are then ignored.
	Nth int
	// Times is how often the fault fires; 0 means without limit.
	Times int
	// Fraction is the probability that a matching request fires the fault,
	// drawn from the fault's own generator; 0 (or ≥ 1) fires on every
	// match.
	Fraction float64
	// Seed seeds the fault's generator. Zero on a Server with Config.Seed
	// derives the fault's seed from the Server's seed and the number of
	// faults injected before it, so that every fault of a run has its own
	// stream and a run replays from the Server's seed alone.
	Seed int64
}

// faultState is an injected or armed Fault and its counters.
type faultState struct {
	f       Fault
	left    int // remaining firings when f.Times > 0
	matched int // matching requests seen
	armed   bool
	rnd     *rand.Rand
	// watch is the WatchFault of a watch fault (Action set).
	watch WatchFault
}

func (fs *faultState) matches(v Verb, kind Kind, namespace, name string) bool {
	f := &fs.f
	return (f.Verb == "" || f.Verb == v) && (f.Kind == 0 || f.Kind == kind) &&
		(f.Namespace == "" || f.Namespace == namespace) && (f.Name == "" || f.Name == name)
}

// fires counts a matching request and reports whether it fires the fault.
func (fs *faultState) fires() bool {
	fs.matched++
	if fs.f.Nth > 0 {
		if fs.armed {
			// Due from the Nth match on: an earlier armed fault may
			// take the Nth request itself.
			return fs.matched >= fs.f.Nth
		}
		return fs.matched == fs.f.Nth
	}
	if fs.f.Times > 0 && fs.left == 0 {
		return false
	}
	if fs.rnd != nil && fs.rnd.Float64() >= fs.f.Fraction {
		return false
	}
	if fs.f.Times > 0 {
		fs.left--
	}
	return true
}

// newFaultStateLocked prepares f; called with faultMu held.
func (s *Server) newFaultStateLocked(f Fault) *faultState {
	fs := &faultState{f: f, left: f.Times}
	s.faultSeq++
	if f.Fraction > 0 && f.Fraction < 1 {
		seed := f.Seed
		if seed == 0 && s.seeded {
			seed = streamSeed(s.seed, s.faultSeq)
		}
		fs.rnd = rand.New(rand.NewSource(seed))
	}
	return fs
}

// streamSeed derives the seed of the n-th random stream of a run from
// the run's seed (SplitMix64's finalizer, so nearby n give unrelated
// streams).
func streamSeed(seed int64, n uint64) int64 {
	z := uint64(seed) + n*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return int64(z ^ z>>31)
}

// InjectFault adds a fault. Faults are checked in the order they were
// injected; every one that fires adds its latency, and the first one that
// fires with an error decides the request's error (see ArmFaults for
// faults that fire one per request). The returned func removes the fault;
// calling it more than once is harmless.
func (s *Server) InjectFault(f Fault) (remove func()) {
	s.faultMu.Lock()
	fs := s.newFaultStateLocked(f)
	s.faults = append(s.faults, fs)
	s.numFaults.Add(1)
	s.faultMu.Unlock()
	return func() {
		s.faultMu.Lock()
		defer s.faultMu.Unlock()
		if i := slices.Index(s.faults, fs); i >= 0 {
			s.faults = slices.Delete(s.faults, i, i+1)
			s.numFaults.Add(-1)
		}
	}
}

// appliedError is the answer of a write that an Applied fault lets
// happen: begin returns it, and the write returns err after committing.
type appliedError struct{ err error }

func (e *appliedError) Error() string { return e.err.Error() }

// splitApplied separates the error an Applied fault gives a write after
// it is carried out (post) from an error that fails it at once (err).
// errors.AsType, unlike errors.As with a pointer to a local, does not
// allocate on every request.
func splitApplied(err error) (post, fail error) {
	if ae, ok := errors.AsType[*appliedError](err); ok {
		return ae.err, nil
	}
	return nil, err
}

// faultError is the error a fired fault gives a request.
func (fs *faultState) faultError(v verbIndex, kind Kind, name string) error {
	switch f := &fs.f; {
	case f.Err != nil:
		return f.Err
	case f.Conflict:
		return conflict(kind, name)
	case f.Timeout:
		return apierrors.NewTimeoutError("request did not complete within requested timeout - context deadline exceeded", 0)
	case f.Latency == 0:
		return apierrors.NewInternalError(fmt.Errorf("bindertest: injected fault on %s %s %q", v.verb(), kind, name))
	}
	return nil
}

// applyFaults fires the faults that match a request: the first armed one
// that fires, then every injected one. It waits their latency and returns
// the error of the first one that has one, wrapped in an *appliedError
// when that fault is Applied and the request is a write.
func (s *Server) applyFaults(ctx context.Context, v verbIndex, kind Kind, namespace, name string) error {
	var (
		latency time.Duration
		err     error
		applied bool
	)
	fire := func(fs *faultState) {
		s.stats.faults.Add(1)
		latency += fs.f.Latency
		if err == nil {
			err = fs.faultError(v, kind, name)
			applied = fs.f.Applied && v != vGet
		}
	}
	s.faultMu.Lock()
	if fs := s.takeArmedLocked(v.verb(), kind, namespace, name); fs != nil {
		fire(fs)
	}
	for _, fs := range s.faults {
		if fs.matches(v.verb(), kind, namespace, name) && fs.fires() {
			fire(fs)
		}
	}
	s.faultMu.Unlock()
	if latency > 0 {
		select {
		case <-s.clk.After(latency):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if apierrors.IsConflict(err) {
		s.stats.conflicts.Add(1)
	}
	if applied {
		return &appliedError{err: err}
	}
	return err
}
