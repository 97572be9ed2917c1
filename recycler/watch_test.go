package recycler_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/volbind/volbind/recycler"
	"github.com/volbind/volbind/recycler/recyclertest"
)

// TestRecycleWatchReestablished checks that the recycler follows the pod
// across watches the API server ends or breaks, and sees a change made while
// no watch was open.
func TestRecycleWatchReestablished(t *testing.T) {
	unavailable := apierrors.NewServiceUnavailable("watch cache not ready")
	tests := []struct {
		name string
		// disrupt breaks the watch while Recycle waits for the pod.
		disrupt func(h *harness, key types.NamespacedName)
		// wantWatches is the number of WatchPod calls once the pod finished.
		wantWatches int
		// wantTimers are the durations of the timers armed: the timeout,
		// then the pauses between failed watches.
		wantTimers []time.Duration
	}{
		{
			name: "watch ended by the server",
			disrupt: func(h *harness, key types.NamespacedName) {
				h.pods.EndWatches(key.Namespace, key.Name)
				h.waitWatching(key, 2)
			},
			wantWatches: 2,
			wantTimers:  []time.Duration{330 * time.Second},
		},
		{
			// The API server replays the unchanged pod on every new watch;
			// watches that bring nothing new and end at once are paced.
			name: "watch ended three times without news",
			disrupt: func(h *harness, key types.NamespacedName) {
				for i := 2; i <= 3; i++ {
					h.pods.EndWatches(key.Namespace, key.Name)
					h.waitWatching(key, i)
				}
				h.pods.EndWatches(key.Namespace, key.Name)
				h.waitTimers(2)
				if got := h.pods.Calls(recyclertest.Watch); got != 3 {
					h.t.Fatalf("WatchPod calls = %d during the pause, want 3", got)
				}
				h.clock.Step(500 * time.Millisecond)
				h.waitWatching(key, 4)
			},
			wantWatches: 4,
			wantTimers:  []time.Duration{330 * time.Second, 500 * time.Millisecond},
		},
		{
			name: "pod changes between watches: no pause",
			disrupt: func(h *harness, key types.NamespacedName) {
				for i := 2; i <= 4; i++ {
					if err := h.pods.SetStatus(key.Namespace, key.Name, v1.PodStatus{Phase: v1.PodRunning}); err != nil {
						h.t.Fatal(err)
					}
					// The event is buffered before the watch closes: the
					// recycler reads it first.
					h.pods.EndWatches(key.Namespace, key.Name)
					h.waitWatching(key, i)
				}
			},
			wantWatches: 4,
			wantTimers:  []time.Duration{330 * time.Second},
		},
		{
			name: "long-lived watches: no pause",
			disrupt: func(h *harness, key types.NamespacedName) {
				for i := 2; i <= 4; i++ {
					h.clock.Step(30 * time.Second)
					h.pods.EndWatches(key.Namespace, key.Name)
					h.waitWatching(key, i)
				}
			},
			wantWatches: 4,
			wantTimers:  []time.Duration{330 * time.Second},
		},
		{
			name: "error event (resource version too old)",
			disrupt: func(h *harness, key types.NamespacedName) {
				h.pods.SendWatchError(key.Namespace, key.Name, &apierrors.NewResourceExpired("too old resource version").ErrStatus)
				h.waitWatching(key, 2)
			},
			wantWatches: 2,
			wantTimers:  []time.Duration{330 * time.Second},
		},
		{
			name: "re-watch fails once: retried at once",
			disrupt: func(h *harness, key types.NamespacedName) {
				h.pods.FailNext(recyclertest.Watch, unavailable)
				h.pods.EndWatches(key.Namespace, key.Name)
				h.waitWatching(key, 3)
			},
			wantWatches: 3,
			wantTimers:  []time.Duration{330 * time.Second},
		},
		{
			// The pod finishes while no watch is open: the next watch (or
			// the read after it) must still see it.
			name: "re-watch keeps failing: doubling pauses, pod finishes meanwhile",
			disrupt: func(h *harness, key types.NamespacedName) {
				for range 3 {
					h.pods.FailNext(recyclertest.Watch, unavailable)
				}
				h.pods.EndWatches(key.Namespace, key.Name)
				h.waitTimers(2)
				h.clock.Step(500 * time.Millisecond)
				h.waitTimers(3)
				if got := h.pods.Watches(key.Namespace, key.Name); got != 0 {
					h.t.Fatalf("%d watches open, want none", got)
				}
				if err := h.pods.Finish(key.Namespace, key.Name, v1.PodSucceeded, "", ""); err != nil {
					h.t.Fatal(err)
				}
				h.clock.Step(time.Second)
			},
			wantWatches: 5,
			wantTimers:  []time.Duration{330 * time.Second, 500 * time.Millisecond, time.Second},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, recycler.Config{})
			pv := nfsPV("pv1", "1Gi")
			key := podKey(pv)
			ch := h.start(context.Background(), pv)
			h.waitWatching(key, 1)
			tc.disrupt(h, key)
			// A no-op if the pod already finished.
			_ = h.pods.Finish(key.Namespace, key.Name, v1.PodSucceeded, "", "")
			if err := result(t, ch); err != nil {
				t.Fatalf("Recycle() = %v, want nil", err)
			}
			if got := h.pods.Calls(recyclertest.Watch); got != tc.wantWatches {
				t.Errorf("WatchPod calls = %d, want %d", got, tc.wantWatches)
			}
			if diff := cmp.Diff(tc.wantTimers, h.clock.Timers()); diff != "" {
				t.Errorf("timers (-want +got):\n%s", diff)
			}
			if got := h.pods.Len(); got != 0 {
				t.Errorf("%d pods left, want 0", got)
			}
			if got := h.pods.Watches(key.Namespace, key.Name); got != 0 {
				t.Errorf("%d watches left open, want 0", got)
			}
		})
	}
}

// TestRecycleTimeoutReportsWatchError checks that a timeout reached while
// the watch was failing carries the last watch error.
func TestRecycleTimeoutReportsWatchError(t *testing.T) {
	h := newHarness(t, recycler.Config{})
	pv := nfsPV("pv1", "0")
	key := podKey(pv)
	ch := h.start(context.Background(), pv)
	h.waitWatching(key, 1)
	h.pods.SendWatchError(key.Namespace, key.Name, &apierrors.NewResourceExpired("too old resource version").ErrStatus)
	h.waitWatching(key, 2)
	h.clock.Step(recycler.DefaultNFSMinimumTimeout)
	err := result(t, ch)
	var te *recycler.TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("Recycle() = %v, want a *TimeoutError", err)
	}
	if !apierrors.IsResourceExpired(te.LastError) || !apierrors.IsResourceExpired(err) {
		t.Errorf("TimeoutError.LastError = %v, want the expired watch's error", te.LastError)
	}
	if got := h.pods.Len(); got != 0 {
		t.Errorf("%d pods left, want 0", got)
	}
}
