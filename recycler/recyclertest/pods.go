package recyclertest

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/volbind/volbind/recycler"
)

// Verb names a PodAPI call, for Calls and FailNext.
type Verb string

// The PodAPI calls.
const (
	Create Verb = "create"
	Get    Verb = "get"
	Delete Verb = "delete"
	Watch  Verb = "watch"
)

// watchBuffer is how many events an unread watch holds before the fake ends
// it, as an API server ends a watcher that does not keep up.
const watchBuffer = 64

var podsResource = v1.Resource("pods")

// Pods is an in-memory PodAPI. Every method is safe for concurrent use;
// objects passed in are copied and objects returned are copies the caller
// owns. A call whose ctx is done fails with ctx's error, as a real client's
// would.
type Pods struct {
	// mu guards every field below.
	mu      sync.Mutex
	pods    map[types.NamespacedName]*v1.Pod
	watches map[types.NamespacedName][]*podWatch
	// seq numbers UIDs and resourceVersions.
	seq    int
	calls  map[Verb]int
	faults map[Verb][]error
	// finish is the status given to every created pod, nil for none.
	finish *v1.PodStatus
	// onCreate is called after every successful create, nil for none.
	onCreate func(*v1.Pod)
}

var _ recycler.PodAPI = (*Pods)(nil)

// New returns an empty fake.
func New() *Pods {
	return &Pods{
		pods:    make(map[types.NamespacedName]*v1.Pod),
		watches: make(map[types.NamespacedName][]*podWatch),
		calls:   make(map[Verb]int),
		faults:  make(map[Verb][]error),
	}
}

func keyOf(namespace, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: namespace, Name: name}
}

// beginLocked counts a call and returns the error it must fail with, if any.
// Called with p.mu held.
func (p *Pods) beginLocked(ctx context.Context, verb Verb) error {
	p.calls[verb]++
	if err := ctx.Err(); err != nil {
		return err
	}
	if q := p.faults[verb]; len(q) > 0 {
		p.faults[verb] = q[1:]
		return q[0]
	}
	return nil
}

// storeLocked gives pod a UID (if it has none) and the next
// resourceVersion, stores a copy and returns the stored pod.
func (p *Pods) storeLocked(pod *v1.Pod) *v1.Pod {
	p.seq++
	stored := pod.DeepCopy()
	if stored.UID == "" {
		stored.UID = types.UID("uid-" + strconv.Itoa(p.seq))
	}
	stored.ResourceVersion = strconv.Itoa(p.seq)
	p.pods[keyOf(stored.Namespace, stored.Name)] = stored
	return stored
}

// CreatePod stores pod, or fails with AlreadyExists when the name is taken.
// After storing it applies FinishOnCreate's status, then calls the OnCreate
// hook with the lock released.
func (p *Pods) CreatePod(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	created, hook, err := p.createPod(ctx, pod)
	if err != nil {
		return nil, err
	}
	if hook != nil {
		hook(created.DeepCopy())
	}
	return created, nil
}

func (p *Pods) createPod(ctx context.Context, pod *v1.Pod) (*v1.Pod, func(*v1.Pod), error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.beginLocked(ctx, Create); err != nil {
		return nil, nil, err
	}
	if pod == nil || pod.Name == "" {
		return nil, nil, apierrors.NewBadRequest("pod or its name is empty")
	}
	key := keyOf(pod.Namespace, pod.Name)
	if _, ok := p.pods[key]; ok {
		return nil, nil, apierrors.NewAlreadyExists(podsResource, pod.Name)
	}
	stored := p.storeLocked(pod)
	p.sendLocked(key, watch.Added, stored)
	created := stored.DeepCopy()
	if p.finish != nil {
		stored = stored.DeepCopy()
		stored.Status = *p.finish.DeepCopy()
		stored = p.storeLocked(stored)
		p.sendLocked(key, watch.Modified, stored)
	}
	return created, p.onCreate, nil
}

// GetPod returns the pod or NotFound.
func (p *Pods) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.beginLocked(ctx, Get); err != nil {
		return nil, err
	}
	pod, ok := p.pods[keyOf(namespace, name)]
	if !ok {
		return nil, apierrors.NewNotFound(podsResource, name)
	}
	return pod.DeepCopy(), nil
}

// DeletePod removes the pod at once (no grace period) or returns NotFound.
func (p *Pods) DeletePod(ctx context.Context, namespace, name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.beginLocked(ctx, Delete); err != nil {
		return err
	}
	key := keyOf(namespace, name)
	pod, ok := p.pods[key]
	if !ok {
		return apierrors.NewNotFound(podsResource, name)
	}
	delete(p.pods, key)
	p.sendLocked(key, watch.Deleted, pod)
	return nil
}

// WatchPod returns a watch of the pod. Like an API server's watch without
// a resourceVersion it first sends the pod's current state, if the pod
// exists, as an Added event, then every change. It ends when stopped, when
// ctx is done, when EndWatches is called or when more than 64 events are
// left unread.
func (p *Pods) WatchPod(ctx context.Context, namespace, name string) (watch.Interface, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.beginLocked(ctx, Watch); err != nil {
		return nil, err
	}
	key := keyOf(namespace, name)
	w := &podWatch{p: p, key: key, ch: make(chan watch.Event, watchBuffer)}
	p.watches[key] = append(p.watches[key], w)
	if pod, ok := p.pods[key]; ok {
		w.sendLocked(watch.Event{Type: watch.Added, Object: pod.DeepCopy()})
	}
	w.stopOnDone = context.AfterFunc(ctx, w.Stop)
	return w, nil
}

