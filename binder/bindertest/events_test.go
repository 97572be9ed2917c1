package bindertest_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/volbind/volbind/binder/bindertest"
)

// recorder records handler calls as strings.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) add(format string, args ...any) {
	r.mu.Lock()
	r.calls = append(r.calls, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

func (r *recorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

func (r *recorder) handler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			o := obj.(metav1.Object)
			r.add("add %s initial=%v", o.GetName(), initial)
		},
		UpdateFunc: func(old, obj any) {
			o, n := old.(*v1.PersistentVolume), obj.(*v1.PersistentVolume)
			r.add("update %s %s->%s deleting=%v", n.Name, o.Status.Phase, n.Status.Phase, n.DeletionTimestamp != nil)
		},
		DeleteFunc: func(obj any) {
			r.add("delete %s", obj.(metav1.Object).GetName())
		},
	}
}

func TestEventHandlerSequence(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t)
	if err := s.Seed(ctx, newVolume("pv-b", "1Gi"), newVolume("pv-a", "1Gi")); err != nil {
		t.Fatalf("Seed = %v", err)
	}
	var r recorder
	remove := s.AddEventHandler(bindertest.KindVolume, r.handler())
	pv := mustCreateVolume(t, s, newVolume("pv-c", "1Gi"))
	pv.Status.Phase = v1.VolumeAvailable
	if _, err := s.UpdateVolumeStatus(ctx, pv); err != nil {
		t.Fatalf("UpdateVolumeStatus = %v", err)
	}
	fin := newVolume("pv-f", "1Gi")
	fin.Finalizers = []string{"example.com/f"}
	mustCreateVolume(t, s, fin)
	for _, name := range []string{"pv-c", "pv-f"} {
		if err := s.DeleteVolume(ctx, name); err != nil {
			t.Fatalf("DeleteVolume(%s) = %v", name, err)
		}
	}
	mustCreateClaim(t, s, newClaim("ns", "c", "1Gi")) // other kind: not seen
	remove()
	mustCreateVolume(t, s, newVolume("pv-late", "1Gi")) // after remove: not seen
	want := []string{
		"add pv-a initial=true",
		"add pv-b initial=true",
		"add pv-c initial=false",
		"update pv-c Pending->Available deleting=false",
		"add pv-f initial=false",
		"delete pv-c",
		"update pv-f Pending->Pending deleting=true",
	}
	if diff := cmp.Diff(want, r.get()); diff != "" {
		t.Errorf("handler calls (-want +got):\n%s", diff)
	}
}

// TestEventOrderConcurrentWriters checks that each handler sees every
// event once, one call at a time, in resourceVersion order, while several
// goroutines write.
func TestEventOrderConcurrentWriters(t *testing.T) {
	const writers, perWriter = 4, 200
	ctx := context.Background()
	s, _ := newServer(t)
	type seen struct {
		mu      sync.Mutex
		rvs     []uint64
		running int
		overlap bool
	}
	handlers := make([]*seen, 3)
	for i := range handlers {
		h := &seen{}
		handlers[i] = h
		record := func(obj any) {
			h.mu.Lock()
			h.running++
			if h.running > 1 {
				h.overlap = true
			}
			h.rvs = append(h.rvs, rvOf(t, obj.(metav1.Object)))
			h.running--
			h.mu.Unlock()
		}
		s.AddEventHandler(bindertest.KindVolume, toolscache.ResourceEventHandlerDetailedFuncs{
			AddFunc:    func(obj any, _ bool) { record(obj) },
			UpdateFunc: func(_, obj any) { record(obj) },
			DeleteFunc: record,
		})
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				pv, err := s.CreateVolume(ctx, newVolume(fmt.Sprintf("pv-%d-%d", w, i), "1Gi"))
				if err != nil {
					t.Errorf("CreateVolume = %v", err)
					return
				}
				pv.Status.Phase = v1.VolumeAvailable
				if _, err := s.UpdateVolumeStatus(ctx, pv); err != nil {
					t.Errorf("UpdateVolumeStatus = %v", err)
				}
				if i%2 == 0 {
					if err := s.DeleteVolume(ctx, pv.Name); err != nil {
						t.Errorf("DeleteVolume = %v", err)
					}
				}
			}
		})
	}
	wg.Wait()
	// No write is in progress: every event has been delivered.
	wantN := writers * perWriter * 5 / 2
	for i, h := range handlers {
		h.mu.Lock()
		if len(h.rvs) != wantN {
			t.Errorf("handler %d saw %d events, want %d", i, len(h.rvs), wantN)
		}
		for j := 1; j < len(h.rvs); j++ {
			if h.rvs[j] != h.rvs[j-1]+1 {
				t.Errorf("handler %d: event %d has resourceVersion %d after %d, want consecutive", i, j, h.rvs[j], h.rvs[j-1])
				break
			}
		}
		if h.overlap {
			t.Errorf("handler %d was called concurrently", i)
		}
		h.mu.Unlock()
	}
}

// TestReentrantHandler checks that handlers may write to the Server and
// that the events of those writes follow the current event for every
// handler.
func TestReentrantHandler(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t)
	var first, second recorder
	// The first handler marks every new volume Available.
	s.AddEventHandler(bindertest.KindVolume, toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, _ bool) {
			pv := obj.(*v1.PersistentVolume).DeepCopy()
			first.add("add %s", pv.Name)
			pv.Status.Phase = v1.VolumeAvailable
			if _, err := s.UpdateVolumeStatus(ctx, pv); err != nil {
				t.Errorf("UpdateVolumeStatus from a handler = %v", err)
			}
			// Reads re-enter too.
			if _, err := s.GetVolume(ctx, pv.Name); err != nil {
				t.Errorf("GetVolume from a handler = %v", err)
			}
		},
		UpdateFunc: func(_, obj any) { first.add("update %s", obj.(*v1.PersistentVolume).Status.Phase) },
	})
	s.AddEventHandler(bindertest.KindVolume, second.handler())
	mustCreateVolume(t, s, newVolume("pv1", "1Gi"))
	if diff := cmp.Diff([]string{"add pv1", "update Available"}, first.get()); diff != "" {
		t.Errorf("first handler (-want +got):\n%s", diff)
	}
	want := []string{"add pv1 initial=false", "update pv1 Pending->Available deleting=false"}
	if diff := cmp.Diff(want, second.get()); diff != "" {
		t.Errorf("second handler (-want +got):\n%s", diff)
	}
	// A handler added from a handler gets its replay in order too.
	var late recorder
	s.AddEventHandler(bindertest.KindClaim, toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(any, bool) { s.AddEventHandler(bindertest.KindVolume, late.handler()) },
	})
	mustCreateClaim(t, s, newClaim("ns", "c1", "1Gi"))
	if diff := cmp.Diff([]string{"add pv1 initial=true"}, late.get()); diff != "" {
		t.Errorf("handler added by a handler (-want +got):\n%s", diff)
	}
}

func TestAddEventHandlerInvalid(t *testing.T) {
	s, _ := newServer(t)
	var r recorder
	remove := s.AddEventHandler(bindertest.Kind(0), r.handler())
	mustCreateVolume(t, s, newVolume("pv", "1Gi"))
	remove()
	s.AddEventHandler(bindertest.KindVolume, nil)() // nil handler: nothing to call
	mustCreateVolume(t, s, newVolume("pv2", "1Gi"))
	if got := r.get(); len(got) != 0 {
		t.Errorf("handler of an invalid kind got %v, want nothing", got)
	}
}
