package bindertest

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Fault makes chosen requests fail or slow down. A request matches when
// each of Verb, Kind, Namespace and Name is either unset or equal to the
// request's. A matching request fires the fault (subject to Fraction and
// Times); a fired fault first waits Latency on the Server's clock, then
// fails the request with Err, or with a Conflict error when Conflict is
// set, before the request reads or changes anything.
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
	// Latency delays the request by this long on the Server's clock (a
	// test steps a fake clock), or until the request's ctx is done.
	// A Fault with no Err, no Conflict and no Latency fails the request with
	// an InternalError.
	Latency time.Duration
	// Times is how often the fault fires; 0 means without limit.
	Times int
	// Fraction is the probability that a matching request fires the fault,
	// drawn from a generator seeded with Seed; 0 (or ≥ 1) fires on every
	// match.
	Fraction float64
	// Seed seeds the generator Fraction draws from.
	Seed int64
}

// faultState is an injected Fault and its remaining budget.
type faultState struct {
	f    Fault
	left int // remaining firings when f.Times > 0
	rnd  *rand.Rand
}

func (fs *faultState) matches(v Verb, kind Kind, namespace, name string) bool {
	f := &fs.f
	return (f.Verb == "" || f.Verb == v) && (f.Kind == 0 || f.Kind == kind) &&
		(f.Namespace == "" || f.Namespace == namespace) && (f.Name == "" || f.Name == name)
}

// InjectFault adds a fault. Faults are checked in the order they were
// injected; every one that fires adds its latency, and the first one that
// fires with an error decides the request's error. The returned func
// removes the fault; calling it more than once is harmless.
func (s *Server) InjectFault(f Fault) (remove func()) {
	fs := &faultState{f: f, left: f.Times}
	if f.Fraction > 0 && f.Fraction < 1 {
		fs.rnd = rand.New(rand.NewSource(f.Seed))
	}
	s.faultMu.Lock()
	s.faults = append(s.faults, fs)
	s.numFaults.Store(int64(len(s.faults)))
	s.faultMu.Unlock()
	return func() {
		s.faultMu.Lock()
		defer s.faultMu.Unlock()
		if i := slices.Index(s.faults, fs); i >= 0 {
			s.faults = slices.Delete(s.faults, i, i+1)
			s.numFaults.Store(int64(len(s.faults)))
		}
	}
}

// applyFaults fires the faults that match a request: it waits their
// latency and returns the error of the first one that has one.
func (s *Server) applyFaults(ctx context.Context, v verbIndex, kind Kind, namespace, name string) error {
	var (
		latency time.Duration
		err     error
	)
	s.faultMu.Lock()
	for _, fs := range s.faults {
		if !fs.matches(v.verb(), kind, namespace, name) {
			continue
		}
		if fs.f.Times > 0 && fs.left == 0 {
			continue
		}
		if fs.rnd != nil && fs.rnd.Float64() >= fs.f.Fraction {
			continue
		}
		if fs.f.Times > 0 {
			fs.left--
		}
		s.stats.faults.Add(1)
		latency += fs.f.Latency
		if err != nil {
			continue
		}
		switch {
		case fs.f.Err != nil:
			err = fs.f.Err
		case fs.f.Conflict:
			err = conflict(kind, name)
		case fs.f.Latency == 0:
			err = apierrors.NewInternalError(fmt.Errorf("bindertest: injected fault on %s %s %q", v.verb(), kind, name))
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
	return err
}
