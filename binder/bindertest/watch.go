package bindertest

import (
	"context"
	"fmt"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

// selector is a watch's or list's label and field selection.
type selector struct {
	labels labels.Selector
	fields fields.Selector
}

// supportedFields are the field selector keys the Server understands, as
// every kind's API does.
var supportedFields = []string{"metadata.name", "metadata.namespace"}

func parseSelector(kind Kind, opts metav1.ListOptions) (selector, error) {
	sel := selector{labels: labels.Everything(), fields: fields.Everything()}
	if opts.LabelSelector != "" {
		l, err := labels.Parse(opts.LabelSelector)
		if err != nil {
			return sel, badRequest("%s: invalid label selector %q: %v", kind, opts.LabelSelector, err)
		}
		sel.labels = l
	}
	if opts.FieldSelector != "" {
		f, err := fields.ParseSelector(opts.FieldSelector)
		if err != nil {
			return sel, badRequest("%s: invalid field selector %q: %v", kind, opts.FieldSelector, err)
		}
		for _, r := range f.Requirements() {
			if !slices.Contains(supportedFields, r.Field) {
				return sel, badRequest("%s: field label not supported: %s", kind, r.Field)
			}
		}
		sel.fields = f
	}
	return sel, nil
}

func (sel selector) matches(o object) bool {
	return sel.matchesWith(o.GetLabels(), o)
}

// matchedBefore reports whether the version before ev, a Modified event,
// matched sel: from that version, or, for an event from the history, from
// the labels it kept of it (the name and namespace are ev.obj's: they
// never change).
func (sel selector) matchedBefore(ev event) bool {
	if ev.old != nil {
		return sel.matches(ev.old)
	}
	return sel.matchesWith(ev.oldLabels, ev.obj)
}

// matchesWith reports whether an object with lbls and o's name and
// namespace matches sel.
func (sel selector) matchesWith(lbls map[string]string, o object) bool {
	if !sel.labels.Empty() && !sel.labels.Matches(labels.Set(lbls)) {
		return false
	}
	if sel.fields.Empty() {
		return true
	}
	return sel.fields.Matches(fields.Set{"metadata.name": o.GetName(), "metadata.namespace": o.GetNamespace()})
}

// watchItem is one entry of a watcher's queue: a committed event, an
// initial Added event, or a bookmark.
type watchItem struct {
	ev       event
	bookmark bool
}

// watcher is an open watch.Interface. Its goroutine turns queued items into
// watch.Events with private copies of the objects.
type watcher struct {
	s    *Server
	kind Kind
	sel  selector
	// since is the Server's resourceVersion when the watch started: its
	// initial events or the history it resumed from cover every change up
	// to it, so an event of such a change that watch faults held back is
	// not sent to it (a real watch never goes back in time).
	since uint64

	// mu guards queue.
	mu    sync.Mutex
	queue []watchItem
	// wake has a token when queue may be non-empty.
	wake chan struct{}

	result   chan watch.Event
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

var _ watch.Interface = (*watcher)(nil)

// push queues it. Called with s.mu held, so items are in commit order.
func (w *watcher) push(it watchItem) {
	w.mu.Lock()
	w.queue = append(w.queue, it)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// ResultChan returns the channel of events. It is closed when the watch
// ends (Stop, or the Watch's ctx is done).
func (w *watcher) ResultChan() <-chan watch.Event { return w.result }

// Stop ends the watch and waits until its goroutine has exited. Safe to
// call more than once.
func (w *watcher) Stop() {
	w.end()
	<-w.done
}

// end makes the watch's goroutine exit without waiting for it.
func (w *watcher) end() { w.stopOnce.Do(func() { close(w.stop) }) }

// CloseWatches ends every open watch (their result channels close), as an
// API server restart or a watch timeout does, and waits until their
// goroutines have exited. Clients watch again: client-go reflectors resume
// from their last resourceVersion, or relist when it has left the history.
func (s *Server) CloseWatches() {
	s.mu.Lock()
	var all []*watcher
	for k := range s.watchers {
		all = append(all, s.watchers[k]...)
	}
	s.mu.Unlock()
	endWatchers(all)
}

// endWatchers ends the watches and waits until their goroutines have
// exited. Called without mu: an exiting watch takes it.
func endWatchers(all []*watcher) {
	for _, w := range all {
		w.end()
	}
	for _, w := range all {
		<-w.done
	}
}

func (w *watcher) run(ctx context.Context) {
	defer close(w.done)
	defer close(w.result)
	defer w.s.removeWatcher(w)
	for {
		w.mu.Lock()
		items := w.queue
		w.queue = nil
		w.mu.Unlock()
		for _, it := range items {
			e, ok := w.convert(it)
			if !ok {
				continue
			}
			select {
			case w.result <- e:
			case <-w.stop:
				return
			case <-ctx.Done():
				return
			}
		}
		select {
		case <-w.wake:
		case <-w.stop:
			return
		case <-ctx.Done():
			return
		}
	}
}

// convert makes the watch.Event of it, applying the selector as the API
// does: an object that starts to match is Added, one that stops matching
// is Deleted.
func (w *watcher) convert(it watchItem) (watch.Event, bool) {
	ev := it.ev
	if it.bookmark {
		return watch.Event{Type: watch.Bookmark, Object: ev.obj}, true
	}
	now := w.sel.matches(ev.obj)
	typ := ev.typ
	if ev.typ == watch.Modified {
		was := w.sel.matchedBefore(ev)
		switch {
		case was && !now:
			typ, now = watch.Deleted, true
		case !was && now:
			typ = watch.Added
		}
	}
	if !now {
		return watch.Event{}, false
	}
	return watch.Event{Type: typ, Object: deepCopy(ev.obj)}, true
}

func (s *Server) removeWatcher(w *watcher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.Index(s.watchers[w.kind], w); i >= 0 {
		s.watchers[w.kind] = slices.Delete(s.watchers[w.kind], i, i+1)
	}
}

// Watch starts a watch of kind with kube-apiserver's semantics for opts:
//
//   - ResourceVersion "" or "0" (and SendInitialEvents unset): Added events
//     for the current objects, then every change;
//   - ResourceVersion n: every change after n, from the history kept (see
//     Config.History); n older than the history fails with a 410 Expired
//     error (apierrors.IsResourceExpired), n newer than the current
//     resourceVersion with a TooLargeResourceVersion Timeout error;
//   - SendInitialEvents true (with ResourceVersionMatch NotOlderThan, as
//     client-go's streaming list sends it): Added events for the current
//     objects, then, with AllowWatchBookmarks, a Bookmark annotated
//     "k8s.io/initial-events-end", then every change; SendInitialEvents
//     false: every change from now (or from ResourceVersion);
//   - LabelSelector, and FieldSelector on metadata.name and
//     metadata.namespace; an object that stops matching arrives as Deleted,
//     one that starts to match as Added.
//
// TimeoutSeconds and Limit are ignored. Each event carries a deep copy the
// receiver owns. The watch runs a goroutine until Stop is called or ctx is
// done; the caller must do one of them. Watches are not counted in Stats
// and are not subject to faults.
func (s *Server) Watch(ctx context.Context, kind Kind, opts metav1.ListOptions) (watch.Interface, error) {
	sel, from, err := parseRequest(ctx, kind, opts)
	if err != nil {
		return nil, err
	}
	initial := from == 0
	if opts.SendInitialEvents != nil {
		if opts.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("%s: sendInitialEvents requires resourceVersionMatch %q",
				kind, metav1.ResourceVersionMatchNotOlderThan))
		}
		initial = *opts.SendInitialEvents
	}
	w := &watcher{
		s: s, kind: kind, sel: sel,
		wake:   make(chan struct{}, 1),
		result: make(chan watch.Event),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}

	s.mu.Lock()
	if from > s.rv {
		cur := s.rv
		s.mu.Unlock()
		return nil, tooLargeRV(from, cur)
	}
	w.since = s.rv
	switch {
	case initial:
		for _, o := range s.sortedLocked(kind) {
			w.queue = append(w.queue, watchItem{ev: event{kind: kind, typ: watch.Added, obj: o}})
		}
		if opts.SendInitialEvents != nil && opts.AllowWatchBookmarks {
			b := emptyObject(kind)
			b.SetResourceVersion(formatRV(s.rv))
			b.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
			w.queue = append(w.queue, watchItem{ev: event{kind: kind, obj: b}, bookmark: true})
		}
	case from > 0:
		evs, ok := s.hist.since(from, kind)
		if s.expire[kind] > 0 {
			s.expire[kind]--
			ok = false
		}
		if !ok {
			oldest := s.hist.oldest()
			s.mu.Unlock()
			return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", from, oldest))
		}
		for _, ev := range evs {
			w.queue = append(w.queue, watchItem{ev: ev})
		}
	}
	w.wake <- struct{}{} // deliver the queued items, if any
	s.watchers[kind] = append(s.watchers[kind], w)
	s.mu.Unlock()
	go w.run(ctx)
	return w, nil
}

// parseRequest checks the kind and ctx of a list or watch request and
// parses its selectors and resourceVersion (0 when unset).
func parseRequest(ctx context.Context, kind Kind, opts metav1.ListOptions) (selector, uint64, error) {
	if !kind.valid() {
		return selector{}, 0, badRequest("invalid kind %s", kind)
	}
	if err := ctx.Err(); err != nil {
		return selector{}, 0, err
	}
	sel, err := parseSelector(kind, opts)
	if err != nil {
		return selector{}, 0, err
	}
	from, err := parseRV(kind, "", opts.ResourceVersion)
	if err != nil {
		return selector{}, 0, err
	}
	return sel, from, nil
}

// tooLargeRV is kube-apiserver's error for a resourceVersion newer than
// the current one.
func tooLargeRV(rv, cur uint64) error {
	err := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", rv, cur), 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type:    metav1.CauseTypeResourceVersionTooLarge,
		Message: "Too large resource version",
	}}
	return err
}

