package bindertest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/binder/bindertest"
)

// next receives one event or fails after a deadline.
func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case e, ok := <-w.ResultChan():
		if !ok {
			t.Fatalf("watch closed, want an event")
		}
		return e
	case <-time.After(wait30s):
		t.Fatalf("no watch event within %v", wait30s)
	}
	return watch.Event{}
}

const wait30s = 30 * time.Second

// describe renders an event as "TYPE name rv" (bookmarks: "BOOKMARK rv").
func describe(e watch.Event) string {
	o := e.Object.(metav1.Object)
	if e.Type == watch.Bookmark {
		return fmt.Sprintf("%s %s %v", e.Type, o.GetResourceVersion(), o.GetAnnotations())
	}
	return fmt.Sprintf("%s %s", e.Type, o.GetName())
}

// collect receives n events.
func collect(t *testing.T, w watch.Interface, n int) []string {
	t.Helper()
	out := make([]string, 0, n)
	for range n {
		out = append(out, describe(next(t, w)))
	}
	return out
}

func TestWatch(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// opts may refer to the resourceVersion after the setup writes.
		opts func(setupRV string) metav1.ListOptions
		want []string
	}{
		{
			name: "from now with initial state",
			opts: func(string) metav1.ListOptions { return metav1.ListOptions{} },
			want: []string{"ADDED pv-a", "ADDED pv-b", "MODIFIED pv-a", "DELETED pv-b", "ADDED pv-c"},
		},
		{
			name: "resource version 0",
			opts: func(string) metav1.ListOptions { return metav1.ListOptions{ResourceVersion: "0"} },
			want: []string{"ADDED pv-a", "ADDED pv-b", "MODIFIED pv-a", "DELETED pv-b", "ADDED pv-c"},
		},
		{
			name: "resume from the setup",
			opts: func(rv string) metav1.ListOptions { return metav1.ListOptions{ResourceVersion: rv} },
			want: []string{"MODIFIED pv-a", "DELETED pv-b", "ADDED pv-c"},
		},
		{
			name: "resume from the start replays history",
			opts: func(string) metav1.ListOptions { return metav1.ListOptions{ResourceVersion: "1"} },
			want: []string{"ADDED pv-b", "MODIFIED pv-a", "DELETED pv-b", "ADDED pv-c"},
		},
		{
			name: "label selector",
			opts: func(string) metav1.ListOptions { return metav1.ListOptions{LabelSelector: "tier=fast"} },
			// pv-a gets the label (Added), pv-c is created with it.
			want: []string{"ADDED pv-a", "ADDED pv-c"},
		},
		{
			name: "field selector",
			opts: func(string) metav1.ListOptions { return metav1.ListOptions{FieldSelector: "metadata.name=pv-b"} },
			want: []string{"ADDED pv-b", "DELETED pv-b"},
		},
		{
			name: "streaming list",
			opts: func(string) metav1.ListOptions {
				return metav1.ListOptions{SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true,
					ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}
			},
			want: []string{"ADDED pv-a", "ADDED pv-b", "BOOKMARK 3 map[k8s.io/initial-events-end:true]",
				"MODIFIED pv-a", "DELETED pv-b", "ADDED pv-c"},
		},
		{
			name: "no initial events",
			opts: func(string) metav1.ListOptions {
				return metav1.ListOptions{SendInitialEvents: ptr.To(false), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}
			},
			want: []string{"MODIFIED pv-a", "DELETED pv-b", "ADDED pv-c"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newServer(t)
			mustCreateVolume(t, s, newVolume("pv-a", "1Gi"))
			mustCreateClaim(t, s, newClaim("ns", "c", "1Gi")) // other kind
			mustCreateVolume(t, s, newVolume("pv-b", "1Gi"))
			w, err := s.Watch(ctx, bindertest.KindVolume, tc.opts(s.ResourceVersion()))
			if err != nil {
				t.Fatalf("Watch = %v", err)
			}
			defer w.Stop()
			pv, _ := s.GetVolume(ctx, "pv-a")
			pv.Labels = map[string]string{"tier": "fast"}
			if _, err := s.UpdateVolume(ctx, pv); err != nil {
				t.Fatalf("UpdateVolume = %v", err)
			}
			if err := s.DeleteVolume(ctx, "pv-b"); err != nil {
				t.Fatalf("DeleteVolume = %v", err)
			}
			c := newVolume("pv-c", "1Gi")
			c.Labels = map[string]string{"tier": "fast"}
			mustCreateVolume(t, s, c)
			if diff := cmp.Diff(tc.want, collect(t, w, len(tc.want))); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWatchSelectorTransitions checks that a watch with a label selector
// sees an object that starts to match as Added and one that stops as
// Deleted, both from a watch open during the updates and from one that
// resumes from the history after them (which keeps only the labels of the
// version before each update).
func TestWatchSelectorTransitions(t *testing.T) {
	for _, replayed := range []bool{false, true} {
		t.Run(fmt.Sprintf("replayed=%t", replayed), func(t *testing.T) {
			ctx := context.Background()
			s, _ := newServer(t)
			pv := mustCreateVolume(t, s, newVolume("pv", "1Gi"))
			opts := metav1.ListOptions{LabelSelector: "tier=fast", ResourceVersion: pv.ResourceVersion}
			open := func() watch.Interface {
				w, err := s.Watch(ctx, bindertest.KindVolume, opts)
				if err != nil {
					t.Fatalf("Watch = %v", err)
				}
				t.Cleanup(w.Stop)
				return w
			}
			var w watch.Interface
			if !replayed {
				w = open()
			}
			var err error
			for _, labels := range []map[string]string{{"tier": "fast"}, {"tier": "fast", "x": "y"}, {"tier": "slow"}} {
				pv.Labels = labels
				if pv, err = s.UpdateVolume(ctx, pv); err != nil {
					t.Fatalf("UpdateVolume = %v", err)
				}
			}
			if replayed {
				w = open()
			}
			want := []string{"ADDED pv", "MODIFIED pv", "DELETED pv"}
			if diff := cmp.Diff(want, collect(t, w, len(want))); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWatchErrors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		kind bindertest.Kind
		opts metav1.ListOptions
		is   func(error) bool
	}{
		{"expired", bindertest.KindVolume, metav1.ListOptions{ResourceVersion: "1"}, apierrors.IsResourceExpired},
		{"too large", bindertest.KindVolume, metav1.ListOptions{ResourceVersion: "99"}, isTooLargeResourceVersion},
		{"bad resource version", bindertest.KindVolume, metav1.ListOptions{ResourceVersion: "x"}, apierrors.IsBadRequest},
		{"bad label selector", bindertest.KindVolume, metav1.ListOptions{LabelSelector: "a in ("}, apierrors.IsBadRequest},
		{"unsupported field", bindertest.KindVolume, metav1.ListOptions{FieldSelector: "spec.x=y"}, apierrors.IsBadRequest},
		{"invalid kind", bindertest.Kind(99), metav1.ListOptions{}, apierrors.IsBadRequest},
		{"initial events without match", bindertest.KindVolume, metav1.ListOptions{SendInitialEvents: ptr.To(true)}, apierrors.IsBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newServerWith(t, bindertest.Config{History: 2})
			for i := range 5 {
				mustCreateVolume(t, s, newVolume(fmt.Sprintf("pv-%d", i), "1Gi"))
			}
			w, err := s.Watch(ctx, tc.kind, tc.opts)
			if err == nil {
				w.Stop()
			}
			if !tc.is(err) {
				t.Errorf("Watch = %v, want the other error", err)
			}
		})
	}
	// Within the history, a watch resumes.
	s, _ := newServerWith(t, bindertest.Config{History: 2})
	for i := range 5 {
		mustCreateVolume(t, s, newVolume(fmt.Sprintf("pv-%d", i), "1Gi"))
	}
	w, err := s.Watch(ctx, bindertest.KindVolume, metav1.ListOptions{ResourceVersion: "3"})
	if err != nil {
		t.Fatalf("Watch from the oldest kept resourceVersion = %v", err)
	}
	defer w.Stop()
	if diff := cmp.Diff([]string{"ADDED pv-3", "ADDED pv-4"}, collect(t, w, 2)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestWatchEnds(t *testing.T) {
	tests := []struct {
		name string
		end  func(w watch.Interface, cancel context.CancelFunc)
	}{
		{"stop", func(w watch.Interface, _ context.CancelFunc) { w.Stop(); w.Stop() }},
		{"context", func(_ watch.Interface, cancel context.CancelFunc) { cancel() }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newServer(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			mustCreateVolume(t, s, newVolume("pv", "1Gi"))
			w, err := s.Watch(ctx, bindertest.KindVolume, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("Watch = %v", err)
			}
			defer w.Stop()
			tc.end(w, cancel)
			// The channel closes, possibly after the pending event.
			deadline := time.After(wait30s)
			for {
				select {
				case _, ok := <-w.ResultChan():
					if !ok {
						return
					}
				case <-deadline:
					t.Fatalf("watch channel not closed")
				}
			}
		})
	}
}

func TestWatchEventsAreCopies(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t)
	w, err := s.Watch(ctx, bindertest.KindVolume, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("Watch = %v", err)
	}
	defer w.Stop()
	mustCreateVolume(t, s, newVolume("pv", "1Gi"))
	e := next(t, w)
	e.Object.(*v1.PersistentVolume).Labels = map[string]string{"mutated": "yes"}
	got, _ := s.GetVolume(ctx, "pv")
	if got.Labels["mutated"] != "" {
		t.Errorf("mutating a watch event's object changed the stored volume")
	}
}

// isTooLargeResourceVersion is k8s.io/apiserver's storage predicate.
func isTooLargeResourceVersion(err error) bool {
	return apierrors.IsTimeout(err) && apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge)
}

func TestWatchWithoutHistory(t *testing.T) {
	ctx := context.Background()
	s, _ := newServerWith(t, bindertest.Config{History: -1})
	mustCreateVolume(t, s, newVolume("pv-0", "1Gi"))
	mustCreateVolume(t, s, newVolume("pv-1", "1Gi"))
	if _, err := s.Watch(ctx, bindertest.KindVolume, metav1.ListOptions{ResourceVersion: "1"}); !apierrors.IsResourceExpired(err) {
		t.Errorf("Watch from an old resourceVersion = %v, want Expired", err)
	}
	w, err := s.Watch(ctx, bindertest.KindVolume, metav1.ListOptions{ResourceVersion: s.ResourceVersion()})
	if err != nil {
		t.Fatalf("Watch from the current resourceVersion = %v", err)
	}
	defer w.Stop()
	mustCreateVolume(t, s, newVolume("pv-2", "1Gi"))
	if diff := cmp.Diff([]string{"ADDED pv-2"}, collect(t, w, 1)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
