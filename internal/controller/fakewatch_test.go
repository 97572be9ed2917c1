package controller

import (
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/volbind/volbind/binder/bindertest"
)

// newFakeClientset is fake.NewClientset whose watches deliver copies of
// the tracker's objects. For a watch that starts with the existing
// objects (the informers' streaming list), client-go v0.37.2's tracker
// sends the objects it stores, and the informers' transform
// (binder.TrimManagedFields) then writes to objects the tracker reads
// concurrently: a data race -race reports about once in fifteen runs of
// the controller tests, and one a real API server, which decodes a fresh
// object per event, cannot have.
func newFakeClientset(objs ...runtime.Object) *fake.Clientset {
	cs := fake.NewClientset(objs...)
	bindertest.AdvanceVersions(cs) // the Binder orders by version, as on kube-apiserver
	cs.PrependWatchReactor("*", func(action k8stesting.Action) (bool, watch.Interface, error) {
		wa, ok := action.(k8stesting.WatchActionImpl)
		if !ok {
			return false, nil, nil
		}
		w, err := cs.Tracker().Watch(action.GetResource(), action.GetNamespace(), wa.ListOptions)
		if err != nil {
			return false, nil, err
		}
		return true, newCopyingWatch(w), nil
	})
	return cs
}

// copyingWatch passes the events of in on with copies of their objects.
// Unlike watch.Filter, its goroutine also exits when it is stopped while
// nobody reads its events.
type copyingWatch struct {
	in   watch.Interface
	out  chan watch.Event
	stop chan struct{}
	once sync.Once
}

var _ watch.Interface = (*copyingWatch)(nil)

func newCopyingWatch(in watch.Interface) *copyingWatch {
	w := &copyingWatch{in: in, out: make(chan watch.Event), stop: make(chan struct{})}
	go w.loop()
	return w
}

func (w *copyingWatch) loop() {
	defer close(w.out)
	for ev := range w.in.ResultChan() {
		if ev.Object != nil {
			ev.Object = ev.Object.DeepCopyObject()
		}
		select {
		case w.out <- ev:
		case <-w.stop:
			return
		}
	}
}

// ResultChan implements watch.Interface.
func (w *copyingWatch) ResultChan() <-chan watch.Event { return w.out }

// Stop implements watch.Interface; it may be called more than once.
func (w *copyingWatch) Stop() {
	w.once.Do(func() {
		close(w.stop)
		w.in.Stop()
	})
}

// TestFakeClientsetWatchCopies: an object from a watch of newFakeClientset
// may be written to, as the informers' transform does, without changing
// the tracker's.
func TestFakeClientsetWatchCopies(t *testing.T) {
	cs := newFakeClientset(hostPathVolume("pv-1", v1.PersistentVolumeReclaimRetain, v1.VolumeAvailable))
	w, err := cs.CoreV1().PersistentVolumes().Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var ev watch.Event
	select {
	case ev = <-w.ResultChan():
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("no event for the existing volume")
	}
	pv, ok := ev.Object.(*v1.PersistentVolume)
	if !ok {
		t.Fatalf("event %s of a %T, want a volume", ev.Type, ev.Object)
	}
	pv.Labels = map[string]string{"written": "by the watcher"}
	got, err := cs.CoreV1().PersistentVolumes().Get(t.Context(), "pv-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Labels) != 0 {
		t.Errorf("the tracker's volume has labels %v after the watcher wrote to its copy", got.Labels)
	}
}