// list returns the typed list of kind (e.g. *v1.PersistentVolumeList) with
// the current resourceVersion, filtered by opts' selectors. Limit is
// ignored: the whole list is returned, without a continue token.
func (s *Server) list(ctx context.Context, kind Kind, opts metav1.ListOptions) (runtime.Object, error) {
	sel, from, err := parseRequest(ctx, kind, opts)
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	if from > s.rv {
		cur := s.rv
		s.mu.RUnlock()
		return nil, tooLargeRV(from, cur)
	}
	objs := s.sortedLocked(kind)
	rv := s.rv
	s.mu.RUnlock()
	objs = slices.DeleteFunc(objs, func(o object) bool { return !sel.matches(o) })
	return newList(kind, formatRV(rv), objs), nil
}

// ListWatch returns a client-go ListerWatcher of kind on the Server, so
// that client-go reflectors and informers (toolscache.NewSharedIndexInformer)
// run on it as on a real API server, with either a list and a watch or a
// streaming list (the WatchListClient feature). Lists return the typed
// list (e.g. *v1.PersistentVolumeList); see Watch for watches.
func (s *Server) ListWatch(kind Kind) toolscache.ListerWatcher {
	return &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return s.list(ctx, kind, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return s.Watch(ctx, kind, opts)
		},
	}
}