// Add stores pods as they are (for a pod left by an earlier run or someone
// else's pod), giving each a UID when it has none. It fails when a name is
// taken.
func (p *Pods) Add(pods ...*v1.Pod) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pod := range pods {
		key := keyOf(pod.Namespace, pod.Name)
		if _, ok := p.pods[key]; ok {
			return fmt.Errorf("recyclertest: pod %s already exists", key)
		}
		p.sendLocked(key, watch.Added, p.storeLocked(pod))
	}
	return nil
}

// SetStatus replaces the pod's status, as the kubelet does, and sends a
// Modified event.
func (p *Pods) SetStatus(namespace, name string, status v1.PodStatus) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := keyOf(namespace, name)
	pod, ok := p.pods[key]
	if !ok {
		return fmt.Errorf("recyclertest: pod %s not found", key)
	}
	pod = pod.DeepCopy()
	pod.Status = *status.DeepCopy()
	p.sendLocked(key, watch.Modified, p.storeLocked(pod))
	return nil
}

// Finish ends the pod in phase (Succeeded or Failed) with reason and
// message.
func (p *Pods) Finish(namespace, name string, phase v1.PodPhase, reason, message string) error {
	return p.SetStatus(namespace, name, v1.PodStatus{Phase: phase, Reason: reason, Message: message})
}

// FinishOnCreate makes every pod created from now on get status right after
// it is created (an Added event, then a Modified one). nil turns it off.
func (p *Pods) FinishOnCreate(status *v1.PodStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finish = status.DeepCopy()
}

// OnCreate makes f be called with a copy of every pod created from now on,
// as CreatePod returns it (without FinishOnCreate's status, which is stored
// by then), on the creating goroutine with no lock held, before CreatePod
// returns; f may call back into p. Tests and benchmarks use it to play an asynchronous kubelet. nil
// turns it off.
func (p *Pods) OnCreate(f func(pod *v1.Pod)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.onCreate = f
}

// Remove deletes the pod as another client would (it is not counted by
// Calls and FailNext does not apply) and sends a Deleted event.
func (p *Pods) Remove(namespace, name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := keyOf(namespace, name)
	pod, ok := p.pods[key]
	if !ok {
		return fmt.Errorf("recyclertest: pod %s not found", key)
	}
	delete(p.pods, key)
	p.sendLocked(key, watch.Deleted, pod)
	return nil
}

// FailNext makes the next call of verb fail with err; calls queue up.
func (p *Pods) FailNext(verb Verb, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults[verb] = append(p.faults[verb], err)
}

// Calls returns how many calls of verb were made, failed ones included.
func (p *Pods) Calls(verb Verb) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[verb]
}

// Pod returns a copy of the stored pod.
func (p *Pods) Pod(namespace, name string) (*v1.Pod, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pod, ok := p.pods[keyOf(namespace, name)]
	if !ok {
		return nil, false
	}
	return pod.DeepCopy(), true
}

// Len returns the number of stored pods.
func (p *Pods) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pods)
}

// Watches returns the number of open watches of the pod.
func (p *Pods) Watches(namespace, name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.watches[keyOf(namespace, name)])
}

// EndWatches closes every open watch of the pod, as an API server ends
// watches, and returns how many it closed.
func (p *Pods) EndWatches(namespace, name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	ws := p.watches[keyOf(namespace, name)]
	n := len(ws)
	for _, w := range ws {
		w.closeLocked()
	}
	return n
}

// SendWatchError sends an Error event carrying status to every open watch
// of the pod (the watches stay open) and returns how many got it.
func (p *Pods) SendWatchError(namespace, name string, status *metav1.Status) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	ws := p.watches[keyOf(namespace, name)]
	for _, w := range ws {
		w.sendLocked(watch.Event{Type: watch.Error, Object: status.DeepCopy()})
	}
	return len(ws)
}

// sendLocked sends a copy of pod to every open watch of key.
func (p *Pods) sendLocked(key types.NamespacedName, t watch.EventType, pod *v1.Pod) {
	// Copy the slice: a full watch removes itself while we range.
	for _, w := range append([]*podWatch(nil), p.watches[key]...) {
		w.sendLocked(watch.Event{Type: t, Object: pod.DeepCopy()})
	}
}

// podWatch is one WatchPod result. Its fields are guarded by p.mu.
type podWatch struct {
	p          *Pods
	key        types.NamespacedName
	ch         chan watch.Event
	closed     bool
	stopOnDone func() bool
}

// Stop ends the watch; it may be called more than once.
func (w *podWatch) Stop() {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	w.closeLocked()
}

// ResultChan returns the event channel, closed when the watch ends.
func (w *podWatch) ResultChan() <-chan watch.Event { return w.ch }

func (w *podWatch) sendLocked(ev watch.Event) {
	if w.closed {
		return
	}
	select {
	case w.ch <- ev:
	default:
		w.closeLocked()
	}
}

func (w *podWatch) closeLocked() {
	if w.closed {
		return
	}
	w.closed = true
	close(w.ch)
	if w.stopOnDone != nil {
		w.stopOnDone()
	}
	ws := w.p.watches[w.key]
	for i, o := range ws {
		if o == w {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(w.p.watches, w.key)
	} else {
		w.p.watches[w.key] = ws
	}
}
