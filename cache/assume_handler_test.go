package cache

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	"github.com/volbind/volbind/binder/bindertest"
)

func TestAssumeHandler(t *testing.T) {
	gold5 := newPV("pv1", "gold", "5")
	tests := []struct {
		name  string
		feed  func(h toolscache.ResourceEventHandler)
		want  []string // "key@rv" of every object
		class map[string][]string
	}{
		{
			name: "add and update",
			feed: func(h toolscache.ResourceEventHandler) {
				h.OnAdd(newPV("pv1", "gold", "1"), true)
				h.OnAdd(newPV("pv2", "gold", "2"), false)
				h.OnUpdate(newPV("pv1", "gold", "1"), newPV("pv1", "silver", "3"))
			},
			want:  []string{"pv1@3", "pv2@2"},
			class: map[string][]string{"gold": {"pv2@2"}, "silver": {"pv1@3"}},
		},
		{
			name: "delete",
			feed: func(h toolscache.ResourceEventHandler) {
				h.OnAdd(gold5, true)
				h.OnAdd(newPV("pv2", "gold", "2"), false)
				h.OnDelete(gold5)
			},
			want:  []string{"pv2@2"},
			class: map[string][]string{"gold": {"pv2@2"}},
		},
		{
			name: "DeletedFinalStateUnknown",
			feed: func(h toolscache.ResourceEventHandler) {
				h.OnAdd(gold5, true)
				h.OnAdd(newPV("pv2", "gold", "2"), false)
				h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "pv1", Obj: gold5})
			},
			want:  []string{"pv2@2"},
			class: map[string][]string{"gold": {"pv2@2"}},
		},
		{
			name: "DeletedFinalStateUnknown pointer without object",
			feed: func(h toolscache.ResourceEventHandler) {
				h.OnAdd(gold5, true)
				h.OnDelete(&toolscache.DeletedFinalStateUnknown{Key: "pv1"})
			},
			class: map[string][]string{"gold": nil},
		},
		{
			name: "wrong types and nils ignored",
			feed: func(h toolscache.ResourceEventHandler) {
				h.OnAdd(gold5, true)
				h.OnAdd(newPVC("ns", "c", "1"), false)
				h.OnAdd(nil, false)
				h.OnAdd((*v1.PersistentVolume)(nil), false)
				h.OnUpdate(nil, "pv1")
				h.OnDelete(newPVC("", "pv1", "1"))
				h.OnDelete(nil)
				h.OnDelete((*v1.PersistentVolume)(nil))
				h.OnDelete((*toolscache.DeletedFinalStateUnknown)(nil))
			},
			want:  []string{"pv1@5"},
			class: map[string][]string{"gold": {"pv1@5"}},
		},
		{
			name: "assumption survives a stale informer event",
			feed: func(h toolscache.ResourceEventHandler) {
				c := h.(*Assume[*v1.PersistentVolume])
				h.OnAdd(gold5, true)
				if err := c.Assume(newPV("pv1", "silver", "9")); err != nil {
					t.Errorf("Assume = %v", err)
				}
				h.OnUpdate(gold5, newPV("pv1", "gold", "6"))
			},
			want:  []string{"pv1@9"},
			class: map[string][]string{"gold": nil, "silver": {"pv1@9"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewAssume(AssumeConfig[*v1.PersistentVolume]{
				Description: "PersistentVolume",
				Logger:      ktesting.NewLogger(t, ktesting.NewConfig()),
			})
			tc.feed(c)
			if diff := cmp.Diff(tc.want, nilIfEmpty(describe(all(c)))); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
			for class, want := range tc.class {
				if diff := cmp.Diff(want, nilIfEmpty(describe(ofClass(c, class)))); diff != "" {
					t.Errorf("List(%q) (-want +got):\n%s", class, diff)
				}
			}
			checkTable(t, c)
		})
	}
}

// TestAssumeOnSharedInformer registers the cache on a real client-go
// SharedIndexInformer that lists and watches the in-memory API server of
// binder/bindertest (real resourceVersions, ordered watch events).
func TestAssumeOnSharedInformer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), wait.ForeverTestTimeout)
	defer cancel()
	srv := bindertest.New()
	for _, pv := range []*v1.PersistentVolume{newPV("pv1", "gold", ""), newPV("pv2", "gold", "")} {
		if _, err := srv.CreateVolume(ctx, pv); err != nil {
			t.Fatalf("CreateVolume: %v", err)
		}
	}
	informer := toolscache.NewSharedIndexInformer(srv.ListWatch(bindertest.KindVolume), &v1.PersistentVolume{}, 0, toolscache.Indexers{})
	c := newPVCache()
	if _, err := informer.AddEventHandler(c); err != nil {
		t.Fatalf("AddEventHandler: %v", err)
	}
	informerCtx, stopInformer := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); informer.RunWithContext(informerCtx) }()
	defer func() { stopInformer(); <-done }()
	if !toolscache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		t.Fatal("informer did not sync")
	}

	waitFor := func(what string, cond func() bool) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true,
			func(context.Context) (bool, error) { return cond(), nil })
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
	waitFor("initial list", func() bool { return length(c) == 2 })

	// Our own write: assume the server's answer before the informer has it.
	old, _ := c.Get("pv1")
	next := old.DeepCopy()
	next.Spec.StorageClassName = "silver"
	written, err := srv.UpdateVolume(ctx, next)
	if err != nil {
		t.Fatalf("UpdateVolume: %v", err)
	}
	// The informer may already have delivered the written version: an
	// Assume of an equal version is accepted either way.
	if err := c.Assume(written); err != nil {
		t.Fatalf("Assume: %v", err)
	}
	waitFor("informer to catch up", func() bool {
		got, ok := c.GetAPIObj("pv1")
		return ok && got.ResourceVersion == written.ResourceVersion
	})
	if got, _ := c.Get("pv1"); got.Spec.StorageClassName != "silver" {
		t.Errorf("Get(pv1) class = %q, want silver", got.Spec.StorageClassName)
	}

	if err := srv.DeleteVolume(ctx, "pv2"); err != nil {
		t.Fatalf("DeleteVolume: %v", err)
	}
	waitFor("delete", func() bool { _, ok := c.Get("pv2"); return !ok })
	if diff := cmp.Diff([]string{"pv1@" + written.ResourceVersion}, describe(ofClass(c, "silver"))); diff != "" {
		t.Errorf("List(silver) (-want +got):\n%s", diff)
	}
	if got := ofClass(c, "gold"); len(got) != 0 {
		t.Errorf("List(gold) = %v, want none", describe(got))
	}
	for i := range 20 {
		if _, err := srv.CreateVolume(ctx, newPV(pvName(i), "bronze", "")); err != nil {
			t.Fatalf("CreateVolume: %v", err)
		}
	}
	waitFor("creates", func() bool { return len(ofClass(c, "bronze")) == 20 })
	checkTable(t, c)
}
