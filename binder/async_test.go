package binder

import (
	"context"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/volbind/volbind/binder/bindertest"
)

// heldEvents sits between a bindertest.Server and a Binder's handlers and
// holds every event until flush, so that events arrive after the write
// that caused them has returned, as informers deliver them. Once direct is
// set, events pass straight through.
type heldEvents struct {
	mu      sync.Mutex
	pending []func()
	direct  bool
}

// register subscribes b's handlers to srv through h.
func (h *heldEvents) register(t testing.TB, srv *bindertest.Server, b *Binder) {
	t.Helper()
	for kind, to := range map[bindertest.Kind]toolscache.ResourceEventHandler{
		bindertest.KindStorageClass: b.ClassHandler(), bindertest.KindVolume: b.VolumeHandler(), bindertest.KindClaim: b.ClaimHandler(),
	} {
		t.Cleanup(srv.AddEventHandler(kind, toolscache.ResourceEventHandlerDetailedFuncs{
			AddFunc:    func(obj any, initial bool) { h.push(func() { to.OnAdd(obj, initial) }) },
			UpdateFunc: func(old, obj any) { h.push(func() { to.OnUpdate(old, obj) }) },
			DeleteFunc: func(obj any) { h.push(func() { to.OnDelete(obj) }) },
		}))
	}
}

func (h *heldEvents) push(deliver func()) {
	h.mu.Lock()
	if !h.direct {
		h.pending = append(h.pending, deliver)
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	deliver()
}

// flush delivers the held events in order; with passThrough, later events
// are delivered as they come.
func (h *heldEvents) flush(passThrough bool) {
	for {
		h.mu.Lock()
		batch := h.pending
		h.pending = nil
		if len(batch) == 0 {
			h.direct = passThrough
			h.mu.Unlock()
			return
		}
		h.mu.Unlock()
		for _, d := range batch {
			d()
		}
	}
}

// countingRecycler is a VolumeRecycler that counts its scrubs and runs
// onRecycle inside each.
type countingRecycler struct {
	mu        sync.Mutex
	scrubbed  []string
	onRecycle func(n int)
}

var _ VolumeRecycler = (*countingRecycler)(nil)

func (r *countingRecycler) Recycle(_ context.Context, pv *v1.PersistentVolume) error {
	r.mu.Lock()
	r.scrubbed = append(r.scrubbed, pv.Name)
	n := len(r.scrubbed)
	r.mu.Unlock()
	if r.onRecycle != nil {
		r.onRecycle(n)
	}
	return nil
}

func (r *countingRecycler) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.scrubbed)
}
