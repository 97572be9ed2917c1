package bindertest_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"
)

func TestPods(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t)
	pod, err := s.CreatePod(ctx, newPod("default", "recycler-for-pv1"))
	if err != nil {
		t.Fatalf("CreatePod = %v", err)
	}
	if pod.Status.Phase != v1.PodPending || pod.UID == "" {
		t.Errorf("created pod phase %s uid %q, want Pending and a uid", pod.Status.Phase, pod.UID)
	}
	if _, err := s.CreatePod(ctx, newPod("default", "recycler-for-pv1")); !apierrors.IsAlreadyExists(err) {
		t.Errorf("CreatePod with a taken name = %v, want AlreadyExists", err)
	}
	if _, err := s.CreatePod(ctx, newPod("default", "other")); err != nil {
		t.Fatalf("CreatePod(other) = %v", err)
	}
	w, err := s.WatchPod(ctx, "default", "recycler-for-pv1")
	if err != nil {
		t.Fatalf("WatchPod = %v", err)
	}
	defer w.Stop()
	other, _ := s.GetPod(ctx, "default", "other")
	other.Status.Phase = v1.PodRunning
	if _, err := s.UpdatePodStatus(ctx, other); err != nil { // not watched
		t.Fatalf("UpdatePodStatus(other) = %v", err)
	}
	pod.Status.Phase = v1.PodSucceeded
	pod.Spec.ActiveDeadlineSeconds = new(int64) // ignored by a status update
	if _, err := s.UpdatePodStatus(ctx, pod); err != nil {
		t.Fatalf("UpdatePodStatus = %v", err)
	}
	got, err := s.GetPod(ctx, "default", "recycler-for-pv1")
	if err != nil {
		t.Fatalf("GetPod = %v", err)
	}
	if got.Status.Phase != v1.PodSucceeded || got.Spec.ActiveDeadlineSeconds != nil {
		t.Errorf("pod after status update: phase %s deadline %v, want Succeeded and no deadline", got.Status.Phase, got.Spec.ActiveDeadlineSeconds)
	}
	if err := s.DeletePod(ctx, "default", "recycler-for-pv1"); err != nil {
		t.Fatalf("DeletePod = %v", err)
	}
	if err := s.DeletePod(ctx, "default", "recycler-for-pv1"); !apierrors.IsNotFound(err) {
		t.Errorf("second DeletePod = %v, want NotFound", err)
	}
	if _, err := s.GetPod(ctx, "default", "recycler-for-pv1"); !apierrors.IsNotFound(err) {
		t.Errorf("GetPod after delete = %v, want NotFound", err)
	}
	var gotEvents []string
	for range 3 {
		e := next(t, w)
		gotEvents = append(gotEvents, string(e.Type)+" "+string(e.Object.(*v1.Pod).Status.Phase))
	}
	want := []string{string(watch.Added) + " Pending", string(watch.Modified) + " Succeeded", string(watch.Deleted) + " Succeeded"}
	if diff := cmp.Diff(want, gotEvents); diff != "" {
		t.Errorf("WatchPod events (-want +got):\n%s", diff)
	}
	if n := len(s.Pods()); n != 1 {
		t.Errorf("Pods() has %d pods, want 1", n)
	}
}
