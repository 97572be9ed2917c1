package bindertest_test

import (
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/volbind/volbind/binder/bindertest"
)

// TestAdvanceVersions checks that the fake clientset, once versioned,
// answers every create and update with a newer resourceVersion than any
// before, refuses a stale update with a Conflict, leaves the caller's
// object alone, and delivers the stored version in its watch events.
func TestAdvanceVersions(t *testing.T) {
	ctx := t.Context()
	seeded := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "seeded", ResourceVersion: "7"}}
	cs := fake.NewClientset(seeded)
	bindertest.AdvanceVersions(cs)
	pvs := cs.CoreV1().PersistentVolumes()
	w, err := pvs.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	if err := pvs.Delete(ctx, "seeded", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	created, err := pvs.Create(ctx, &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "seeded"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.ResourceVersion != "8" {
		t.Errorf("re-created resourceVersion = %q, want 8 (after the deleted 7)", created.ResourceVersion)
	}
	sent := created.DeepCopy()
	sent.Labels = map[string]string{"a": "b"}
	updated, err := pvs.Update(ctx, sent, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if updated.ResourceVersion != "9" || sent.ResourceVersion != "8" {
		t.Errorf("update answered %q and left the sent object at %q, want 9 and 8", updated.ResourceVersion, sent.ResourceVersion)
	}
	status := updated.DeepCopy()
	status.Status.Phase = v1.VolumeAvailable
	if got, err := pvs.UpdateStatus(ctx, status, metav1.UpdateOptions{}); err != nil || got.ResourceVersion != "10" {
		t.Errorf("status update = %v, %v; want resourceVersion 10", got.GetResourceVersion(), err)
	}
	if _, err := pvs.Update(ctx, sent, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("update at the stale version 8 = %v, want a Conflict", err)
	}
	unconditional := updated.DeepCopy()
	unconditional.ResourceVersion = ""
	if got, err := pvs.Update(ctx, unconditional, metav1.UpdateOptions{}); err != nil || got.ResourceVersion != "11" {
		t.Errorf("unconditional update = %v, %v; want resourceVersion 11", got.GetResourceVersion(), err)
	}

	var seen []string
	for len(seen) < 6 {
		var ev watch.Event
		select {
		case ev = <-w.ResultChan():
		case <-time.After(wait.ForeverTestTimeout):
			t.Fatalf("watch events %v, then none for %v", seen, wait.ForeverTestTimeout)
		}
		if ev.Type == watch.Error {
			t.Fatalf("watch error: %v", ev.Object)
		}
		seen = append(seen, string(ev.Type)+" "+ev.Object.(*v1.PersistentVolume).ResourceVersion)
	}
	// The fake's watch starts with the stored objects, as ADDED.
	if want := []string{"ADDED 7", "DELETED 7", "ADDED 8", "MODIFIED 9", "MODIFIED 10", "MODIFIED 11"}; !slices.Equal(seen, want) {
		t.Errorf("watch versions = %v, want %v", seen, want)
	}
}
