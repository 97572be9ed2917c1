package bindertest

import (
	"context"
	"slices"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

// event is one committed change, in commit (resourceVersion) order.
// Objects are stored versions: immutable and shared.
type event struct {
	kind Kind
	typ  watch.EventType
	rv   uint64
	// obj is the new version, or the last state (with the deletion's
	// resourceVersion) for a deletion.
	obj object
	// old is the previous version of a Modified event, else nil; in the
	// history (ring), nil and oldLabels its labels.
	old       object
	oldLabels map[string]string
}

// subscriber is one AddEventHandler registration.
type subscriber struct {
	h       toolscache.ResourceEventHandler
	removed atomic.Bool
	// since is the Server's resourceVersion when it subscribed: its
	// replay holds every change up to it, so an event of a change up to it
	// that watch faults held back is not for it.
	since uint64
}

// delivery is an item of the handler queue: one event for the subscribers
// of its kind at commit time, or the replay of a new subscription.
type delivery struct {
	ev   event
	subs []*subscriber
	// replay, when set, lists the objects sub receives as initial adds.
	replay []object
	sub    *subscriber
}

// AddEventHandler subscribes h to the objects of kind, as an informer's
// AddEventHandler does: h first receives OnAdd(obj, true) for every
// existing object (sorted by key), then every committed change in
// resourceVersion order: OnAdd(obj, false), OnUpdate(old, new) and
// OnDelete(last state). A deletion that only sets deletionTimestamp (the
// object has finalizers) is an update.
//
// With Config.AsyncEvents, handlers run one call at a time on a goroutine of
// the Server and a write returns before its events are delivered, as
// informers see them; WaitForEvents waits for the deliveries. Otherwise
// handlers run synchronously, one call at a time, on a goroutine that made
// a write, after the Server's locks are released, so they may call back
// into the Server; the events of writes they make are delivered after the
// current event has reached every handler. When writes do not overlap,
// every handler call caused by a write (including the events of writes
// the handlers make) has returned when the write returns. A write that
// overlaps a delivery running on another goroutine leaves its events to
// that delivery and may return before they are delivered; when no write is
// in progress, every event has been delivered.
//
// Objects passed to handlers are the Server's stored versions, shared by
// every handler and immutable: handlers must not modify them (deep-copy
// first), as with an informer's objects. The returned func removes the
// subscription: h gets no further calls once it has returned, except for
// one already under way on another goroutine. An invalid kind or a nil h
// gets no events.
func (s *Server) AddEventHandler(kind Kind, h toolscache.ResourceEventHandler) (remove func()) {
	if !kind.valid() || h == nil {
		return func() {}
	}
	sub := &subscriber{h: h}
	s.mu.Lock()
	sub.since = s.rv
	objs := s.sortedLocked(kind)
	s.subs[kind] = append(slices.Clip(s.subs[kind]), sub)
	s.enqueue(delivery{replay: objs, sub: sub})
	s.mu.Unlock()
	s.deliver()
	return func() {
		if sub.removed.Swap(true) {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if i := slices.Index(s.subs[kind], sub); i >= 0 {
			// Copy on write: queued deliveries keep their snapshot.
			s.subs[kind] = slices.Delete(slices.Clone(s.subs[kind]), i, i+1)
		}
	}
}

// enqueue appends d to the handler queue. Called with s.mu held, so the
// queue is in commit order.
func (s *Server) enqueue(d delivery) {
	s.dmu.Lock()
	s.pending.push(d)
	s.dmu.Unlock()
}

// deliver runs the queued handler calls unless another goroutine already
// does (it then runs ours too). With Config.AsyncEvents it starts a goroutine
// that runs them instead. Called without s.mu held.
func (s *Server) deliver() {
	s.dmu.Lock()
	if s.draining || s.pending.empty() {
		s.dmu.Unlock()
		return
	}
	s.draining = true
	if s.async {
		s.dmu.Unlock()
		go func() {
			s.dmu.Lock()
			s.drainLocked()
			s.dmu.Unlock()
		}()
		return
	}
	s.drainLocked()
	s.dmu.Unlock()
}

// drainLocked runs the queue until it is empty, then wakes the
// WaitForEvents callers. Called with dmu held and draining set; dmu is
// released while handlers run.
func (s *Server) drainLocked() {
	for !s.pending.empty() {
		batch := s.pending.take()
		s.dmu.Unlock()
		for _, block := range batch {
			for i := range block {
				block[i].run()
			}
		}
		s.dmu.Lock()
		s.pending.recycle(batch)
	}
	s.draining = false
	for _, w := range s.idle {
		close(w)
	}
	s.idle = nil
}

// WaitForEvents blocks until every event committed so far has been
// delivered to the event handlers (AddEventHandler) and no delivery runs,
// or until ctx is done (then it returns ctx's error). Events that watch
// faults hold back are not waited for (see FlushWatchFaults). Without
// Config.AsyncEvents it returns at once unless another goroutine is
// delivering.
func (s *Server) WaitForEvents(ctx context.Context) error {
	for {
		s.dmu.Lock()
		if !s.draining && s.pending.empty() {
			s.dmu.Unlock()
			return nil
		}
		w := make(chan struct{})
		s.idle = append(s.idle, w)
		s.dmu.Unlock()
		select {
		case <-w:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// run calls the handlers of one delivery.
func (d *delivery) run() {
	if d.sub != nil {
		for _, o := range d.replay {
			if d.sub.removed.Load() {
				return
			}
			d.sub.h.OnAdd(o, true)
		}
		return
	}
	for _, sub := range d.subs {
		if sub.removed.Load() {
			continue
		}
		switch d.ev.typ {
		case watch.Added:
			sub.h.OnAdd(d.ev.obj, false)
		case watch.Modified:
			sub.h.OnUpdate(d.ev.old, d.ev.obj)
		case watch.Deleted:
			sub.h.OnDelete(d.ev.obj)
		}
	}
}
