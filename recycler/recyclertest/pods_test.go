package recyclertest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/volbind/volbind/recycler/recyclertest"
)

func newPod(name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
}

// event is a watch event reduced to what the tests compare.
type event struct {
	Type  watch.EventType
	Name  string
	Phase v1.PodPhase
}

// drain reads n events from w.
func drain(t *testing.T, w watch.Interface, n int) []event {
	t.Helper()
	var got []event
	for range n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed after %d events, want %d", len(got), n)
			}
			e := event{Type: ev.Type}
			if pod, ok := ev.Object.(*v1.Pod); ok {
				e.Name, e.Phase = pod.Name, pod.Status.Phase
			}
			got = append(got, e)
		case <-time.After(wait.ForeverTestTimeout):
			t.Fatalf("got %d events, want %d", len(got), n)
		}
	}
	return got
}

// closed reports whether w's channel is closed with no event left.
func closed(t *testing.T, w watch.Interface) bool {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if ok {
			t.Fatalf("unexpected event %v", ev.Type)
		}
		return true
	default:
		return false
	}
}

func TestPodsCRUDAndWatch(t *testing.T) {
	ctx := context.Background()
	p := recyclertest.New()

	w, err := p.WatchPod(ctx, "ns", "a")
	if err != nil {
		t.Fatal(err)
	}
	created, err := p.CreatePod(ctx, newPod("a"))
	if err != nil {
		t.Fatal(err)
	}
	if created.UID == "" || created.ResourceVersion == "" {
		t.Errorf("created pod has UID %q, resourceVersion %q; want both set", created.UID, created.ResourceVersion)
	}
	if _, err := p.CreatePod(ctx, newPod("a")); !apierrors.IsAlreadyExists(err) {
		t.Errorf("second CreatePod() = %v, want AlreadyExists", err)
	}
	if _, err := p.CreatePod(ctx, newPod("")); !apierrors.IsBadRequest(err) {
		t.Errorf("CreatePod(no name) = %v, want BadRequest", err)
	}
	if err := p.Finish("ns", "a", v1.PodSucceeded, "", ""); err != nil {
		t.Fatal(err)
	}
	got, err := p.GetPod(ctx, "ns", "a")
	if err != nil || got.Status.Phase != v1.PodSucceeded {
		t.Fatalf("GetPod() = %v, %v, want the succeeded pod", got, err)
	}
	// A second watch starts with the current state, as an API server's does.
	w2, err := p.WatchPod(ctx, "ns", "a")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.DeletePod(ctx, "ns", "a"); err != nil {
		t.Fatal(err)
	}
	if err := p.DeletePod(ctx, "ns", "a"); !apierrors.IsNotFound(err) {
		t.Errorf("second DeletePod() = %v, want NotFound", err)
	}
	if _, err := p.GetPod(ctx, "ns", "a"); !apierrors.IsNotFound(err) {
		t.Errorf("GetPod(deleted) = %v, want NotFound", err)
	}

	want := []event{{watch.Added, "a", ""}, {watch.Modified, "a", v1.PodSucceeded}, {watch.Deleted, "a", v1.PodSucceeded}}
	if diff := cmp.Diff(want, drain(t, w, 3)); diff != "" {
		t.Errorf("first watch (-want +got):\n%s", diff)
	}
	want2 := []event{{watch.Added, "a", v1.PodSucceeded}, {watch.Deleted, "a", v1.PodSucceeded}}
	if diff := cmp.Diff(want2, drain(t, w2, 2)); diff != "" {
		t.Errorf("second watch (-want +got):\n%s", diff)
	}
	if got := p.Watches("ns", "a"); got != 2 {
		t.Errorf("Watches() = %d, want 2", got)
	}
	w.Stop()
	w.Stop() // idempotent
	w2.Stop()
	if !closed(t, w) || p.Watches("ns", "a") != 0 {
		t.Errorf("stopped watches still open")
	}
	wantCalls := map[recyclertest.Verb]int{recyclertest.Create: 3, recyclertest.Get: 2, recyclertest.Delete: 2, recyclertest.Watch: 2}
	for v, n := range wantCalls {
		if got := p.Calls(v); got != n {
			t.Errorf("Calls(%s) = %d, want %d", v, got, n)
		}
	}
}

