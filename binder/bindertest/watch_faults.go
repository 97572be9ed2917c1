package bindertest

import "slices"

// WatchAction is what a WatchFault does to an event.
type WatchAction int

// The actions of a WatchFault.
const (
	// WatchDrop loses the event: watches and handlers never see it (a
	// watch that skips a change, as a cache that missed it does until the
	// next event of the object or a relist).
	WatchDrop WatchAction = iota + 1
	// WatchDuplicate sends the event twice in a row.
	WatchDuplicate
	// WatchDelay holds the event back until WatchFault.Delay more events
	// of its kind have been sent, then sends it after them.
	WatchDelay
	// WatchReorder holds the event back until the next event of the same
	// object, then sends it after that one: the object's two changes
	// arrive in the wrong order.
	WatchReorder
)

// String returns the action's name, e.g. "drop".
func (a WatchAction) String() string {
	switch a {
	case WatchDrop:
		return "drop"
	case WatchDuplicate:
		return "duplicate"
	case WatchDelay:
		return "delay"
	case WatchReorder:
		return "reorder"
	}
	return "WatchAction(?)"
}

// WatchFault disturbs the events of chosen objects on their way to watches
// (Watch, ListWatch: client-go informers) and event handlers
// (AddEventHandler), as a slow, lossy or restarted watch cache does. The
// history that a watch resumes from is not disturbed, and neither are the
// initial events of a new watch or handler. An event matches when each of
// Kind, Namespace and Name is unset or equal to its object's.
type WatchFault struct {
	// Kind selects the kind; 0 matches every kind.
	Kind Kind
	// Namespace selects the namespace; "" matches every namespace.
	Namespace string
	// Name selects the object; "" matches every name.
	Name string
	// Action is what happens to a matching event; it must be set.
	Action WatchAction
	// Delay is, for WatchDelay, the number of later events of the kind
	// the event waits for; less than 1 means 1.
	Delay int
	// Nth, when positive, fires the fault only on the Nth matching event;
	// Times and Fraction are then ignored.
	Nth int
	// Times is how often the fault fires; 0 means without limit.
	Times int
	// Fraction is the probability that a matching event fires the fault,
	// drawn from the fault's own generator (seeded as Fault.Seed says);
	// 0 (or ≥ 1) fires on every match.
	Fraction float64
	// Seed seeds the fault's generator; see Fault.Seed.
	Seed int64
}

// watchFaults is the Server's watch-fault state, guarded by the Server's
// mu.
type watchFaults struct {
	faults []*faultState
	// held are the events a delay or reorder holds back, in the order
	// they were held.
	held []heldEvent
	// stalled counts the StallWatches calls in force per kind; queue holds
	// the events they, and SlowWatches, hold back, in commit order.
	stalled [numKinds]int
	queue   [numKinds][]event
	// lag is, per kind, how many events SlowWatches keeps behind; 0 when
	// the kind's watch is not slow.
	lag [numKinds]int
}

// heldEvent is an event held back by WatchDelay (countdown) or
// WatchReorder (until an event of the object with key).
type heldEvent struct {
	ev        event
	countdown int
	reorder   bool
	key       string
}

func eventKey(ev event) string {
	return objectKey(ev.kind, ev.obj.GetNamespace(), ev.obj.GetName())
}

// watchStateLocked returns the watch-fault state, making it. Called with
// mu held.
func (s *Server) watchStateLocked() *watchFaults {
	if s.watch == nil {
		s.watch = &watchFaults{}
	}
	return s.watch
}

// InjectWatchFault adds a watch fault; faults are checked in the order
// injected and the first that fires decides the event's fate. The
// returned func removes it (events it holds back stay held until their
// time or FlushWatchFaults); calling it more than once is harmless.
func (s *Server) InjectWatchFault(f WatchFault) (remove func()) {
	s.faultMu.Lock()
	fs := s.newFaultStateLocked(Fault{Kind: f.Kind, Namespace: f.Namespace, Name: f.Name,
		Nth: f.Nth, Times: f.Times, Fraction: f.Fraction, Seed: f.Seed})
	s.faultMu.Unlock()
	fs.watch = f
	s.mu.Lock()
	wf := s.watchStateLocked()
	wf.faults = append(wf.faults, fs)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		wf.faults = slices.DeleteFunc(wf.faults, func(x *faultState) bool { return x == fs })
	}
}

// StallWatches holds back every event of kind on its way to watches and
// handlers, as a stuck watch does, until the returned func is called: the
// held events are then sent in order. Calling resume more than once is
// harmless; stalls of one kind nest.
func (s *Server) StallWatches(kind Kind) (resume func()) {
	if !kind.valid() {
		return func() {}
	}
	s.mu.Lock()
	s.watchStateLocked().stalled[kind]++
	s.mu.Unlock()
	return s.resumeOnce(func(wf *watchFaults) bool {
		wf.stalled[kind]--
		// A slow kind keeps its lag behind.
		return wf.stalled[kind] == 0 && s.sendQueuedLocked(kind, wf.lag[kind])
	})
}

