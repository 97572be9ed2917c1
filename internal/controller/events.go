package controller

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
)

// eventDrainTimeout bounds how long a stopping controller waits for the
// events it recorded to be written. An event goes out after the write it
// reports (a claim's provisioner annotations, say); a controller stopped in
// between, by a rollout or a lost Lease, would drop it, as
// kube-controller-manager does. The events queued at the stop take
// milliseconds; the bound is for an API server that does not answer.
const eventDrainTimeout = 5 * time.Second

// markerReason is the reason of the marker event that stop records; the
// sink recognizes it by its object's UID and never writes it.
const markerReason = "VolbindEventDrainMarker"

// eventRecording is the program's event broadcaster with a sink that lets
// a stopping controller wait for the events recorded before the stop.
//
// The broadcaster hands its events to the sink on one goroutine, in the
// order they were recorded. So stop records a marker event, and when the
// sink reaches the marker, every event recorded before it has been
// written, or given up after client-go's retries.
type eventRecording struct {
	broadcaster record.EventBroadcaster
	recorder    record.EventRecorder
	sink        *markerSink
}

// startEventRecording starts a broadcaster writing to sink, with events
// from component "volbind". Its life is not ctx's (ctx gives the logger):
// stop ends it, once the events recorded before it are written.
func startEventRecording(ctx context.Context, sink record.EventSink) *eventRecording {
	r := &eventRecording{
		broadcaster: record.NewBroadcaster(record.WithContext(context.WithoutCancel(ctx))),
		sink: &markerSink{EventSink: sink, reached: make(chan struct{}),
			marker: &v1.ObjectReference{Kind: "Event", Namespace: v1.NamespaceDefault, Name: "volbind-event-drain", UID: uuid.NewUUID()}},
	}
	r.broadcaster.StartRecordingToSink(r.sink)
	r.recorder = r.broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: "volbind"})
	return r
}

// stop waits up to timeout, on clk, until the events recorded so far are
// written, then shuts the broadcaster down. It reports whether they were
// all written in time. Record nothing once stop is called.
func (r *eventRecording) stop(clk clock.Clock, timeout time.Duration) bool {
	defer r.broadcaster.Shutdown()
	r.recorder.Event(r.sink.marker, v1.EventTypeNormal, markerReason, "every event recorded before this one has been written")
	select {
	case <-r.sink.reached:
		return true
	case <-clk.After(timeout):
		return false
	}
}

// markerSink is sink, except that it closes reached instead of writing the
// event about marker.
type markerSink struct {
	record.EventSink
	// marker is the object the marker event is about.
	marker  *v1.ObjectReference
	reached chan struct{}
	once    sync.Once
}

// Create writes e, unless e is the marker event.
func (s *markerSink) Create(e *v1.Event) (*v1.Event, error) {
	if e.InvolvedObject.UID == s.marker.UID {
		s.once.Do(func() { close(s.reached) })
		return e, nil
	}
	return s.EventSink.Create(e)
}
