package bindertest_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/volbind/volbind/binder/bindertest"
)

// eventLog records handler calls as "add pv1 rv", "update pv1 rv", ...
type eventLog struct {
	mu  sync.Mutex
	got []string
}

func (l *eventLog) add(typ string, obj any) {
	pv := obj.(*v1.PersistentVolume)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, fmt.Sprintf("%s %s %s", typ, pv.Name, pv.Labels["n"]))
}

func (l *eventLog) events() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.got)
}

func (l *eventLog) handler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { l.add("add", o) },
		UpdateFunc: func(_, o any) { l.add("update", o) },
		DeleteFunc: func(o any) { l.add("delete", o) },
	}
}

// relabel writes label n=v on the volume.
func relabel(t *testing.T, s *bindertest.Server, name, v string) {
	t.Helper()
	pv, err := s.GetVolume(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	pv.Labels = map[string]string{"n": v}
	if _, err := s.UpdateVolume(context.Background(), pv); err != nil {
		t.Fatal(err)
	}
}

func TestWatchFaults(t *testing.T) {
	tests := []struct {
		name  string
		fault bindertest.WatchFault
		want  []string
	}{
		{"drop", bindertest.WatchFault{Name: "pv1", Action: bindertest.WatchDrop, Nth: 2},
			[]string{"update pv1 1", "update pv2 1", "update pv2 2", "update pv1 3", "update pv2 3"}},
		{"duplicate", bindertest.WatchFault{Name: "pv1", Action: bindertest.WatchDuplicate, Times: 1},
			[]string{"update pv1 1", "update pv1 1", "update pv2 1", "update pv1 2", "update pv2 2", "update pv1 3", "update pv2 3"}},
		{"delay", bindertest.WatchFault{Name: "pv1", Action: bindertest.WatchDelay, Delay: 2, Times: 1},
			[]string{"update pv2 1", "update pv1 2", "update pv1 1", "update pv2 2", "update pv1 3", "update pv2 3"}},
		{"reorder", bindertest.WatchFault{Name: "pv1", Action: bindertest.WatchReorder, Times: 1},
			[]string{"update pv2 1", "update pv1 2", "update pv1 1", "update pv2 2", "update pv1 3", "update pv2 3"}},
		{"kind filter", bindertest.WatchFault{Kind: bindertest.KindClaim, Action: bindertest.WatchDrop},
			[]string{"update pv1 1", "update pv2 1", "update pv1 2", "update pv2 2", "update pv1 3", "update pv2 3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newServer(t)
			mustCreateVolume(t, s, newVolume("pv1", "1Gi"))
			mustCreateVolume(t, s, newVolume("pv2", "1Gi"))
			var l eventLog
			defer s.AddEventHandler(bindertest.KindVolume, l.handler())()
			s.InjectWatchFault(tc.fault)
			for i := 1; i <= 3; i++ {
				relabel(t, s, "pv1", fmt.Sprint(i))
				relabel(t, s, "pv2", fmt.Sprint(i))
			}
			got := l.events()[2:] // after the two initial adds
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStallAndFlush(t *testing.T) {
	s, _ := newServer(t)
	mustCreateVolume(t, s, newVolume("pv1", "1Gi"))
	var l eventLog
	defer s.AddEventHandler(bindertest.KindVolume, l.handler())()
	s.InjectWatchFault(bindertest.WatchFault{Action: bindertest.WatchDelay, Delay: 100, Times: 1})
	resume := s.StallWatches(bindertest.KindVolume)
	relabel(t, s, "pv1", "1")
	relabel(t, s, "pv1", "2")
	if got := l.events(); len(got) != 1 {
		t.Errorf("events while stalled = %v, want only the initial add", got)
	}
	if n := s.HeldEvents(); n != 2 {
		t.Errorf("HeldEvents = %d, want 2 (one delayed, one stalled)", n)
	}
	resume()
	resume() // harmless
	s.FlushWatchFaults()
	want := []string{"add pv1 ", "update pv1 2", "update pv1 1"}
	if diff := cmp.Diff(want, l.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if n := s.HeldEvents(); n != 0 {
		t.Errorf("HeldEvents after resume and flush = %d, want 0", n)
	}
}

// TestForceRelistRepairsDroppedEvent: informers that missed a change
// catch up once ForceRelist makes them list again: every one of them, not
// only the first to resume its watch.
func TestForceRelistRepairsDroppedEvent(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s, _ := newServer(t)
	mustCreateVolume(t, s, newVolume("pv1", "1Gi"))
	var infs []toolscache.SharedIndexInformer
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	for range 2 {
		inf := toolscache.NewSharedIndexInformer(s.ListWatch(bindertest.KindVolume), &v1.PersistentVolume{}, 0, toolscache.Indexers{})
		infs = append(infs, inf)
		wg.Go(func() { inf.Run(ctx.Done()) })
		if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			t.Fatal("informer did not sync")
		}
	}
	label := func(inf toolscache.SharedIndexInformer) string {
		o, ok, _ := inf.GetStore().GetByKey("pv1")
		if !ok {
			return "<none>"
		}
		return o.(*v1.PersistentVolume).Labels["n"]
	}
	s.InjectWatchFault(bindertest.WatchFault{Name: "pv1", Action: bindertest.WatchDrop, Times: 1})
	relabel(t, s, "pv1", "lost")
	mustCreateVolume(t, s, newVolume("pv2", "1Gi")) // an event after the lost one
	for i, inf := range infs {
		waitFor(t, func() bool { _, ok, _ := inf.GetStore().GetByKey("pv2"); return ok })
		if got := label(inf); got != "" {
			t.Fatalf("informer %d has label %q before the relist, want the dropped change missing", i, got)
		}
	}
	s.ForceRelist(bindertest.KindVolume)
	for _, inf := range infs {
		waitFor(t, func() bool { return label(inf) == "lost" })
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, wait.ForeverTestTimeout, true,
		func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatalf("condition not met: %v", err)
	}
}

// TestAsyncEvents: with Config.AsyncEvents a write may return before its
// event reaches the handlers; WaitForEvents waits for it.
func TestAsyncEvents(t *testing.T) {
	s, _ := newServerWith(t, bindertest.Config{AsyncEvents: true})
	block := make(chan struct{})
	var l eventLog
	defer s.AddEventHandler(bindertest.KindVolume, toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) { <-block; l.add("add", o) },
	})()
	mustCreateVolume(t, s, newVolume("pv1", "1Gi")) // returns while the handler blocks
	mustCreateVolume(t, s, newVolume("pv2", "1Gi"))
	if got := l.events(); len(got) != 0 {
		t.Fatalf("events before the handler ran = %v", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	if err := s.WaitForEvents(ctx); err == nil {
		t.Errorf("WaitForEvents with a blocked handler = nil, want ctx's error")
	}
	cancel()
	close(block)
	if err := s.WaitForEvents(context.Background()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"add pv1 ", "add pv2 "}, l.events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestHeldEventsSkipLaterSubscribers: events that a stall held back while
// a handler or a watch started are not sent to it when the stall ends:
// its replay or initial list already holds their changes, and an old
// event after it would bring a deleted object back, which a real watch
// never does.
func TestHeldEventsSkipLaterSubscribers(t *testing.T) {
	s, _ := newServer(t)
	mustCreateVolume(t, s, newVolume("pv1", "1Gi"))
	var early, late eventLog
	defer s.AddEventHandler(bindertest.KindVolume, early.handler())()
	resume := s.StallWatches(bindertest.KindVolume)
	relabel(t, s, "pv1", "1")
	if err := s.DeleteVolume(context.Background(), "pv1"); err != nil {
		t.Fatal(err)
	}
	defer s.AddEventHandler(bindertest.KindVolume, late.handler())()
	w, err := s.Watch(context.Background(), bindertest.KindVolume, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	resume()
	mustCreateVolume(t, s, newVolume("pv2", "1Gi"))
	if diff := cmp.Diff([]string{"add pv1 ", "update pv1 1", "delete pv1 1", "add pv2 "}, early.events()); diff != "" {
		t.Errorf("events of the handler added before the stall (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"add pv2 "}, late.events()); diff != "" {
		t.Errorf("events of the handler added during the stall (-want +got):\n%s", diff)
	}
	ev := <-w.ResultChan()
	if pv := ev.Object.(*v1.PersistentVolume); ev.Type != watch.Added || pv.Name != "pv2" {
		t.Errorf("first event of the watch started during the stall = %s %s, want ADDED pv2", ev.Type, pv.Name)
	}
}

// TestSlowWatches: a slow watch delivers every event, in order, lag events
// late; resume sends what it still holds. A stall on a slow kind holds
// everything, and its end leaves the lag behind.
func TestSlowWatches(t *testing.T) {
	s, _ := newServer(t)
	mustCreateVolume(t, s, newVolume("pv1", "1Gi"))
	mustCreateVolume(t, s, newVolume("pv2", "1Gi"))
	var l eventLog
	defer s.AddEventHandler(bindertest.KindVolume, l.handler())()
	resume := s.SlowWatches(bindertest.KindVolume, 2)
	relabel(t, s, "pv1", "1")
	relabel(t, s, "pv2", "1")
	if got := l.events()[2:]; len(got) != 0 {
		t.Errorf("events within the lag = %v, want none", got)
	}
	relabel(t, s, "pv1", "2")
	if diff := cmp.Diff([]string{"update pv1 1"}, l.events()[2:]); diff != "" {
		t.Errorf("events after one more (-want +got):\n%s", diff)
	}
	stall := s.StallWatches(bindertest.KindVolume)
	relabel(t, s, "pv2", "2")
	relabel(t, s, "pv1", "3")
	if n := s.HeldEvents(); n != 4 {
		t.Errorf("HeldEvents while slow and stalled = %d, want 4", n)
	}
	stall()
	if diff := cmp.Diff([]string{"update pv1 1", "update pv2 1", "update pv1 2"}, l.events()[2:]); diff != "" {
		t.Errorf("events after the stall (-want +got):\n%s", diff)
	}
	resume()
	resume() // harmless
	want := []string{"update pv1 1", "update pv2 1", "update pv1 2", "update pv2 2", "update pv1 3"}
	if diff := cmp.Diff(want, l.events()[2:]); diff != "" {
		t.Errorf("events after resume (-want +got):\n%s", diff)
	}
	if n := s.HeldEvents(); n != 0 {
		t.Errorf("HeldEvents after resume = %d, want 0", n)
	}
}