// SlowWatches makes the watches and handlers of kind lag lag events
// behind (less than 1 means 1), as a slow but healthy watch does: every
// event of kind is held back until lag later events of kind have been
// committed, and events are sent in commit order, none lost. The returned
// func ends the lag and sends what it holds back (a stalled kind keeps
// them until it resumes); calling it more than once is harmless. A second
// SlowWatches of a kind replaces the lag of the first.
func (s *Server) SlowWatches(kind Kind, lag int) (resume func()) {
	if !kind.valid() {
		return func() {}
	}
	s.mu.Lock()
	s.watchStateLocked().lag[kind] = max(lag, 1)
	s.mu.Unlock()
	return s.resumeOnce(func(wf *watchFaults) bool {
		wf.lag[kind] = 0
		return wf.stalled[kind] == 0 && s.sendQueuedLocked(kind, 0)
	})
}

// resumeOnce returns the resume func of a watch fault: its first call runs
// end with mu held and then delivers what end reports it queued for the
// handlers; later calls do nothing.
func (s *Server) resumeOnce(end func(wf *watchFaults) (queued bool)) func() {
	var done bool
	return func() {
		s.mu.Lock()
		if done {
			s.mu.Unlock()
			return
		}
		done = true
		queued := end(s.watch)
		s.mu.Unlock()
		if queued {
			s.deliver()
		}
	}
}

// sendQueuedLocked sends the events of kind's queue beyond the newest
// keep and reports whether handler deliveries were queued. Called with mu
// held.
func (s *Server) sendQueuedLocked(kind Kind, keep int) bool {
	wf := s.watch
	q := wf.queue[kind]
	n := max(len(q)-keep, 0)
	var queued bool
	for _, ev := range q[:n] {
		queued = s.sendLocked(ev) || queued
	}
	wf.queue[kind] = slices.Delete(q, 0, n)
	if len(wf.queue[kind]) == 0 {
		wf.queue[kind] = nil
	}
	return queued
}

// FlushWatchFaults sends every event that WatchDelay and WatchReorder
// faults hold back, in the order they were held (a stalled kind keeps
// them until it resumes).
func (s *Server) FlushWatchFaults() {
	s.mu.Lock()
	var queued bool
	if wf := s.watch; wf != nil {
		held := wf.held
		wf.held = nil
		for _, h := range held {
			queued = s.emitLocked(h.ev) || queued
		}
	}
	s.mu.Unlock()
	if queued {
		s.deliver()
	}
}

// HeldEvents returns how many events watch faults, stalls and slow
// watches hold back.
func (s *Server) HeldEvents() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	wf := s.watch
	if wf == nil {
		return 0
	}
	n := len(wf.held)
	for _, q := range wf.queue {
		n += len(q)
	}
	return n
}

// ForceRelist makes the watches of kinds (every kind when none is given)
// end, and as many next resumptions from a resourceVersion as it ended
// watches fail once with a 410 Gone (Expired) error, as after an etcd
// compaction: every client-go reflector it cut off lists again and
// rebuilds its cache, which undoes dropped events. Event handlers are not
// affected.
func (s *Server) ForceRelist(kinds ...Kind) {
	if len(kinds) == 0 {
		kinds = allKinds()
	}
	s.mu.Lock()
	var all []*watcher
	for _, k := range kinds {
		if !k.valid() {
			continue
		}
		s.expire[k] += len(s.watchers[k])
		all = append(all, s.watchers[k]...)
	}
	s.mu.Unlock()
	endWatchers(all)
}

// disturbLocked applies the watch faults to a committed event and sends
// what is due. It reports whether handler deliveries were queued. Called
// with mu held.
func (s *Server) disturbLocked(ev event) bool {
	wf := s.watch
	key := eventKey(ev)
	var after []event
	kept := make([]heldEvent, 0, len(wf.held))
	for _, h := range wf.held {
		switch {
		case h.ev.kind != ev.kind:
		case h.reorder && h.key == key:
			after = append(after, h.ev)
			continue
		case !h.reorder:
			if h.countdown--; h.countdown <= 0 {
				after = append(after, h.ev)
				continue
			}
		}
		kept = append(kept, h)
	}
	wf.held = kept
	now := []event{ev}
	if fs := s.firingWatchFaultLocked(ev); fs != nil {
		switch fs.watch.Action {
		case WatchDrop:
			now = nil
		case WatchDuplicate:
			now = append(now, ev)
		case WatchDelay:
			wf.held = append(wf.held, heldEvent{ev: ev, countdown: max(fs.watch.Delay, 1)})
			now = nil
		case WatchReorder:
			wf.held = append(wf.held, heldEvent{ev: ev, reorder: true, key: key})
			now = nil
		}
	}
	var queued bool
	for _, e := range append(now, after...) {
		queued = s.emitLocked(e) || queued
	}
	return queued
}

// firingWatchFaultLocked returns the first watch fault that fires on ev.
func (s *Server) firingWatchFaultLocked(ev event) *faultState {
	o := ev.obj
	for _, fs := range s.watch.faults {
		if fs.watch.Action != 0 && fs.matches("", ev.kind, o.GetNamespace(), o.GetName()) && fs.fires() {
			return fs
		}
	}
	return nil
}

// emitLocked sends ev unless its kind is stalled or slow.
func (s *Server) emitLocked(ev event) bool {
	wf := s.watch
	if wf == nil || (wf.stalled[ev.kind] == 0 && wf.lag[ev.kind] == 0) {
		return s.sendLocked(ev)
	}
	wf.queue[ev.kind] = append(wf.queue[ev.kind], ev)
	if wf.stalled[ev.kind] > 0 {
		return false
	}
	return s.sendQueuedLocked(ev.kind, wf.lag[ev.kind])
}