func TestPodsFaults(t *testing.T) {
	ctx := context.Background()
	p := recyclertest.New()
	boom := errors.New("boom")
	p.FailNext(recyclertest.Create, boom)
	p.FailNext(recyclertest.Create, apierrors.NewTimeoutError("slow", 1))
	if _, err := p.CreatePod(ctx, newPod("a")); !errors.Is(err, boom) {
		t.Errorf("CreatePod() = %v, want boom", err)
	}
	if _, err := p.CreatePod(ctx, newPod("a")); !apierrors.IsTimeout(err) {
		t.Errorf("CreatePod() = %v, want the queued Timeout", err)
	}
	if _, err := p.CreatePod(ctx, newPod("a")); err != nil {
		t.Errorf("CreatePod() = %v, want the queue drained", err)
	}
	if got := p.Calls(recyclertest.Create); got != 3 {
		t.Errorf("Calls(create) = %d, want 3 (failed calls count)", got)
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := p.GetPod(cctx, "ns", "a"); !errors.Is(err, context.Canceled) {
		t.Errorf("GetPod(cancelled ctx) = %v, want context.Canceled", err)
	}
	if err := p.Add(newPod("a")); err == nil {
		t.Error("Add(existing) = nil, want an error")
	}
	if err := p.SetStatus("ns", "missing", v1.PodStatus{}); err == nil {
		t.Error("SetStatus(missing) = nil, want an error")
	}
	if err := p.Remove("ns", "missing"); err == nil {
		t.Error("Remove(missing) = nil, want an error")
	}
}

func TestPodsWatchEnds(t *testing.T) {
	p := recyclertest.New()
	if err := p.Add(newPod("a")); err != nil {
		t.Fatal(err)
	}

	t.Run("EndWatches", func(t *testing.T) {
		w, _ := p.WatchPod(context.Background(), "ns", "a")
		drain(t, w, 1)
		if n := p.EndWatches("ns", "a"); n != 1 {
			t.Errorf("EndWatches() = %d, want 1", n)
		}
		if !closed(t, w) {
			t.Error("watch still open")
		}
	})
	t.Run("SendWatchError", func(t *testing.T) {
		w, _ := p.WatchPod(context.Background(), "ns", "a")
		defer w.Stop()
		drain(t, w, 1)
		gone := apierrors.NewResourceExpired("too old").ErrStatus
		if n := p.SendWatchError("ns", "a", &gone); n != 1 {
			t.Errorf("SendWatchError() = %d, want 1", n)
		}
		ev := <-w.ResultChan()
		if ev.Type != watch.Error || !apierrors.IsResourceExpired(apierrors.FromObject(ev.Object)) {
			t.Errorf("event = %v %v, want an Expired error", ev.Type, ev.Object)
		}
	})
	t.Run("ctx done", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		w, _ := p.WatchPod(ctx, "ns", "a")
		drain(t, w, 1)
		cancel()
		err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, wait.ForeverTestTimeout, true,
			func(context.Context) (bool, error) { return p.Watches("ns", "a") == 0, nil })
		if err != nil || !closed(t, w) {
			t.Errorf("watch not ended by its ctx: %v", err)
		}
	})
	t.Run("unread events overflow", func(t *testing.T) {
		w, _ := p.WatchPod(context.Background(), "ns", "a")
		defer w.Stop()
		for range 100 {
			if err := p.SetStatus("ns", "a", v1.PodStatus{Phase: v1.PodRunning}); err != nil {
				t.Fatal(err)
			}
		}
		if got := p.Watches("ns", "a"); got != 0 {
			t.Errorf("Watches() = %d after overflow, want 0", got)
		}
		n := 0
		for range w.ResultChan() {
			n++
		}
		if n != 64 {
			t.Errorf("delivered %d events before closing, want 64", n)
		}
	})
}

func TestPodsKubelet(t *testing.T) {
	ctx := context.Background()
	p := recyclertest.New()
	p.FinishOnCreate(&v1.PodStatus{Phase: v1.PodFailed, Reason: "Error"})
	var hooked []string
	p.OnCreate(func(pod *v1.Pod) {
		hooked = append(hooked, pod.Name+"="+string(pod.Status.Phase))
		// The hook runs without the lock: it may call back.
		if _, err := p.GetPod(ctx, pod.Namespace, pod.Name); err != nil {
			t.Errorf("GetPod() in hook = %v", err)
		}
	})
	created, err := p.CreatePod(ctx, newPod("a"))
	if err != nil {
		t.Fatal(err)
	}
	if created.Status.Phase != "" {
		t.Errorf("CreatePod() returned phase %q, want the pod as created", created.Status.Phase)
	}
	stored, ok := p.Pod("ns", "a")
	if !ok || stored.Status.Phase != v1.PodFailed || stored.Status.Reason != "Error" {
		t.Errorf("Pod() = %v, %v, want the FinishOnCreate status", stored, ok)
	}
	p.FinishOnCreate(nil)
	p.OnCreate(nil)
	if _, err := p.CreatePod(ctx, newPod("b")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a="}, hooked); diff != "" {
		t.Errorf("hook calls (-want +got):\n%s", diff)
	}
	if b, _ := p.Pod("ns", "b"); b.Status.Phase != "" {
		t.Errorf("pod b phase = %q after FinishOnCreate(nil), want none", b.Status.Phase)
	}
	if got := p.Len(); got != 2 {
		t.Errorf("Len() = %d, want 2", got)
	}
}
