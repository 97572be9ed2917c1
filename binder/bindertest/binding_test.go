package bindertest_test

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/volbind/volbind/binder/bindertest"
)

func TestBindPod(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t)
	pod, err := s.CreatePod(ctx, newPod("default", "web-0"))
	if err != nil {
		t.Fatalf("CreatePod = %v", err)
	}
	var updates int
	defer s.AddEventHandler(bindertest.KindPod, toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) {
			if obj.(*v1.Pod).Spec.NodeName == "node-a" {
				updates++
			}
		},
	})()
	s.ResetStats()
	stale := &v1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-0", UID: "other"}, Target: v1.ObjectReference{Name: "node-a"}}
	if err := s.BindPod(ctx, stale); !apierrors.IsConflict(err) {
		t.Errorf("BindPod with another uid = %v, want Conflict", err)
	}
	b := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-0", UID: pod.UID, Annotations: map[string]string{"a": "b"}},
		Target:     v1.ObjectReference{Kind: "Node", Name: "node-a"},
	}
	if err := s.BindPod(ctx, b); err != nil {
		t.Fatalf("BindPod = %v", err)
	}
	got, err := s.GetPod(ctx, "default", "web-0")
	if err != nil {
		t.Fatalf("GetPod = %v", err)
	}
	if got.Spec.NodeName != "node-a" || got.Annotations["a"] != "b" || got.ResourceVersion == pod.ResourceVersion {
		t.Errorf("bound pod: node %q annotations %v rv %s (was %s), want node-a, a=b and a new rv", got.Spec.NodeName, got.Annotations, got.ResourceVersion, pod.ResourceVersion)
	}
	if len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Type != v1.PodScheduled || got.Status.Conditions[0].Status != v1.ConditionTrue {
		t.Errorf("bound pod conditions = %+v, want PodScheduled True", got.Status.Conditions)
	}
	if updates != 1 {
		t.Errorf("handler saw %d updates to node-a, want 1", updates)
	}
	b.Target.Name = "node-b"
	if err := s.BindPod(ctx, b); !apierrors.IsConflict(err) {
		t.Errorf("second BindPod = %v, want Conflict (already assigned)", err)
	}
	if err := s.BindPod(ctx, &v1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "missing"}, Target: v1.ObjectReference{Name: "node-a"}}); !apierrors.IsNotFound(err) {
		t.Errorf("BindPod of a missing pod = %v, want NotFound", err)
	}
	if err := s.BindPod(ctx, &v1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-0"}}); !apierrors.IsBadRequest(err) {
		t.Errorf("BindPod without a target = %v, want BadRequest", err)
	}
	if n := s.Stats().Writes[bindertest.KindPod][bindertest.VerbCreate]; n != 4 {
		t.Errorf("pod creates counted = %d, want 4 (the bindings but the bad request)", n)
	}
}
