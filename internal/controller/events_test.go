package controller

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	testingclock "k8s.io/utils/clock/testing"
)

// heldSink is an event sink whose writes wait until release is closed;
// each write is sent on started first, and noted in order when it ends.
type heldSink struct {
	started chan *v1.Event
	release chan struct{}
	order   *order
}

// order is what happened, in order.
type order struct {
	mu   sync.Mutex
	seen []string
}

func (o *order) note(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen = append(o.seen, s)
}

func (o *order) get() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.seen)
}

func newHeldSink() *heldSink {
	return &heldSink{started: make(chan *v1.Event, 10), release: make(chan struct{}), order: &order{}}
}

func (s *heldSink) write(e *v1.Event) (*v1.Event, error) {
	s.started <- e
	<-s.release
	s.order.note("wrote " + e.Reason)
	return e, nil
}

func (s *heldSink) Create(e *v1.Event) (*v1.Event, error)          { return s.write(e) }
func (s *heldSink) Update(e *v1.Event) (*v1.Event, error)          { return s.write(e) }
func (s *heldSink) Patch(e *v1.Event, _ []byte) (*v1.Event, error) { return s.write(e) }

// recordHeld records an event about a claim on r and waits until its
// write has started on sink.
func recordHeld(t *testing.T, r *eventRecording, sink *heldSink) {
	t.Helper()
	claim := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data", UID: "uid-data"}}
	r.recorder.Event(claim, v1.EventTypeNormal, "ExternalProvisioning", "waiting")
	select {
	case e := <-sink.started:
		if e.InvolvedObject.Name != "data" || e.Reason != "ExternalProvisioning" {
			t.Fatalf("sink got %s %s, want the claim's ExternalProvisioning event", e.InvolvedObject.Name, e.Reason)
		}
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("the event's write did not start")
	}
}

// TestEventStopWaitsForRecorded: stop returns only after the event
// recorded before it is written, and never writes its marker.
func TestEventStopWaitsForRecorded(t *testing.T) {
	sink := newHeldSink()
	r := startEventRecording(context.Background(), sink)
	recordHeld(t, r, sink)
	clk := testingclock.NewFakeClock(time.Now())
	done := make(chan bool)
	go func() {
		ok := r.stop(clk, eventDrainTimeout)
		sink.order.note("stop returned")
		done <- ok
	}()
	// The marker follows the held event on the sink's one goroutine, so
	// stop cannot have returned while that write is held.
	if err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		return clk.HasWaiters(), nil
	}); err != nil {
		t.Fatal("stop does not wait on the clock")
	}
	select {
	case <-done:
		t.Fatal("stop returned while the recorded event's write was held")
	default:
	}
	close(sink.release)
	select {
	case ok := <-done:
		if !ok {
			t.Error("stop = false, want true: the event was written")
		}
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("stop did not return after the event was written")
	}
	if got, want := sink.order.get(), []string{"wrote ExternalProvisioning", "stop returned"}; !slices.Equal(got, want) {
		t.Errorf("order = %q, want %q", got, want)
	}
	select {
	case e := <-sink.started:
		t.Errorf("sink wrote %s %s after the claim's event; the marker must not be written", e.InvolvedObject.Name, e.Reason)
	default:
	}
}

// TestEventStopGivesUp: with a write that never ends, stop returns false
// once the timeout has passed on its clock.
func TestEventStopGivesUp(t *testing.T) {
	sink := newHeldSink()
	defer close(sink.release)
	r := startEventRecording(context.Background(), sink)
	recordHeld(t, r, sink)
	clk := testingclock.NewFakeClock(time.Now())
	done := make(chan bool)
	go func() { done <- r.stop(clk, eventDrainTimeout) }()
	if err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		return clk.HasWaiters(), nil
	}); err != nil {
		t.Fatal("stop does not wait on the clock")
	}
	clk.Step(eventDrainTimeout - time.Millisecond)
	select {
	case <-done:
		t.Fatal("stop returned before its timeout")
	default:
	}
	clk.Step(time.Millisecond)
	select {
	case ok := <-done:
		if ok {
			t.Error("stop = true, want false: the write never ended")
		}
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("stop did not return at its timeout")
	}
}
