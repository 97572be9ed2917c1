package bindertest

import "slices"

// ArmFaults queues faults that fire one per request, in the order armed:
// a request fires the first armed fault that matches it and is due (see
// Fault.Nth: an armed fault is due from its Nth match on), which is then used up; every other armed fault waits for a
// later request. So ArmFaults(conflict, timeout, applied error) on one
// volume's updates makes its next three updates fail in that order, where
// InjectFault would fire all three on every one of them. Times and
// Fraction are ignored: an armed fault fires once. Armed faults fire
// before injected ones (InjectFault), whose latency adds up with theirs.
// The returned func removes the faults that have not fired; calling it
// more than once is harmless.
func (s *Server) ArmFaults(faults ...Fault) (disarm func()) {
	s.faultMu.Lock()
	armed := make([]*faultState, len(faults))
	for i, f := range faults {
		f.Times, f.Fraction = 0, 0
		armed[i] = s.newFaultStateLocked(f)
		armed[i].armed = true
	}
	s.armed = append(s.armed, armed...)
	s.numFaults.Add(int64(len(armed)))
	s.faultMu.Unlock()
	return func() {
		s.faultMu.Lock()
		defer s.faultMu.Unlock()
		n := len(s.armed)
		s.armed = slices.DeleteFunc(s.armed, func(fs *faultState) bool { return slices.Contains(armed, fs) })
		s.numFaults.Add(int64(len(s.armed) - n))
	}
}

// ArmedFaults returns how many armed faults have not fired yet.
func (s *Server) ArmedFaults() int {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	return len(s.armed)
}

// takeArmedLocked counts the request on every armed fault it matches and
// removes and returns the first of them that fires, or nil. Called with
// faultMu held.
func (s *Server) takeArmedLocked(v Verb, kind Kind, namespace, name string) *faultState {
	var hit *faultState
	for _, fs := range s.armed {
		if fs.matches(v, kind, namespace, name) && fs.fires() && hit == nil {
			hit = fs
		}
	}
	if hit != nil {
		s.armed = slices.DeleteFunc(s.armed, func(fs *faultState) bool { return fs == hit })
		s.numFaults.Add(-1)
	}
	return hit
}
