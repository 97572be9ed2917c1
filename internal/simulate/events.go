package simulate

import (
	"fmt"
	"maps"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

// eventLog is the event recorder of a simulation: it keeps, for every
// object, the last event the Binder emitted about it, so the report can say
// why a claim stayed pending. It also counts events by reason.
type eventLog struct {
	// mu guards the fields below.
	mu       sync.Mutex
	last     map[string]recordedEvent // by kind/namespace/name
	byReason map[string]int
}

// recordedEvent is one event of the Binder.
type recordedEvent struct {
	Type, Reason, Message string
}

var _ record.EventRecorder = (*eventLog)(nil)

func newEventLog() *eventLog {
	return &eventLog{last: map[string]recordedEvent{}, byReason: map[string]int{}}
}

func eventKey(obj runtime.Object) string {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if kind == "" {
		switch obj.(type) {
		case *v1.PersistentVolumeClaim:
			kind = "PersistentVolumeClaim"
		case *v1.PersistentVolume:
			kind = "PersistentVolume"
		}
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return kind
	}
	return kind + "/" + m.GetNamespace() + "/" + m.GetName()
}

// Event records an event.
func (l *eventLog) Event(obj runtime.Object, eventtype, reason, message string) {
	key := eventKey(obj)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last[key] = recordedEvent{Type: eventtype, Reason: reason, Message: message}
	l.byReason[reason]++
}

// Eventf records an event with a formatted message.
func (l *eventLog) Eventf(obj runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	l.Event(obj, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

// AnnotatedEventf records an event; annotations are not kept.
func (l *eventLog) AnnotatedEventf(obj runtime.Object, _ map[string]string, eventtype, reason, messageFmt string, args ...any) {
	l.Eventf(obj, eventtype, reason, messageFmt, args...)
}

// counts returns the number of events by reason.
func (l *eventLog) counts() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.byReason)
}

// lastFor returns the last event about a volume or claim.
func (l *eventLog) lastFor(obj runtime.Object) (recordedEvent, bool) {
	key := eventKey(obj)
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.last[key]
	return e, ok
}
